import { describe, expect, it } from "vitest";
import { SimulatedMemory } from "../../src/memory/memory.js";
import { scanMemory } from "../../src/memory/scan-memory.js";
import { ScanKernel } from "../../walker/kernel-binding.js";
import { StackRootScanner, type ThreadStack } from "../../walker/stack-root-scanner.js";
import { warmWalk } from "../../walker/walk-warm-up.js";
import { syntheticRegistry } from "./support/synthetic-stack.js";

const BASE = 0x7ff0_0000_0000;
const BOUNDARY = 0x9999;
/** Two fast safepoints: a 16-byte frame with its root at sp + 0, a 32-byte one with a derived pair. */
const SAFEPOINTS = [
  { ra: 0x2000, frameSizeBytes: 16, pairs: [[0, 0]] as [number, number][] },
  { ra: 0x3000, frameSizeBytes: 32, pairs: [[8, 16]] as [number, number][] },
];

/** `frames` frames alternating the two safepoints, each root holding 0x5000_0000 + frame, from base + 0x100 up. */
function stack(frames: number): ThreadStack {
  const memory = new SimulatedMemory(BASE, 0x1_0000);
  const sp = BASE + 0x100;
  let at = sp;
  for (let f = 0; f < frames; f++) {
    const big = f % 2 === 1;
    memory.writeWord(at + (big ? 8 : 0), 0x5000_0000 + f);
    if (big) memory.writeWord(at + 16, 0x5000_0000 + f + 0x40);
    const frameBytes = big ? 32 : 16;
    const callerRa = f === frames - 1 ? BOUNDARY : f % 2 === 0 ? 0x3000 : 0x2000;
    memory.writeWord(at + frameBytes, callerRa);
    at += frameBytes + 8;
  }
  return { memory, chunks: [{ sp, ra: 0x2000, boundaryRa: BOUNDARY }] };
}

/** What one scan found and what relocating it wrote: frames, the four columns, the stack's words after. */
function scanOnce(prepare: boolean): unknown {
  const threads = [stack(41)];
  const scanner = new StackRootScanner(syntheticRegistry(SAFEPOINTS), () => threads, { crossCheck: false });
  if (prepare) scanner.prepareScans();
  scanner.walkStacks();
  const { pairs, frames } = scanner.lastWalkOf(0)!;
  const found = {
    frames,
    count: pairs.count,
    baseSlots: [...pairs.baseSlots.subarray(0, pairs.count)],
    derivedSlots: [...pairs.derivedSlots.subarray(0, pairs.count)],
    baseValues: [...pairs.baseValues.subarray(0, pairs.count)],
    frameRecords: [...pairs.frameRecords.subarray(0, 2 * pairs.frameCount)],
    capacity: pairs.baseSlots.length,
  };
  scanner.updateRoots((old) => old + 0x100);
  const memory = threads[0]!.memory;
  const words: number[] = [];
  for (let a = BASE + 0x100; a < BASE + 0x100 + 41 * 32; a += 8) words.push(memory.readWord(a));
  return { found, relocated: scanner.rootsRelocated, words };
}

describe("the walker's warm-up (walker/walk-warm-up.ts)", () => {
  it("walks one synthetic frame of the real snapshot and leaves the scan memory's use as it was", () => {
    const registry = syntheticRegistry(SAFEPOINTS);
    const snapshot = registry.snapshot();
    void snapshot.scanLayout;
    const kernel = new ScanKernel();
    const scratch = { bases: new Float64Array(4), deriveds: new Float64Array(4) };
    const before = scanMemory().allocatedBytes;
    expect(warmWalk(snapshot, { mode: "strict" }, kernel, scratch)).toBe(1);
    expect(scanMemory().allocatedBytes).toBe(before);
  });

  it("a scan after prepareScans (and its warm-up) finds, presizes and relocates exactly what one without it does", () => {
    const without = scanOnce(false);
    expect((without as { found: { count: number } }).found.count).toBe(41);
    expect(scanOnce(true)).toEqual(without);
  });

  it("a warm-up that fails (no room in the scan memory for its stack) does not fail prepareScans, nor the scan after it", () => {
    // The only fast safepoint has a 256 MiB frame: its synthetic stack cannot fit in what is left free.
    const huge = [{ ra: 0x2000, frameSizeBytes: 256 << 20, pairs: [[0, 0]] as [number, number][] }];
    const memory = scanMemory();
    const filler = memory.allocate(memory.largestFreeBytes - (64 << 20), "filler for the warm-up failure test");
    try {
      const threads = [{ memory: new SimulatedMemory(BASE, 0x1000), chunks: [{ sp: BASE + 0x100, ra: BOUNDARY, boundaryRa: BOUNDARY }] }];
      const scanner = new StackRootScanner(syntheticRegistry(huge), () => threads, { crossCheck: false });
      const before = memory.allocatedBytes;
      expect(() => scanner.prepareScans()).not.toThrow();
      const prepared = memory.allocatedBytes;
      expect(prepared).toBeGreaterThan(before);
      scanner.walkStacks();
      expect([scanner.framesScanned, scanner.lastWalkOf(0)!.pairs.count]).toEqual([0, 0]);
    } finally {
      filler.release();
    }
  });
});
