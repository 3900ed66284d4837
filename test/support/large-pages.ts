import { existsSync, mkdirSync, readFileSync, renameSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { AARCH64 } from "../../src/arch/aarch64.js";
import { cacheKey, repoRoot, runTool } from "../../src/toolchain/llvm-toolchain.js";

/*
 * An AArch64 Linux kernel built with 64 KiB pages (as some Arm server distributions ship it), as
 * far as `rootwalk run` can tell under qemu-user: `qemu-aarch64 -p 65536` makes the guest see 64
 * KiB pages, and strict-mprotect.c (preloaded into the guest) refuses an mprotect whose start is
 * not aligned to them, which qemu itself does not (it checks 4 KiB). Page faults, signal delivery
 * and everything else stay qemu's.
 */

export const LARGE_PAGE_BYTES = 65536;
const SOURCE = join(dirname(fileURLToPath(import.meta.url)), "strict-mprotect.c");

/** The qemu-aarch64 options that emulate 64 KiB pages (the library built on first use). */
export function largePageQemuFlags(): string[] {
  const source = readFileSync(SOURCE);
  const library = join(repoRoot(), ".cache", "aarch64", `strict-mprotect-${cacheKey(["strict-mprotect/v1", source]).slice(0, 16)}.so`);
  if (!existsSync(library)) {
    mkdirSync(dirname(library), { recursive: true });
    const temp = `${library}.tmp-${process.pid}`;
    runTool(`${AARCH64.linuxTriple}-gcc`, ["-O2", "-shared", "-fPIC", SOURCE, "-o", temp, "-ldl"]);
    renameSync(temp, library);
  }
  return ["-p", String(LARGE_PAGE_BYTES), "-E", `LD_PRELOAD=${library}`];
}
