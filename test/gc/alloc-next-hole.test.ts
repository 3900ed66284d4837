// Allocation path 2: when the current hole is used up, the next hole of the same block.
import { describe, expect, it } from "vitest";
import { HEAP_BASE, allocOneLineObjects, keepOnly, lineOf, makeHeap } from "./support/mock-vm.js";

describe("allocation moves to the next hole of the block", () => {
  it("skips marked lines and the line after each (conservative marking), and abandons a hole's too-small rest", () => {
    const t = makeHeap({ defrag: "never" });
    const objects = allocOneLineObjects(t, 256); // block 0, object i on line i
    keepOnly(t, objects, [0, 10, 11, 50]);
    t.collector.collect();
    // Lines 0, 10, 11, 50 live; 1, 12 and 51 unavailable (a small object may spill into them):
    // holes [2, 10), [13, 50), [52, 256).
    const m = t.mutator;
    const lines: number[] = [];
    for (let i = 0; i < 7; i++) lines.push(lineOf(m.alloc(0, 120)));
    expect(lines).toEqual([2, 3, 4, 5, 6, 7, 8]);
    const almostFull = m.alloc(0, 112); // 120 bytes: 8 bytes of the hole [2, 10) left
    expect(lineOf(almostFull)).toBe(9);
    expect(m.hole().limit - m.hole().cursor).toBe(8);

    const next = m.alloc(0, 8); // 16 bytes do not fit the 8 left: next hole
    expect(lineOf(next - 8)).toBe(13);
    expect((next - 8 - HEAP_BASE) % 128).toBe(0); // at the hole's first byte

    // Use up [13, 50) and check the third hole starts at 52, not 51.
    while (m.hole().limit - m.hole().cursor >= 16) m.alloc(0, 8);
    expect(lineOf(m.alloc(0, 8) - 8)).toBe(52);
  });
});
