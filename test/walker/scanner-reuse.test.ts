import { describe, expect, it } from "vitest";
import { SimulatedMemory } from "../../src/memory/memory.js";
import { scanMemory } from "../../src/memory/scan-memory.js";
import { MAX_PRESIZED_PAIRS } from "../../walker/frame-roots.js";
import { StackRootScanner, type ThreadStack } from "../../walker/stack-root-scanner.js";
import { syntheticRegistry } from "./support/synthetic-stack.js";

const BASE = 0x7ff0_0000_0000;
const BOUNDARY = 0x9999;

/** A one-frame stack at `base` (ra 0x2000, 16-byte frame, its root at sp + 0 holding `root`). */
function oneFrameStack(base: number, root: number): ThreadStack {
  const memory = new SimulatedMemory(base, 0x1000);
  const sp = base + 0x100;
  memory.writeWord(sp, root);
  memory.writeWord(sp + 16, BOUNDARY);
  return { memory, chunks: [{ sp, ra: 0x2000, boundaryRa: BOUNDARY }] };
}

describe("StackRootScanner keeps its per-thread state across scans", () => {
  it("a later scan over other memories (the next collection's views) and fewer threads sees only them", () => {
    const registry = syntheticRegistry([{ ra: 0x2000, frameSizeBytes: 16, pairs: [[0, 0]] }]);
    let threads: ThreadStack[] = [oneFrameStack(BASE, 0x5000_0000), oneFrameStack(BASE + 0x10_0000, 0x5100_0000)];
    const scanner = new StackRootScanner(registry, () => threads);
    const first: number[] = [];
    scanner.scanRoots((b) => first.push(b), "collection");
    expect(first).toEqual([0x5000_0000, 0x5100_0000]);

    threads = [oneFrameStack(BASE + 0x20_0000, 0x5200_0000)];
    const second: number[] = [];
    scanner.walkStacks();
    expect(scanner.framesScanned).toBe(1);
    expect(scanner.lastWalkOf(0)?.pairs.baseSlots[0]).toBe(BASE + 0x20_0100);
    expect(scanner.lastWalkOf(1)).toBeUndefined();
    scanner.visitRoots((b) => second.push(b));
    expect(second).toEqual([0x5200_0000]);
    scanner.updateRoots((old) => old + 0x10);
    expect(threads[0]!.memory.readWord(BASE + 0x20_0100)).toBe(0x5200_0010);
    expect(scanner.rootsRelocated).toBe(1);
  });
});

/** `frames` 16-byte frames (ra 0x2000, the root at sp + 0 holding 0x5000_0000 + frame) from base + 0x100 up. */
function deepStack(base: number, memoryBytes: number, frames: number): ThreadStack {
  const memory = new SimulatedMemory(base, memoryBytes);
  const sp = base + 0x100;
  for (let f = 0; f < frames; f++) {
    memory.writeWord(sp + 24 * f, 0x5000_0000 + f);
    memory.writeWord(sp + 24 * f + 16, f === frames - 1 ? BOUNDARY : 0x2000);
  }
  return { memory, chunks: [{ sp, ra: 0x2000, boundaryRa: BOUNDARY }] };
}

describe("StackRootScanner sizes its work before the scan", () => {
  const safepoints = [{ ra: 0x2000, frameSizeBytes: 16, pairs: [[0, 0]] as [number, number][] }];

  it("gives each thread's pairs room for one pair per slot of its live stack before walking it, up to MAX_PRESIZED_PAIRS", () => {
    let threads = [deepStack(BASE, 0x2_0000, 3000)];
    const scanner = new StackRootScanner(syntheticRegistry(safepoints), () => threads);
    scanner.walkStacks();
    const first = scanner.lastWalkOf(0)!;
    expect([first.frames, first.pairs.count, first.pairs.baseValues[2999]]).toEqual([3000, 3000, 0x5000_0000 + 2999]);
    // Live stack: 0x2_0000 - 0x100 bytes = 16,352 slots; growing by doubling would stop at 4,096 pairs.
    expect(first.pairs.baseSlots.length).toBe(16_384);

    // A 16 MiB stack would need 2M pairs: the room made before the scan stops at the bound.
    threads = [deepStack(BASE, 16 << 20, 10)];
    scanner.walkStacks();
    expect(scanner.lastWalkOf(0)!.pairs.count).toBe(10);
    expect(scanner.lastWalkOf(0)!.pairs.baseSlots.length).toBe(MAX_PRESIZED_PAIRS);

    // A one-walk scanner leaves the columns to grow with the pairs found: 3,000 pairs, 4,096 of room.
    const oneWalk = new StackRootScanner(syntheticRegistry(safepoints), () => [deepStack(BASE, 0x2_0000, 3000)], { presizePairs: false });
    oneWalk.walkStacks();
    expect([oneWalk.lastWalkOf(0)!.pairs.count, oneWalk.lastWalkOf(0)!.pairs.baseSlots.length]).toEqual([3000, 4096]);
  });

  it("prepareScans builds the scan layout and the kernel binding, so the first scan allocates only its pairs", () => {
    const threads = [deepStack(BASE, 0x1000, 3)];
    // Without the cross-check, whose second walk has buffers of its own.
    const scanner = new StackRootScanner(syntheticRegistry(safepoints), () => threads, { crossCheck: false });
    const memory = scanMemory();
    const beforePrepare = memory.allocatedBytes;
    scanner.prepareScans();
    const prepared = memory.allocatedBytes;
    expect(prepared).toBeGreaterThan(beforePrepare);
    scanner.prepareScans();
    expect(memory.allocatedBytes).toBe(prepared);
    scanner.walkStacks();
    const pairs = scanner.lastWalkOf(0)!.pairs;
    expect(pairs.count).toBe(3);
    expect(memory.allocatedBytes - prepared).toBe(pairs.baseSlots.length * 32);
  });

  it("a thread whose SP is not a number fails each walk with a WalkError, its columns made no larger", () => {
    const threads: ThreadStack[] = [{ memory: new SimulatedMemory(BASE, 0x1000), chunks: [{ sp: Number.NaN, ra: 0x2000, boundaryRa: BOUNDARY }] }];
    const scanner = new StackRootScanner(syntheticRegistry(safepoints), () => threads, { crossCheck: false });
    expect(() => scanner.walkStacks()).toThrow("SP 0xNaN is outside the stack's memory");
    const afterFirst = scanMemory().allocatedBytes;
    for (let walk = 0; walk < 8; walk++) expect(() => scanner.walkStacks()).toThrow("SP 0xNaN is outside the stack's memory");
    // Room made for NaN bytes of stack once doubled the columns on every walk: 2^8 times the bytes.
    expect(scanMemory().allocatedBytes).toBe(afterFirst);
  });
});
