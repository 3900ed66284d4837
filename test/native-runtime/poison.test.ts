import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parseRunArguments } from "../../src/cli/run-command.js";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { buildRunEntry, runNative, runNativeJson } from "../support/native-run.js";

/*
 * --poison (implied by --stress): a gcroot program that keeps a pointer in a slot that is not a
 * root across a collection, then follows it (stale-pointer.ll). Without poisoning it read the
 * intact old copies and passed `--stress=1 --verify` with the right result; now the old copies
 * hold the pattern and the run stops with exit 3 and a message that says why.
 */

const PROGRAM = join(repoRoot(), "test", "native-runtime", "programs", "stale-pointer.ll");

beforeAll(() => {
  buildRunEntry();
}, 300_000);

describe("rootwalk run --poison", () => {
  it("parses --poison; --stress implies it in the runtime", () => {
    expect(parseRunArguments(["p.ll"]).poison).toBe(false);
    expect(parseRunArguments(["p.ll", "--poison"]).poison).toBe(true);
    expect(() => parseRunArguments(["p.ll", "--poison=1"])).toThrow(/--poison=1/);
  });

  it("the stale-pointer program is right without collections, and with --poison alone (nothing moved)", async () => {
    const plain = await runNativeJson([PROGRAM, "--plimmix", "--no-gc"], 60_000);
    expect(plain.result).toBe("42");
    expect(plain.poisonedBytes).toBe(0);
    // gc_collect without stress marks in place: the stale pointer is still right; the free lines
    // of the block are poisoned all the same.
    const poisoned = await runNativeJson([PROGRAM, "--plimmix", "--poison"], 60_000);
    expect(poisoned.result).toBe("42");
    expect(poisoned.collections).toBe(1);
    expect(poisoned.objectsMoved).toBe(0);
    expect(poisoned.poisonedBytes).toBeGreaterThan(0);
    const unpoisoned = await runNativeJson([PROGRAM, "--plimmix"], 60_000);
    expect(unpoisoned.collections).toBe(1);
    expect(unpoisoned.poisonedBytes).toBe(0);
  }, 120_000);

  for (const args of [
    ["--stress=1", "--verify"],
    ["--stress=1", "--verify", "--poison"],
  ]) {
    it(`a read through a stale pointer fails under ${args.join(" ")}: exit 3, the fault and the likely cause`, async () => {
      const r = await runNative([PROGRAM, "--plimmix", ...args, "--progress=0"], 60_000);
      expect(r.status).toBe(3);
      expect(r.stdout).toBe("");
      const lines = r.stderr.trimEnd().split("\n");
      // rootwalk check names the mistake before the run (a warning), then the run fails on it.
      expect(lines.shift()).toMatch(/^rootwalk run: warning: \S+: gc-pointer-in-stack-slot in @rw_main, %entry: %stale is live across the call of @gc_collect/);
      expect(lines[0]).toMatch(/^rootwalk run: segmentation fault in thread #0 at rw_main\+0x[0-9a-f]+ \(fault address 0x[0-9a-f]+\)$/);
      // The old copies are in a block the collection freed: quarantined and protected, the read
      // of the old parent's slot faults (before the pattern it holds could be followed).
      expect(lines[1]).toMatch(
        /^ {2}poisoning is on \(--poison, implied by --stress\): the fault address is in the heap, in memory a collection evacuated or freed,$/,
      );
      expect(lines[2]).toMatch(/quarantined and protected under --stress: a read or write through a stale pointer/);
      expect(lines).toHaveLength(3);
    }, 90_000);
  }
});
