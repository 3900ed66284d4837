import { CROSS_CHECK_TEST_HOOK } from "../../walker/scan-cross-check.js";

/*
 * Every test file starts with this (vitest.config.ts setupFiles): every stack a test scans
 * (StackRootScanner) or walks (walkStack) in this process is also walked by the other path and
 * must agree (walker/scan-cross-check.ts): the scanners and walks it builds with no `crossCheck`
 * option, and those of the commands it runs in-process (runCli, runCommand, runSimulation), through
 * the module's test hook. Child processes the tests start (`rootwalk run`, the CLI) are told by
 * ROOTWALK_SCAN_CROSSCHECK=1, which vitest.config.ts sets and their entries pass down.
 */
CROSS_CHECK_TEST_HOOK.everyScan = true;
