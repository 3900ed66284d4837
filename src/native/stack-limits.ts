import { InvalidArgumentError } from "../errors.js";
import { SCAN_MEMORY_BYTES } from "../memory/scan-memory.js";

/*
 * How much of the scan memory the native runtime's thread stacks may take, and the check of
 * `rootwalk run --stack/--thread-stack/--threads` against it. A leaf: the command line checks its
 * options with it before loading koffi or making the memory.
 *
 * Every managed thread runs on a stack placed in the scan memory (thread-stacks.ts), a 32-bit
 * WebAssembly memory of 4 GiB made at its final size. One region per stack: a guard of
 * GUARD_BYTES (PROT_NONE, runtime.h RW_GUARD_BYTES) and the stack above it, in whole pages. All
 * regions (rw_main's and `threads` of gc_thread_start's, reserved up front) fit in
 * STACKS_MAX_BYTES; the rest stays for the scan kernel's table, recipes and output. The heap is
 * not in the scan memory (native memory, rw_heap_reserve): `--heap` does not count here.
 */

/**
 * The guard below each stack: 64 KiB whatever the page size (16 pages of 4 KiB, 4 of 16 KiB, 1 of
 * 64 KiB; whole pages on every kernel STACK_ALIGN_BYTES allows, as mprotect needs), so a frame up
 * to 64 KiB that overflows lands in it.
 */
export const GUARD_BYTES = 64 * 1024;
/**
 * Where stack regions start and how their sizes round: 64 KiB, the largest page size of Linux on
 * the machines rootwalk runs on (x86-64 4 KiB; AArch64 4, 16 or 64 KiB, as the kernel was
 * built), since the guard's mprotect needs a page-aligned start. Relative to the scan memory,
 * whose base the kernel maps page-aligned.
 */
export const STACK_ALIGN_BYTES = 64 * 1024;
/** The part of the scan memory the stacks leave to the scan kernel (tables, recipes, output). */
export const SCAN_MEMORY_KEPT_BYTES = 512 * 2 ** 20;
/** The most all stack regions together may take. */
export const STACKS_MAX_BYTES = SCAN_MEMORY_BYTES - SCAN_MEMORY_KEPT_BYTES;
/** The least a stack may be: glibc keeps its thread record and TLS (about 5 KB) at its top. */
export const MIN_STACK_BYTES = 128 * 1024;

/** Records in rw_threads (runtime.h RW_MAX_THREADS): threads started in one run, rw_main's included. */
export const MAX_THREADS = 1024;

/** The stacks of one run: rw_main's, and `threads` regions of `threadStackBytes` for gc_thread_start. */
export interface StackPlan {
  mainStackBytes: number;
  threadStackBytes: number;
  /** gc_thread_start threads alive at once (started and not yet joined). */
  threads: number;
}

/** One region of the scan memory for a stack of `stackBytes`: the guard, then the stack in whole STACK_ALIGN_BYTES. */
export function stackRegionBytes(stackBytes: number): number {
  return GUARD_BYTES + Math.ceil(stackBytes / STACK_ALIGN_BYTES) * STACK_ALIGN_BYTES;
}

/** "1G", "64M", "512K" or "5.5G": a size the way the options spell it. */
export function sizeText(bytes: number): string {
  for (const [unit, size] of [
    ["G", 2 ** 30],
    ["M", 2 ** 20],
    ["K", 2 ** 10],
  ] as const) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(bytes % size === 0 ? 0 : 1))}${unit}`;
  }
  return String(bytes);
}

const SCAN_MEMORY_TEXT = `the 4 GiB scan memory (a 32-bit WebAssembly memory; ${sizeText(STACKS_MAX_BYTES)} of it for stacks)`;

/**
 * Refuses a plan whose stacks do not fit the scan memory, naming the option, its value and the
 * scan memory (InvalidArgumentError: exit 1 on the command line).
 */
export function checkStackPlan(plan: StackPlan): void {
  for (const [option, bytes] of [
    ["--stack", plan.mainStackBytes],
    ["--thread-stack", plan.threadStackBytes],
  ] as const) {
    if (!Number.isSafeInteger(bytes) || bytes < MIN_STACK_BYTES || stackRegionBytes(bytes) > STACKS_MAX_BYTES) {
      throw new InvalidArgumentError(
        option,
        sizeText(bytes),
        `a stack from ${sizeText(MIN_STACK_BYTES)} to ${sizeText(STACKS_MAX_BYTES - GUARD_BYTES)}: every stack lives in ${SCAN_MEMORY_TEXT}`,
      );
    }
  }
  const main = stackRegionBytes(plan.mainStackBytes);
  const each = stackRegionBytes(plan.threadStackBytes);
  const most = Math.min(MAX_THREADS - 1, Math.floor((STACKS_MAX_BYTES - main) / each));
  if (!Number.isSafeInteger(plan.threads) || plan.threads < 0 || plan.threads > most) {
    const total = main + plan.threads * each;
    throw new InvalidArgumentError(
      "--threads",
      `${plan.threads} threads of --thread-stack ${sizeText(plan.threadStackBytes)} with --stack ${sizeText(plan.mainStackBytes)} (${sizeText(total)} of stacks and guards)`,
      `stacks that fit ${SCAN_MEMORY_TEXT}: at most ${most} threads of ${sizeText(plan.threadStackBytes)}, or a smaller --thread-stack or --stack`,
    );
  }
}
