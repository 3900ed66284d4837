/**
 * Defaults of the native runtime's options, in a leaf module the command line can import
 * without loading koffi.
 */

/** The safepoint watchdog: how long a collection waits for running threads (runtime.c). */
export const DEFAULT_SAFEPOINT_TIMEOUT_MS = 10_000;

/** rw_main's stack (`--stack`), in the scan memory (stack-limits.ts). */
export const DEFAULT_MAIN_STACK_BYTES = 2 ** 30;
/** Each gc_thread_start thread's stack (`--thread-stack`). */
export const DEFAULT_THREAD_STACK_BYTES = 64 * 2 ** 20;
/** gc_thread_start threads alive at once (`--threads`): their stacks are reserved up front. */
export const DEFAULT_THREADS = 32;
