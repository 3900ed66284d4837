import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { encodeSyntheticStackMap } from "../../bench/synthetic-stackmap.js";
import { RootwalkError, SafepointRegistry, linkSharedLibrary, loadObjectStackMaps, registerStackMapBytes } from "../../src/index.js";
import { indexStackMapInKernel } from "../../src/safepoints/kernel-index.js";
import { parseStackMapSection } from "../../src/stackmap/llvm-stackmap.js";
import { compileCorpusEntry, corpusEntry } from "../ll/corpus.js";
import { checkKernelIndex } from "../support/kernel-index-check.js";

/*
 * The scan kernel's stack map index (src/safepoints/kernel-index.ts) makes the table and recipes
 * the general path makes, and registerStackMapBytes uses it for the first map of a registry; the
 * fuzzers (test/fuzz/stackmap-fuzz.test.ts) compare the two on every mutated section.
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

  it("registerStackMapBytes registers through it and builds the descriptors only when asked", () => {
    const registry = new SafepointRegistry();
    registerStackMapBytes(registry, linked, { name: "gc_init" });
    const module = registry.snapshot().moduleBySlot[0]!;
    expect(Object.getOwnPropertyDescriptor(module, "descriptors")?.get).toBeDefined();
    expect(module.descriptors.count).toBe(registry.snapshot().safepointCount);
  });

  it("declines what the general path must decide, which then throws its own typed error or registers", () => {
    // A truncation: the general decoder's TruncatedInputError, word for word.
    const truncated = linked.subarray(0, linked.length - 8);
    expect(indexStackMapInKernel(truncated, 0)).toBeUndefined();
    const expected = catchError(() => parseStackMapSection(truncated));
    expect(expected).toBeInstanceOf(RootwalkError);
    expect(catchError(() => registerStackMapBytes(new SafepointRegistry(), truncated, { name: "t" }))?.message).toBe(expected!.message);
    // A return address at or past 2^53 after the bias: the registry's InvalidArgumentError.
    const bias = Number.MAX_SAFE_INTEGER - 0x10;
    expect(indexStackMapInKernel(linked, bias)).toBeUndefined();
    expect(() => registerStackMapBytes(new SafepointRegistry(), linked, { name: "b", loadBias: bias })).toThrow(/load bias/);
    // The same section twice in one blob list: every return address repeats (a harmless repeat
    // the registry keeps once), declined by the kernel and registered by the general path.
    const twice = new Uint8Array(2 * linked.length);
    twice.set(linked);
    twice.set(linked, linked.length);
    expect(indexStackMapInKernel(twice, 0)).toBeUndefined();
    const registry = new SafepointRegistry();
    registerStackMapBytes(registry, twice, { name: "twice" });
    expect(registry.snapshot().safepointCount).toBe(parseStackMapSection(linked).reduce((n, b) => n + b.numRecords, 0));
  });
});

function catchError(f: () => unknown): Error | undefined {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  return undefined;
}
