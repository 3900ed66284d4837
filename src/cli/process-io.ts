import { writeSync } from "node:fs";
import { EXIT_RUNTIME_FAILURE, describeFailure } from "../errors.js";
import { exitImmediately } from "../process-exit.js";

/*
 * The rootwalk process's own stdout and stderr, and how it ends.
 *
 * Node writes to a pipe asynchronously once the pipe is full (64 KiB on Linux): the rest of a
 * large write waits in the stream's queue, and process.exit() drops that queue. So no command
 * ends by process.exit() while output is pending: exitAfterOutput() records the exit code and
 * exits only when both streams have handed everything to the kernel (a write's callback runs
 * after every earlier write). Memory while a slow reader catches up is what the command wrote.
 *
 * A reader that closes early (`rootwalk dump X | head -1`) makes the next write fail with EPIPE:
 * the command has nobody to tell anything to, so it ends at once, quietly (no message, no stack)
 * and with exit code 0, the reader having taken all it wanted.
 */

/** Where a command writes: the process's streams, or a test's strings. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export const PROCESS_IO: CliIo = { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) };

/**
 * A closed reader of stdout or stderr ends the process quietly (see above); any other failure to
 * write (a full disk under a redirection) is one line and exit 3. Once per process.
 */
export function endQuietlyWhenReaderCloses(): void {
  for (const [fd, stream] of [
    [1, process.stdout],
    [2, process.stderr],
  ] as const) {
    stream.on("error", (e: NodeJS.ErrnoException) => {
      // Not process.exit: during `run` it would wait for the program's threads (src/process-exit.ts).
      if (e.code === "EPIPE") exitImmediately(0);
      try {
        if (fd === 1) writeSync(2, `rootwalk: writing the output failed: ${describeFailure(e).line}\n`);
      } finally {
        exitImmediately(EXIT_RUNTIME_FAILURE);
      }
    });
  }
}

/** Sets the exit code and exits once everything written to stdout and stderr has been taken. */
export function exitAfterOutput(code: number): void {
  process.exitCode = code;
  let pending = 2;
  const flushed = (): void => {
    if (--pending === 0) process.exit(code);
  };
  // An empty write completes after every write queued before it.
  process.stdout.write("", flushed);
  process.stderr.write("", flushed);
}
