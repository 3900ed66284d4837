import { describe, expect, it } from "vitest";
import { MemoryAccessError } from "../../src/errors.js";
import { SimulatedMemory, WordMemory } from "../../src/memory/memory.js";
import { scanMemory } from "../../src/memory/scan-memory.js";
import { crossCheckScan, fastScan } from "../../walker/scan-cross-check.js";
import { warmScanKernel } from "../../walker/scan-kernel/warm-up.js";
import { syntheticRegistry } from "./support/synthetic-stack.js";

/*
 * The scan kernel (walker/scan-kernel/) where its binding does more than call it: stacks outside
 * the scan memory (copied in per scan), output columns that grow in the middle of a chunk, frame
 * logs longer than one kernel call, and the scan-memory regions these use coming back.
 * (Agreement with the general unwinder on every kind of frame and ending: fast-scan.test.ts.)
 */

const BASE = 0x7ffd_0000_0000;
const BOUNDARY = 0x9999_0000;
const registry = syntheticRegistry([
  {
    ra: 0x401010,
    frameSizeBytes: 24,
    pairs: [
      [0, 0],
      [8, 16],
    ],
  },
  { ra: 0x402020, frameSizeBytes: 16, pairs: [[8, 8]], saved: { 1: -16 } },
  { ra: 0x403030, frameSizeBytes: 0, pairs: [] },
]);
const FRAME_BYTES = [32, 24, 8];

/** `frames` frames cycling through `sites`, then the boundary; every slot holds a distinct value. */
function stack(frames: number, sites: readonly number[]): { memory: SimulatedMemory; chunks: { sp: number; ra: number; boundaryRa: number }[] } {
  let size = 64;
  for (let f = 0; f < frames; f++) size += FRAME_BYTES[sites[f % sites.length]!]!;
  const memory = new SimulatedMemory(BASE, size);
  let sp = BASE;
  for (let f = 0; f < frames; f++) {
    const bytes = FRAME_BYTES[sites[f % sites.length]!]!;
    for (let off = 0; off < bytes - 8; off += 8) memory.writeWord(sp + off, 0x20_0000_0000 + f * 32 + off);
    const next = f + 1 < frames ? [0x401010, 0x402020, 0x403030][sites[(f + 1) % sites.length]!]! : BOUNDARY;
    memory.writeWord(sp + bytes - 8, next);
    sp += bytes;
  }
  return { memory, chunks: [{ sp: BASE, ra: [0x401010, 0x402020, 0x403030][sites[0]!]!, boundaryRa: BOUNDARY }] };
}

describe("scan kernel", () => {
  it("walks a stack outside the scan memory (copied in) exactly as the same stack inside it", () => {
    const { memory, chunks } = stack(3000, [0, 1, 0, 2]);
    const outside = new WordMemory(BASE, memory.sizeBytes, new ArrayBuffer(memory.sizeBytes));
    outside.bytes.set(memory.bytes);
    expect(outside.words.buffer).not.toBe(scanMemory().buffer);
    const inPlace = crossCheckScan(registry.snapshot(), memory, chunks, { mode: "strict" });
    const copied = crossCheckScan(registry.snapshot(), outside, chunks, { mode: "strict" });
    expect(copied).toEqual(inPlace);
    expect(inPlace.frames).toBe(3000);
    expect(inPlace.stopReason).toBe("boundary");
    // 2 pairs in half the frames, 1 in a quarter: the output grew from 256 pairs mid-chunk.
    expect(inPlace.pairs.length / 3).toBe(1500 * 2 + 750);
    expect(inPlace.baseValues[1]).toBe(0x20_0000_0000 + 8);
  });

  it("cross-checks of a deep stack reuse their scan memory (the frame log is bounded)", () => {
    const { memory, chunks } = stack(100_000, [2]);
    crossCheckScan(registry.snapshot(), memory, chunks, { mode: "strict" });
    const before = scanMemory().allocatedBytes;
    for (let i = 0; i < 20; i++) expect(fastScan(registry.snapshot(), memory, chunks, { mode: "strict" }).frames).toBe(100_000);
    expect(scanMemory().allocatedBytes - before).toBeLessThan(2 << 20);
  });

  it("a released simulated memory gives its region back and refuses every access", () => {
    const before = scanMemory().allocatedBytes;
    const memory = new SimulatedMemory(BASE, 1 << 20);
    expect(scanMemory().allocatedBytes - before).toBe(1 << 20);
    expect(memory.readWordBigInt(BASE)).toBe(0xdeadbeef_deadbeefn);
    memory.release();
    expect(scanMemory().allocatedBytes).toBe(before);
    expect(() => memory.readWord(BASE)).toThrow(MemoryAccessError);
    // A walk of it fails as the general unwinder says (no words left for the kernel to copy).
    const walked = crossCheckScan(registry.snapshot(), memory, [{ sp: BASE, ra: 0x401010, boundaryRa: BOUNDARY }], { mode: "strict" });
    expect(walked.error).toMatch(/0x7ffd00000000/);
  });

  it("copies a stack outside the scan memory into scratch above 2 GiB (offsets there shift unsigned)", () => {
    // Native thread stacks take up to 3.5 GiB of the scan memory: whatever comes after them lies above 2^31.
    const filler = scanMemory().allocate(2 ** 31, "filler below the scratch");
    try {
      const { memory, chunks } = stack(20_000, [0, 1, 0, 2]); // larger than any scratch made before
      const outside = new WordMemory(BASE, memory.sizeBytes, new ArrayBuffer(memory.sizeBytes));
      outside.bytes.set(memory.bytes);
      const copied = crossCheckScan(registry.snapshot(), outside, chunks, { mode: "strict" });
      expect(copied).toEqual(crossCheckScan(registry.snapshot(), memory, chunks, { mode: "strict" }));
      expect(copied.frames).toBe(20_000);
      memory.release();
    } finally {
      filler.release();
    }
  });
});

describe("the scan kernel's frame loop", () => {
  it("records every pair of frames with 0 to 9 pairs (four per step, then the rest) as the general unwinder does", () => {
    // Site k has k plain roots at distinct slots; 9 covers two steps of four and a rest of one.
    const sites = Array.from({ length: 10 }, (_, k) => ({
      ra: 0x50_0000 + 0x100 * k,
      frameSizeBytes: 8 * k + 8,
      pairs: Array.from({ length: k }, (_, p): [number, number] => [8 * p, 8 * p]),
    }));
    const order = [9, 4, 0, 7, 1, 5, 2, 8, 3, 6, 6, 9, 1];
    let size = 64;
    for (const k of order) size += sites[k]!.frameSizeBytes + 8;
    const memory = new SimulatedMemory(BASE, size);
    let sp = BASE;
    order.forEach((k, f) => {
      for (let p = 0; p < k; p++) memory.writeWord(sp + 8 * p, 0x30_0000_0000 + f * 256 + p * 8);
      memory.writeWord(sp + sites[k]!.frameSizeBytes, f + 1 < order.length ? sites[order[f + 1]!]!.ra : BOUNDARY);
      sp += sites[k]!.frameSizeBytes + 8;
    });
    const outcome = crossCheckScan(syntheticRegistry(sites).snapshot(), memory, [{ sp: BASE, ra: sites[order[0]!]!.ra, boundaryRa: BOUNDARY }], {
      mode: "strict",
    });
    expect(outcome.frames).toBe(order.length);
    expect(outcome.stopReason).toBe("boundary");
    const roots = order.reduce((sum, k) => sum + k, 0);
    expect(outcome.pairs.length / 3).toBe(roots);
    // The last frame's (site 1) one root, in the last pair.
    expect(outcome.baseValues.at(-1)).toBe(0x30_0000_0000 + (order.length - 1) * 256);
  });

  it("stops at a chunk boundary that is itself a safepoint", () => {
    // The boundary is site 2's return address: the walk ends before the first frame there.
    const { memory, chunks } = stack(40, [0, 1, 0, 2]);
    const walked = crossCheckScan(registry.snapshot(), memory, [{ ...chunks[0]!, boundaryRa: 0x403030 }], { mode: "strict" });
    expect(walked.stopReason).toBe("boundary");
    expect(walked.frames).toBe(3);
    expect(fastScan(registry.snapshot(), memory, [{ ...chunks[0]!, boundaryRa: 0x403030 }], { mode: "strict" }).frames).toBe(3);
  });
});

describe("the scan kernel's warm-up", () => {
  it("runs the kernel over all 4,096 frames of its synthetic stack and gives its scratch region back", () => {
    const before = scanMemory().allocatedBytes;
    expect(warmScanKernel()).toBe(4096);
    expect(scanMemory().allocatedBytes).toBe(before);
  });
});
