// Evacuation runs out of headroom: the histograms (from the last sweep) underestimate what is
// live because the mutator refilled the holes since; once the copy allocator has no clean
// block left, every further object is marked in place, in the same trace.
import { describe, expect, it } from "vitest";
import { BYTES_IN_BLOCK } from "../../gc/heap-constants.js";
import { allocOneLineObjects, blockOf, fillRaw, keepOnly, makeHeap, rawMatches } from "./support/mock-vm.js";

describe("evacuation with exhausted headroom", () => {
  it("copies while clean blocks last, then marks the rest in place", () => {
    const t = makeHeap({ sizeBytes: 16 * BYTES_IN_BLOCK, defrag: "always", verify: true });
    const { collector: c, mutator: m, scanner } = t;
    const objects = allocOneLineObjects(t, 10 * 256); // blocks 0..9
    keepOnly(
      t,
      objects,
      Array.from({ length: 640 }, (_, i) => 4 * i),
    );
    c.collect(); // every block: 64 marked lines, 64 holes of 2 lines
    expect(c.space.markHistogram[64]).toBe(640);

    // Refill every hole: 10 blocks x 128 free lines, all kept alive.
    for (let i = 0; i < 1280; i++) scanner.roots.push(m.alloc(0, 120));
    expect(scanner.roots.every((o) => blockOf(o) <= 9)).toBe(true);
    scanner.roots.forEach((o, i) => fillRaw(c, o, i));
    const before = [...scanner.roots];

    // Selection sees 640 marked lines and 6 free blocks (1536 lines): all 10 blocks are
    // candidates. But 1920 objects are live: 1536 fit in the 6 clean blocks, 384 stay.
    const cycle = c.collect();
    expect(cycle.defragCandidateBlocks).toBe(10);
    expect(cycle.headroomExhausted).toBe(true);
    expect(cycle.evacuatedObjects).toBe(6 * 256);
    expect(cycle.markedInPlaceInCandidates).toBe(1920 - 6 * 256);
    expect(cycle.verifyFailures).toBe(0);
    let moved = 0;
    scanner.roots.forEach((o, i) => {
      if (o !== before[i]) {
        moved++;
        expect(blockOf(o)).toBeGreaterThanOrEqual(10);
      }
      expect(rawMatches(c, o, i)).toBe(true);
    });
    expect(moved).toBe(6 * 256);
    expect(cycle.usedBytes).toBeLessThanOrEqual(cycle.heapLimitBytes);
  });
});
