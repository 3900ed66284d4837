import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_LOG_PROGRESS_MS, DEFAULT_PROGRESS_MS, parseRunArguments } from "../../src/cli/run-command.js";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { buildRunEntry, runNative } from "../support/native-run.js";

/*
 * `rootwalk run` shows progress on stderr while it works (as `sim` does): elapsed time,
 * collections, frames scanned and objects moved so far, one line per interval when stderr is
 * not a terminal. A --stress=1 --verify run used to be silent until it ended.
 */

const PROGRAM = join(repoRoot(), "test", "native-runtime", "programs", "list-tree.ll");
const LINE = /^rootwalk run: (\d+\.\d) s, (\d+) collections, (\d+) frames scanned, (\d+) objects moved$/;

beforeAll(() => {
  buildRunEntry();
}, 300_000);

describe("rootwalk run progress", () => {
  it("--progress: seconds or ms, 0 = off; by default every 1 s on a terminal, 5 s into a log", () => {
    expect(parseRunArguments(["p.ll"]).progressMs).toBeUndefined();
    expect([DEFAULT_PROGRESS_MS, DEFAULT_LOG_PROGRESS_MS]).toEqual([1000, 5000]);
    expect(parseRunArguments(["p.ll", "--progress=0.2"]).progressMs).toBe(200);
    expect(parseRunArguments(["p.ll", "--progress", "0"]).progressMs).toBe(0);
    expect(() => parseRunArguments(["p.ll", "--progress=often"])).toThrow(/--progress: found often/);
  });

  it("a --stress=1 --verify run reports growing counts on stderr while it works", async () => {
    const r = await runNative([PROGRAM, "--stress=1", "--verify", "--heap", "16M", "--progress=0.2"], 180_000);
    expect(r.status).toBe(0);
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines.length).toBeGreaterThanOrEqual(2);
    const rows = lines.map((l) => {
      const m = LINE.exec(l);
      expect(m, l).not.toBeNull();
      return m!.slice(1).map(Number);
    });
    for (let k = 1; k < rows.length; k++) {
      expect(rows[k]![0]).toBeGreaterThan(rows[k - 1]![0]!);
      for (let c = 1; c < 4; c++) expect(rows[k]![c]).toBeGreaterThanOrEqual(rows[k - 1]![c]!);
    }
    expect(rows.at(-1)![1]).toBeGreaterThan(0);
    // The final summary counts at least what the last progress line showed.
    const total = /collections: (\d+), frames scanned: (\d+)/.exec(r.stdout)!;
    expect(Number(total[1])).toBeGreaterThanOrEqual(rows.at(-1)![1]!);
    expect(Number(total[2])).toBeGreaterThanOrEqual(rows.at(-1)![2]!);
  }, 200_000);

  it("nothing on stderr with --json (machine output) or --progress=0", async () => {
    const json = await runNative([PROGRAM, "--stress=2", "--heap", "16M", "--progress=0.1", "--json"], 180_000);
    expect(json.status).toBe(0);
    expect(json.stderr).toBe("");
    const off = await runNative([PROGRAM, "--stress=2", "--heap", "16M", "--progress=0"], 180_000);
    expect(off.status).toBe(0);
    expect(off.stderr).toBe("");
  }, 400_000);
});
