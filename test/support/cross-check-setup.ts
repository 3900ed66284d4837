import { setCrossCheckDefault } from "../../walker/scan-cross-check.js";

/*
 * Every test file starts with this (vitest.config.ts setupFiles): every stack a test scans
 * (StackRootScanner) or walks (walkStack) in this process is also walked by the other path and
 * must agree (walker/scan-cross-check.ts). Child processes the tests start (`rootwalk run`,
 * the CLI) turn it on from ROOTWALK_SCAN_CROSSCHECK=1, which vitest.config.ts also sets.
 */
setCrossCheckDefault(true);
