import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { buildRunEntry, runNative } from "../support/native-run.js";

/*
 * Out of memory in a native run: one line saying so, with the numbers and a --heap to try, exit 3,
 * and no second line about stale roots (that line is for a collector that failed mid-collection).
 */

const PROGRAM = join(repoRoot(), "test", "native-runtime", "programs", "heap-exhausted.ll");

beforeAll(() => {
  buildRunEntry();
}, 300_000);

describe("heap exhausted", () => {
  it("rootwalk run --heap 4M of a program keeping 100 MB live: one line, exit 3, a heap from the live bytes", async () => {
    const r = await runNative([PROGRAM, "--heap", "4M", "--progress=0"], 120_000);
    expect(r.status).toBe(3);
    expect(r.stderr.trim()).toMatch(/^rootwalk run: heap exhausted: \d+ live bytes of 4194304; try --heap 16M$/); // 4x the live data that filled the heap
    expect(r.stderr).not.toMatch(/stale roots|^\s+at /m);
  });
});
