import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { buildRunEntry, runNative, runNativeJson } from "../support/native-run.js";

/*
 * Issue 17, item 4: `run --stress --verify` on a program that passes an interior pointer across
 * safepoints (interior-argument.ll) printed only "verify failures: N". Now each of the first
 * failures names the root (thread, frame function+offset, stack slot), the value and why it is
 * bad, on stderr and in --json's verifyFailureDetails.
 */

const PROGRAM = join(repoRoot(), "test", "native-runtime", "programs", "interior-argument.ll");

beforeAll(() => {
  buildRunEntry();
}, 300_000);

describe("rootwalk run --verify: failure details", () => {
  it("the interior-pointer program is right without collections", async () => {
    const r = await runNativeJson([PROGRAM, "--no-gc"], 60_000);
    expect(r.result).toBe("130");
  }, 90_000);

  it("names the root, its frame and why the value is bad (stderr, exit 4)", async () => {
    // --no-check: rootwalk check finds this mistake before the run (its warning would come first);
    // this test is about what the verifier says when the program runs anyway.
    const r = await runNative([PROGRAM, "--stress", "--verify", "--progress=0", "--no-check"], 60_000);
    expect(r.status).toBe(4);
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^rootwalk run: \d+ heap verification failures:$/);
    expect(lines[1]).toMatch(
      /^ {2}collection #\d+ \(before it\): root #0 \(thread #0, frame #0 sum_from\+0x[0-9a-f]+ \(return address 0x[0-9a-f]+\), stack slot 0x[0-9a-f]+ \(sp\+0x[0-9a-f]+\)\): found 0x[0-9a-f]+ not an object start: inside object 0x[0-9a-f]+ \(\+0x10, which ends at 0x[0-9a-f]+\)/,
    );
    expect(lines.length).toBeLessThanOrEqual(11);
  }, 90_000);

  it("--json carries them as verifyFailureDetails, next to the existing fields", async () => {
    const r = await runNative([PROGRAM, "--stress", "--verify", "--json"], 60_000);
    expect(r.status).toBe(4);
    const json = JSON.parse(r.stdout.trim().split("\n").pop()!) as Record<string, unknown> & { verifyFailureDetails: Record<string, unknown>[] };
    expect(json.verifyFailures).toBeGreaterThan(0);
    for (const key of ["result", "collections", "framesScanned", "rootsRelocated", "objectsMoved", "maxPauseMs", "poisonedBytes", "phasesMs"])
      expect(json).toHaveProperty(key);
    expect(json.verifyFailureDetails.length).toBeGreaterThan(0);
    expect(json.verifyFailureDetails.length).toBeLessThanOrEqual(10);
    expect(json.verifyFailureDetails[0]).toMatchObject({
      phase: "before",
      where: { kind: "root", index: 0, description: expect.stringMatching(/^thread #0, frame #0 sum_from\+0x/) },
      value: expect.stringMatching(/^0x[0-9a-f]+$/),
      reason: expect.stringMatching(/^not an object start: inside object 0x[0-9a-f]+ \(\+0x10,/),
      expected: "an object's address",
    });
  }, 90_000);
});
