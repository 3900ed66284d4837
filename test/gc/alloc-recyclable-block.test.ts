// Allocation path 3: when a block's holes are used up, the next recyclable block (before any clean block).
import { describe, expect, it } from "vitest";
import { BLOCK_REUSABLE } from "../../gc/heap-space.js";
import { allocOneLineObjects, blockOf, keepOnly, lineOf, makeHeap } from "./support/mock-vm.js";

describe("allocation moves to the next recyclable block", () => {
  it("fills the holes of reusable blocks in address order before touching a clean block", () => {
    const t = makeHeap({ defrag: "never" });
    const objects = allocOneLineObjects(t, 4 * 256); // blocks 0..3
    // Block 0: lines 0..249 live -> one hole [251, 256). Block 1: dead (freed). Block 2: lines
    // 0..199 live -> hole [201, 256). Block 3: line 0 live -> hole [2, 256).
    const keep = [...range(0, 250), ...range(512, 712), 768];
    keepOnly(t, objects, keep);
    t.collector.collect();
    const s = t.collector.space;
    expect([s.blockState[0], s.blockState[2], s.blockState[3]]).toEqual([BLOCK_REUSABLE, BLOCK_REUSABLE, BLOCK_REUSABLE]);

    const placed: [number, number][] = [];
    for (let i = 0; i < 5 + 55 + 3; i++) {
      const a = t.mutator.alloc(0, 120);
      placed.push([blockOf(a), lineOf(a) % 256]);
    }
    expect(placed.slice(0, 5)).toEqual(range(251, 256).map((l) => [0, l]));
    expect(placed.slice(5, 60)).toEqual(range(201, 256).map((l) => [2, l]));
    expect(placed.slice(60)).toEqual([2, 3, 4].map((l) => [3, l]));
    // Block 1 (clean) was not used while recyclable blocks had holes.
    expect(s.blockState[1]).toBe(0);
  });
});

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i);
}
