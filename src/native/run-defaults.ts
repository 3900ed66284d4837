/**
 * Defaults of the native runtime's options, in a leaf module the command line can import
 * without loading koffi.
 */

/** The safepoint watchdog: how long a collection waits for running threads (runtime.c). */
export const DEFAULT_SAFEPOINT_TIMEOUT_MS = 10_000;
