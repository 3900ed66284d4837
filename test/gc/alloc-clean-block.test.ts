// Allocation path 4: no hole left in any recyclable block -> a clean block, lowest free one first.
import { describe, expect, it } from "vitest";
import { BYTES_IN_BLOCK } from "../../gc/heap-constants.js";
import { BLOCK_MARKED, BLOCK_UNALLOCATED, BLOCK_UNMARKED } from "../../gc/heap-space.js";
import { HEAP_BASE, allocOneLineObjects, blockOf, keepOnly, makeHeap } from "./support/mock-vm.js";

describe("allocation takes a clean block", () => {
  it("takes the lowest free block, then the untouched ones above, each as one zeroed hole", () => {
    const t = makeHeap({ defrag: "never" });
    const objects = allocOneLineObjects(t, 3 * 256);
    // Block 0 dead, block 1 full and live, block 2 dead.
    keepOnly(
      t,
      objects,
      Array.from({ length: 256 }, (_, i) => 256 + i),
    );
    t.collector.collect();
    const s = t.collector.space;
    expect([s.blockState[0], s.blockState[1], s.blockState[2]]).toEqual([BLOCK_UNALLOCATED, BLOCK_MARKED, BLOCK_UNALLOCATED]);
    expect(s.immixTopBlock).toBe(2); // the dead block at the top was given back

    const first = t.mutator.alloc(0, 0);
    expect(first).toBe(HEAP_BASE + 8); // block 0: the lowest free block
    expect(s.blockState[0]).toBe(BLOCK_UNMARKED); // in use, liveness unknown until the next trace
    expect(t.mutator.hole().limit).toBe(HEAP_BASE + BYTES_IN_BLOCK); // the whole block is one hole
    expect(s.bytes.subarray(16, BYTES_IN_BLOCK).every((b) => b === 0)).toBe(true); // zeroed

    // Fill block 0; the next clean block is 2, above the full block 1.
    while (t.mutator.hole().limit - t.mutator.hole().cursor >= 128) t.mutator.alloc(0, 120);
    t.mutator.alloc(0, 120);
    expect(blockOf(t.mutator.hole().cursor - 1)).toBe(2);
  });

  it("collects when the mutators' budget (limit minus headroom) has no clean block left", () => {
    const t = makeHeap({ sizeBytes: 8 * BYTES_IN_BLOCK, headroomFraction: 0.125, defrag: "never" });
    // 8 blocks, 1 of headroom: 7 blocks for the mutator; garbage only, so collections free it all.
    for (let i = 0; i < 7 * 256; i++) t.mutator.alloc(0, 120);
    expect(t.collector.stats.collections).toBe(0);
    t.mutator.alloc(0, 120);
    expect(t.collector.stats.collections).toBe(1);
    expect(t.collector.stats.last!.reason).toBe("allocation failure");
    expect(t.collector.usedBytes).toBe(BYTES_IN_BLOCK);
  });
});
