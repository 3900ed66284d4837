import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { encodeSyntheticStackMap } from "../../bench/synthetic-stackmap.js";
import { RootwalkError, linkSharedLibrary, loadObjectStackMaps } from "../../src/index.js";
import { indexStackMapInKernel } from "../../src/safepoints/kernel-index.js";
import { compileCorpusEntry, corpusEntry } from "../ll/corpus.js";
import { checkKernelIndex } from "../support/kernel-index-check.js";

/*
 * The scan kernel's stack map index (src/safepoints/kernel-index.ts) makes the table and recipes
 * the general path makes, and declines what only the general path may decide; the fuzzers
 * (test/fuzz/stackmap-fuzz.test.ts) compare the two on every mutated section.
 */
describe("the stack map index in the scan kernel", () => {
  const library = linkSharedLibrary(["call-chain", "stack-args", "deopt-statepoint"].map((n) => compileCorpusEntry(corpusEntry(n))));
  const linked = loadObjectStackMaps(readFileSync(library), library)!.relocatedBytes;

  it("indexes a linked section of real llc output as the general path does, at any load bias", () => {
    for (const bias of [0, 0x7f12_3400_0000, -0x1000]) expect(checkKernelIndex(linked, bias)).toBe("indexed");
  });

  it("indexes the bench's synthetic maps (statepoints, fast and shared recipes) as the general path does", () => {
    for (const records of [10, 1000, 20_000]) {
      const bytes = encodeSyntheticStackMap({ functions: records / 10, recordsPerFunction: 10, rootsPerRecord: 4 });
      expect(checkKernelIndex(bytes, 0)).toBe("indexed");
      expect(indexStackMapInKernel(bytes, 0)!.recipes.frameBytes.length).toBeGreaterThan(0);
    }
  });

  it("declines what the general path must decide: malformed bytes, addresses past 2^53, repeated return addresses", () => {
    const truncated = linked.subarray(0, linked.length - 8);
    expect(() => checkKernelIndex(truncated, 0)).toThrow(RootwalkError);
    expect(indexStackMapInKernel(truncated, 0)).toBeUndefined();
    // A return address at or past 2^53 after the bias (the general path's "load bias" error).
    expect(() => checkKernelIndex(linked, Number.MAX_SAFE_INTEGER - 0x10)).toThrow(/load bias/);
    expect(indexStackMapInKernel(linked, Number.MAX_SAFE_INTEGER - 0x10)).toBeUndefined();
    // The section twice: every return address repeats (a harmless repeat the registry keeps once).
    const twice = new Uint8Array(2 * linked.length);
    twice.set(linked);
    twice.set(linked, linked.length);
    expect(checkKernelIndex(twice, 0)).toBe("declined");
    // A default statepoint ID on a record without the statepoint shape (malformed).
    const plain = encodeSyntheticStackMap({ functions: 1, recordsPerFunction: 1, rootsPerRecord: 1 });
    new DataView(plain.buffer).setUint8(16 + 24 + 16, 3); // location #1: Indirect, not Constant
    expect(() => checkKernelIndex(plain, 0)).toThrow(/statepoint record #0/);
    expect(indexStackMapInKernel(plain, 0)).toBeUndefined();
  });
});
