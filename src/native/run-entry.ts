/**
 * A process entry for `rootwalk run` alone (the tests spawn it in a child process, so that a
 * program that aborts never takes the test worker down): `node run-entry.js ARGS...`.
 */
import { runCommand } from "../cli/run-command.js";
import { crossCheckFromEnvironment } from "../../walker/scan-cross-check.js";

crossCheckFromEnvironment();

runCommand(process.argv.slice(2), { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) }).then(
  (code) => {
    process.exitCode = code;
    // Native threads are gone once rw_main returned; exit without waiting for anything else.
    setImmediate(() => process.exit(code));
  },
  (e: unknown) => {
    process.stderr.write(`rootwalk run: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(2);
  },
);
