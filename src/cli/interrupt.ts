import { EXIT_INTERRUPTED } from "../errors.js";

/**
 * Ctrl-C (SIGINT) while `run`'s program runs: one line on stderr and the shell's exit code for it
 * (128 + 2), instead of Node's silent default. The program runs in this process, on native
 * threads: ending the process ends them too.
 *
 * Only while this thread waits for native work: a JavaScript listener runs when the event loop
 * is free, so around synchronous JavaScript work (sim, dump, walk) it would keep Ctrl-C from
 * stopping anything until the work ended. There the default stays (the process ends at once, exit
 * 130 as the shell reports it, no line). While a tool runs (opt, llc, gcc: a compile, a first-use
 * build) runTool outlives the signal and the tool, killed by the same Ctrl-C, is reported as an
 * interrupt by describeFailure: `rootwalk ...: interrupted`, exit 130; a Ctrl-C that reached no
 * tool is raised again when the loop turns (src/toolchain/held-interrupt.ts), so a build's
 * Ctrl-C lands here once the program starts. The exit code is src/errors.ts EXIT_INTERRUPTED.
 */

/** Reports an interrupt until the returned function is called. */
export function reportInterruptsWhile(command: string, write: (text: string) => void): () => void {
  const onInterrupt = (): void => {
    write(`${command}: interrupted\n`);
    void exitNow(EXIT_INTERRUPTED);
  };
  process.once("SIGINT", onInterrupt);
  return () => process.off("SIGINT", onInterrupt);
}

/**
 * Ends the process at once with libc's `_exit`. process.exit would hang while `run`'s program
 * still runs: exit() runs libuv's threadpool destructor, which joins the pool thread that waits
 * in rw_run_main for rw_main, which may never return (a thread spinning without a safepoint).
 * Everything rootwalk printed is already written (stdout and stderr are synchronous on Linux for
 * files, pipes and terminals).
 */
async function exitNow(code: number): Promise<void> {
  try {
    const koffi = (await import("koffi")).default;
    koffi.load("libc.so.6").func("void _exit(int)")(code);
  } catch {
    // no koffi or no libc.so.6: the ordinary exit below
  }
  process.exit(code);
}
