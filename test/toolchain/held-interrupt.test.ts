import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { buildRunEntry, OUT_DIR } from "../support/native-run.js";

/*
 * A Ctrl-C that lands after a tool exited but before runTool's spawnSync returned reached no tool.
 * It used to be absorbed (a full test run saw a Ctrl-C'd build end with exit 0). Here the "tool"
 * is a shell that sends SIGINT to its parent (this child node) and exits 0: exactly that window,
 * every time. The child then keeps working synchronously and yields: the Ctrl-C must end it then.
 */
const TOOLCHAIN = pathToFileURL(join(OUT_DIR, "src", "toolchain", "llvm-toolchain.js")).href;

function child(body: string): { status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string } {
  const script = `import { runTool } from ${JSON.stringify(TOOLCHAIN)};\n${body}`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 30_000 });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

const CTRL_C_AS_TOOL_EXITS = `runTool("sh", ["-c", "kill -INT $PPID; sleep 0.2; exit 0"]);`;

describe("Ctrl-C while a tool runs (held-interrupt.ts)", () => {
  beforeAll(() => void buildRunEntry(), 300_000);

  it("a Ctrl-C that reached no tool is raised again when the process yields: the process ends by SIGINT", () => {
    const r = child(`${CTRL_C_AS_TOOL_EXITS}\nconsole.log("tool returned");\nawait new Promise((done) => setTimeout(done, 300));\nconsole.log("survived");`);
    expect(r.stdout).toBe("tool returned\n");
    expect(r.signal).toBe("SIGINT");
  });

  it("two tools in one synchronous stretch: the Ctrl-C between them is not lost either", () => {
    const r = child(
      `${CTRL_C_AS_TOOL_EXITS}\nrunTool("true", []);\nconsole.log("both ran");\nawait new Promise((done) => setTimeout(done, 300));\nconsole.log("survived");`,
    );
    expect(r.stdout).toBe("both ran\n");
    expect(r.signal).toBe("SIGINT");
  });

  it("a Ctrl-C that killed a tool ends a program without a SIGINT listener too, after its catch ran (never only a caught error)", () => {
    // The terminal signals the whole group: the tool and this process (the tool's `kill -INT $$`).
    const r = child(
      `try { runTool("sh", ["-c", "kill -INT $PPID; kill -INT $$; sleep 5"]); } catch (e) { console.log("caught: " + e.message.includes("killed by SIGINT")); }\nawait new Promise((done) => setTimeout(done, 300));\nconsole.log("survived");`,
    );
    expect(r.stdout).toBe("caught: true\n");
    expect(r.signal).toBe("SIGINT");
  });

  it("a program's own SIGINT listener gets the Ctrl-C once, and nothing is raised again", () => {
    const r = child(
      `let seen = 0;\nprocess.on("SIGINT", () => { seen++; });\n${CTRL_C_AS_TOOL_EXITS}\nawait new Promise((done) => setTimeout(done, 300));\nconsole.log("seen " + seen);`,
    );
    expect(r.signal).toBeNull();
    expect(r.status).toBe(0);
    expect(r.stdout).toBe("seen 1\n");
  });

  it("a program's one-time SIGINT listener (process.once) handles the Ctrl-C: it is not raised again to end the program", () => {
    // once() removes its listener before calling it: a count taken after it ran saw no other
    // listener, and the program that handled its Ctrl-C was killed by the one raised again.
    const r = child(
      `let seen = 0;\nprocess.once("SIGINT", () => { seen++; });\n${CTRL_C_AS_TOOL_EXITS}\nawait new Promise((done) => setTimeout(done, 300));\nconsole.log("seen " + seen);`,
    );
    expect([r.signal, r.status, r.stdout]).toEqual([null, 0, "seen 1\n"]);
  });

  it("without a Ctrl-C, running tools leaves SIGINT as it was: no listener stays behind", () => {
    const r = child(`runTool("true", []);\nawait new Promise((done) => setTimeout(done, 50));\nconsole.log(process.listenerCount("SIGINT"));`);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe("0\n");
  });
});
