// Allocation path 1: bump allocation inside the current hole.
import { describe, expect, it } from "vitest";
import { BYTES_IN_BLOCK } from "../../gc/heap-constants.js";
import { HEAP_BASE, makeHeap } from "./support/mock-vm.js";

describe("bump allocation in a hole", () => {
  it("places consecutive objects back to back, each header right before its address", () => {
    const { collector: c, mutator: m } = makeHeap();
    const a = m.alloc(2, 10); // 8 header + 16 slots + 16 raw (10 padded) = 40
    const b = m.alloc(0, 0); // minimum storage: 8 header + 8 body = 16
    const d = m.alloc(1, 3); // 8 + 8 + 8 = 24
    expect(a).toBe(HEAP_BASE + 8); // first slot of block 0, header at the base
    expect(b).toBe(a + 40);
    expect(d).toBe(b + 16);
    expect(m.hole()).toEqual({ cursor: d - 8 + 24, limit: HEAP_BASE + BYTES_IN_BLOCK });

    // The header word: pointer slot count in the high half, raw byte count << 3 in the low half.
    expect(c.space.readWord(a - 8)).toBe(2 * 2 ** 32 + 10 * 8);
    expect(c.pointerSlotCount(a)).toBe(2);
    expect([c.readPointer(a, 0), c.readPointer(a, 1)]).toEqual([0, 0]);
    expect([...c.rawBytes(a)]).toEqual(new Array(10).fill(0)); // the hole was zeroed (the heap was poisoned)
    expect(c.rawBytes(b).length).toBe(0);
  });

  it("keeps every object 8-aligned whatever the raw byte count", () => {
    const { mutator: m } = makeHeap();
    let previous = m.alloc(0, 1);
    for (let raw = 2; raw < 40; raw++) {
      const next = m.alloc(0, raw);
      expect(next % 8).toBe(0);
      expect(next - previous).toBeGreaterThanOrEqual(16);
      previous = next;
    }
  });
});
