import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { buildRunEntry, runNativeJson } from "../support/native-run.js";
import { renderSvg } from "../support/svg-to-png.js";

/*
 * `rootwalk run --svg` draws what the program allocated since the last collection as allocated.
 * threads.ll without collections: 4 workers build 20 lists of 300 cells of 24 B each (24,000
 * objects, 576,000 B), so at least 4,500 lines are allocated; nothing is live (no collection
 * marked anything). The map used to show every one of those lines as free. The picture is kept
 * at .cache/heap-map/run-threads-no-gc.png.
 */

const ROOT = repoRoot();
const PROGRAM = join(ROOT, "test", "native-runtime", "programs", "threads.ll");
const OUT = join(ROOT, ".cache", "heap-map");

beforeAll(() => {
  mkdirSync(OUT, { recursive: true });
  buildRunEntry();
}, 300_000);

describe("rootwalk run --svg", () => {
  it("lines allocated since the last collection are drawn allocated, with the fast path's cursors taken in", async () => {
    const svgPath = join(OUT, "run-threads-no-gc.svg");
    const r = await runNativeJson([PROGRAM, "--no-gc", "--heap", "4M", "--svg", svgPath], 120_000);
    expect(r.result).toBe("3603639650");
    expect(r.collections).toBe(0);
    const svg = readFileSync(svgPath, "utf8");
    const totals = { live: 0, allocated: 0, free: 0 };
    for (const m of svg.matchAll(/lines live (\d+) allocated (\d+) free (\d+)/g)) {
      totals.live += Number(m[1]);
      totals.allocated += Number(m[2]);
      totals.free += Number(m[3]);
    }
    expect(totals.live).toBe(0);
    expect(totals.allocated).toBeGreaterThanOrEqual(4500);
    expect(svg).toContain(">Epoch 1: the line-mark stamp of the last collection.");
    const [, width, height] = /^<svg[^>]* width="(\d+)" height="(\d+)"/.exec(svg)!.map(Number);
    const picture = renderSvg(svg, width!, height!, join(OUT, "run-threads-no-gc.png"));
    let allocatedPixels = 0;
    for (let y = 0; y < height!; y++) for (let x = 0; x < width!; x++) if (picture.at(x, y).join() === "156,199,239,255") allocatedPixels++;
    expect(allocatedPixels).toBeGreaterThanOrEqual(4500 * 9); // a 3 x 3 cell per line, legend swatch aside
  }, 180_000);
});
