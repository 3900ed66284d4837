/**
 * Ctrl-C while a tool runs (opt, llc, gcc). The terminal signals the whole process group, so the
 * tool dies of it, runTool reports "killed by SIGINT", the callers' cleanup runs (a build's
 * temporary folder) and describeFailure turns it into one "interrupted" line, exit 130. For that,
 * rootwalk must outlive the signal: a SIGINT listener is held while tools run.
 *
 * Invariant: a Ctrl-C that arrives while the listener is held is never lost. Node runs signal
 * listeners only when the event loop turns, and a signal caught while a listener is installed is
 * dropped if the listener is gone by then. A Ctrl-C that lands after a tool exited but before
 * spawnSync returned (or between two tools of one synchronous build) reaches no tool: the listener
 * stays installed until the loop has turned twice after the last tool started (the first turn may
 * be past its poll phase already, the second one reads the signal), notes such a Ctrl-C, and raises
 * it again once it is removed. Then the process's own handling applies: `run`'s "interrupted"
 * report while its program runs, or Node's default (the process ends, exit 130). While held, a
 * Ctrl-C during JavaScript work after a tool takes effect when that work yields, not at once.
 *
 * A Ctrl-C that another SIGINT listener (an embedding program's, `run`'s report) also received is
 * not raised again: it was delivered.
 *
 * A Ctrl-C that killed a tool is raised again too, unless such a listener received it: it was
 * meant for this process as much as for the tool (the terminal signals the whole group). The
 * caller first gets the tool's ToolError ("killed by SIGINT") and its catch and finally blocks
 * run; then a program that embeds rootwalk without a SIGINT listener ends as Node's default would
 * have ended it at the Ctrl-C (a build loop that catches each compile's error still stops), and
 * the CLI has already printed its one "interrupted" line, exit 130.
 *
 * The listener goes first (prepended), so that it counts the others before any of them runs: a
 * `process.once` listener removes itself before it is called, and counted after it, its
 * program's handled Ctrl-C was raised again and ended the program.
 */
let held = false;
let noted = false;

function note(): void {
  if (process.listenerCount("SIGINT") === 1) noted = true;
}

function release(): void {
  process.off("SIGINT", note);
  held = false;
  if (noted) {
    noted = false;
    process.kill(process.pid, "SIGINT");
  }
}

/** Keeps Ctrl-C from ending this process until the event loop has turned twice from now. */
export function holdInterruptsWhileToolsRun(): void {
  if (held) return;
  held = true;
  process.prependListener("SIGINT", note);
  setImmediate(() => setImmediate(release));
}
