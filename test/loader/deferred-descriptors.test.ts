import { describe, expect, it } from "vitest";
import { buildStackCorpus } from "../../bench/stack-corpus.js";
import { encodeSyntheticStackMap } from "../../bench/synthetic-stackmap.js";
import { MalformedInputError, TruncatedInputError } from "../../src/errors.js";
import { DeferredLlvmDescriptors, RECORD_BLOCK_SIZE } from "../../src/loader/deferred-llvm-descriptors.js";
import { buildLlvmDescriptors } from "../../src/loader/llvm-map-loader.js";
import { registerStackMapBytes } from "../../src/loader/register-maps.js";
import { REGION_ALIGN_BYTES, scanMemory } from "../../src/memory/scan-memory.js";
import type { FrameDescriptors } from "../../src/safepoints/frame-descriptors.js";
import { SafepointRegistry } from "../../src/safepoints/registry.js";
import { parseStackMapSection } from "../../src/stackmap/llvm-stackmap.js";
import {
  CONSTANT_SIZE_BYTES,
  FUNCTION_SIZE_BYTES,
  HEADER_NUM_CONSTANTS,
  HEADER_NUM_FUNCTIONS,
  HEADER_SIZE_BYTES,
  RECORD_RESERVED,
} from "../../src/stackmap/stackmap-v3-layout.js";
import { crossCheckScan, generalScan } from "../../walker/scan-cross-check.js";
import { catchError } from "../support/catch-error.js";
import { checkRegistration, deferredDifference } from "../support/kernel-index-check.js";

/*
 * registerStackMapBytes (gc_init's path) registers through the scan kernel's index and decodes a
 * safepoint's descriptors only when the general unwinder or a report asks for them
 * (src/loader/deferred-llvm-descriptors.ts). What that must not change: the walk's answer, and
 * every malformed section rejected at registration with the general path's error. (The section
 * fuzzer compares every decoded record with the general path on every mutation:
 * test/support/kernel-index-check.ts.)
 */
describe("registerStackMapBytes with deferred descriptors", () => {
  // 3000 safepoints: three blocks of RECORD_BLOCK_SIZE (a map of one block is decoded whole).
  const spec = { functions: 300, recordsPerFunction: 10, rootsPerRecord: 4 };
  const bytes = encodeSyntheticStackMap(spec);

  it("walks a stack as the eagerly registered map does, decoding only the safepoints the unwinder visits", () => {
    const eager = buildStackCorpus("deferred", spec, 300, 0, 7);
    const registry = new SafepointRegistry();
    registerStackMapBytes(registry, bytes, { name: "gc_init@0x1000" });
    const snapshot = registry.snapshot();
    const deferred = snapshot.moduleBySlot[0]!.deferred as DeferredLlvmDescriptors;
    expect(deferred).toBeInstanceOf(DeferredLlvmDescriptors);
    expect(deferred.count).toBeGreaterThan(RECORD_BLOCK_SIZE);

    const options = { mode: "strict" } as const;
    const walked = generalScan(snapshot, eager.memory, [eager.start], options);
    expect(walked.frames).toBe(300);
    expect(walked).toEqual(generalScan(eager.snapshot, eager.memory, [eager.start], options));
    expect(deferred.allDecoded).toBe(false);
    expect(deferred.blocksDecoded).toBeGreaterThan(0);
    expect(deferred.blocksDecoded).toBeLessThanOrEqual(Math.ceil(deferred.count / RECORD_BLOCK_SIZE));
    crossCheckScan(snapshot, eager.memory, [eager.start], options);

    // A report (and the registry's own bookkeeping) reads them all: the general path's, once.
    expect(snapshot.moduleBySlot[0]!.descriptors.sameAs(eager.snapshot.moduleBySlot[0]!.descriptors, 0)).toBe(true);
    expect(deferred.allDecoded).toBe(true);
  });

  it.each([
    ["one blob", bytes],
    ["two blobs, a block across them", concatBytes(encodeSyntheticStackMap({ functions: 3, recordsPerFunction: 3, rootsPerRecord: 2 }), bytes)],
  ])("decodes each block of safepoints once, however often and in whatever order they are visited (%s)", (_, section) => {
    const expected = eagerDescriptors(section);
    const blockSize = 7;
    const deferred = new DeferredLlvmDescriptors(section, expected.count, 0, blockSize);
    // Every safepoint, three times over, in an order that jumps between blocks.
    for (let round = 0; round < 3; round++) {
      for (let k = 0; k < expected.count; k++) {
        const i = (k * 97 + round) % expected.count;
        deferred.descriptorsOf(i);
        expect(deferred.rowOf(i)).toBe(i % blockSize);
      }
    }
    expect(deferred.blocksDecoded).toBe(Math.ceil(expected.count / blockSize));
    expect(deferred.safepointsDecodedInBlocks).toBe(expected.count);
    expect(deferredDifference(deferred, expected)).toBeUndefined();
    // After all() (a report), every lookup reads it: no block is decoded again.
    expect(deferred.allDecoded).toBe(true);
    for (let i = 0; i < expected.count; i++) expect(deferred.descriptorsOf(i)).toBe(deferred.all());
    expect(deferred.blocksDecoded).toBe(Math.ceil(expected.count / blockSize));
  });

  it("owns the section: a caller that overwrites its buffer after registration changes nothing", () => {
    const eager = buildStackCorpus("deferred", spec, 300, 0, 7);
    const buffer = bytes.slice();
    const registry = new SafepointRegistry();
    registerStackMapBytes(registry, buffer, { name: "gc_init@0x1000" });
    const snapshot = registry.snapshot();
    expect(snapshot.moduleBySlot[0]!.deferred).toBeDefined();
    // The caller reuses its buffer for something else (here: another map's bytes, then zeros).
    buffer.set(encodeSyntheticStackMap({ ...spec, rootsPerRecord: 1 }).subarray(0, buffer.length));
    const options = { mode: "strict" } as const;
    expect(generalScan(snapshot, eager.memory, [eager.start], options)).toEqual(generalScan(eager.snapshot, eager.memory, [eager.start], options));
    buffer.fill(0);
    const differs = deferredDifference(snapshot.moduleBySlot[0]!.deferred as DeferredLlvmDescriptors, eager.snapshot.moduleBySlot[0]!.descriptors);
    expect(differs).toBeUndefined();
  });

  it("registers by the general path when the scan memory has no room for the kernel's workspace", () => {
    const larger = encodeSyntheticStackMap({ ...spec, functions: 400 });
    const memory = scanMemory();
    const hog = memory.allocate(memory.largestFreeBytes - 16 * REGION_ALIGN_BYTES, "all but 64 KiB of the scan memory");
    try {
      const registry = new SafepointRegistry();
      registerStackMapBytes(registry, larger, { name: "gc_init@0x1000" });
      expect(registry.snapshot().safepointCount).toBe(4000);
      expect(registry.snapshot().moduleBySlot[0]!.deferred).toBeUndefined();
    } finally {
      hog.release();
    }
  });

  it("rejects a malformed section at registration with the general path's error", () => {
    const reserved = bytes.slice();
    const header = new DataView(bytes.buffer, bytes.byteOffset);
    const firstRecord =
      HEADER_SIZE_BYTES +
      header.getUint32(HEADER_NUM_FUNCTIONS, true) * FUNCTION_SIZE_BYTES +
      header.getUint32(HEADER_NUM_CONSTANTS, true) * CONSTANT_SIZE_BYTES;
    reserved[firstRecord + RECORD_RESERVED] = 1;
    for (const [section, kind] of [
      [reserved, MalformedInputError],
      [bytes.subarray(0, bytes.length - 8), TruncatedInputError],
    ] as const) {
      const error = catchError(() => registerStackMapBytes(new SafepointRegistry(), section, { name: "gc_init@0x1000" }));
      expect(error).toBeInstanceOf(kind);
      expect((error as Error).message).not.toContain("\n");
      expect(() => checkRegistration(section)).toThrow(kind);
    }
  });
});

/** The general path's descriptors of a section (what registration made before it was deferred). */
function eagerDescriptors(section: Uint8Array): FrameDescriptors {
  return buildLlvmDescriptors(parseStackMapSection(section));
}

function concatBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  const both = new Uint8Array(a.length + b.length);
  both.set(a);
  both.set(b, a.length);
  return both;
}
