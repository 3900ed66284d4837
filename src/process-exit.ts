/*
 * How the rootwalk process ends at once, when its output has nowhere to go (a reader that closed
 * early, a failed write: src/cli/process-io.ts).
 *
 * process.exit() joins libuv's thread pool first. During `rootwalk run` a pool thread waits in
 * rw_run_main for the program's threads, and a program thread may wait for a JavaScript callback
 * that the exiting main thread will never run: process.exit() would hang there for ever. So the
 * native runtime, once loaded, installs its rw_exit_now (`_exit`: no thread joined) here; every
 * other command keeps process.exit.
 */

let exitNow: (code: number) => void = (code) => process.exit(code);

/** Replaces how exitImmediately ends the process (the native runtime's `_exit`). */
export function setImmediateExit(exit: (code: number) => void): void {
  exitNow = exit;
}

/** Ends the process with `code` now, without waiting for pending output or threads. */
export function exitImmediately(code: number): never {
  exitNow(code);
  return process.exit(code);
}
