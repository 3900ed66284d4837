import { describe, expect, it } from "vitest";
import { SimulatedMemory } from "../../src/memory/memory.js";
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
