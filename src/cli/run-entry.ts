/**
 * A process entry for `rootwalk run` alone (the tests spawn it in a child process, so that a
 * program that aborts never takes the test worker down): `node run-entry.js ARGS...`.
 */
import { PROCESS_IO, endQuietlyWhenReaderCloses, exitAfterOutput } from "./process-io.js";
import { runCommand } from "./run-command.js";
import { crossCheckRequested } from "../../walker/scan-cross-check.js";

endQuietlyWhenReaderCloses();
runCommand(process.argv.slice(2), PROCESS_IO, crossCheckRequested()).then(
  // Native threads are gone once rw_main returned; exit once the output is out, waiting for nothing else.
  exitAfterOutput,
  (e: unknown) => {
    process.stderr.write(`rootwalk run: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    exitAfterOutput(2);
  },
);
