// Allocation path 5: a medium object (> one line) that does not fit the current hole goes to a
// separate overflow bump region in a clean block; small objects keep using the hole.
import { describe, expect, it } from "vitest";
import { BYTES_IN_BLOCK } from "../../gc/heap-constants.js";
import { allocOneLineObjects, blockOf, keepOnly, lineOf, makeHeap } from "./support/mock-vm.js";

describe("overflow allocation for medium objects", () => {
  it("puts a medium object that does not fit the hole into an overflow block and leaves the hole in place", () => {
    const t = makeHeap({ defrag: "never" });
    const objects = allocOneLineObjects(t, 256);
    // Lines 0 and 3 live: holes [2, 3) (one line) and [5, 256).
    keepOnly(t, objects, [0, 3]);
    t.collector.collect();
    const m = t.mutator;

    const small = m.alloc(0, 8); // takes the one-line hole [2, 3)
    expect(lineOf(small)).toBe(2);
    const holeBefore = m.hole();

    const medium = m.alloc(0, 400); // 408 bytes: more than a line, more than the hole has left
    expect(blockOf(medium)).toBe(1); // a clean block, the overflow region
    expect((medium - 8 - t.collector.space.base) % BYTES_IN_BLOCK).toBe(0);
    expect(m.hole()).toEqual(holeBefore); // the small-object hole is untouched

    const small2 = m.alloc(0, 8);
    expect(small2).toBe(small + 16); // small objects continue in the hole

    const medium2 = m.alloc(0, 400);
    expect(medium2).toBe(medium + 408); // the overflow region is bump-allocated too

    // Once the hole is [5, 256), a medium object that fits it goes there, on the fast path.
    while (m.hole().limit - m.hole().cursor >= 16) m.alloc(0, 8);
    m.alloc(0, 8);
    expect(lineOf(m.hole().cursor - 16)).toBe(5);
    const inHole = m.alloc(0, 400);
    expect(blockOf(inHole)).toBe(0);
    expect(lineOf(inHole)).toBe(5);
  });

  it("starts a new overflow block when a medium object does not fit the old one's rest", () => {
    const t = makeHeap({ defrag: "never" });
    const objects = allocOneLineObjects(t, 256);
    keepOnly(t, objects, [0, 3]);
    t.collector.collect();
    const m = t.mutator;
    m.alloc(0, 8);
    // 8184-byte storage: four fit one 32 KiB block, the fifth opens the next overflow block.
    const blocks = Array.from({ length: 5 }, () => blockOf(m.alloc(0, 8184 - 8)));
    expect(blocks).toEqual([1, 1, 1, 1, 2]);
  });
});
