// Opportunistic evacuation with pinned objects: pinned objects in candidate blocks are marked in
// place, everything else there is copied, and pointers both ways are fixed.
import { describe, expect, it } from "vitest";
import { CollectorError } from "../../gc/collector-error.js";
import { BYTES_IN_BLOCK } from "../../gc/heap-constants.js";
import { BLOCK_REUSABLE, BLOCK_UNALLOCATED } from "../../gc/heap-space.js";
import { catchError } from "../support/catch-error.js";
import { blockOf, fillRaw, lineOf, makeHeap, rawMatches } from "./support/mock-vm.js";

describe("evacuation with pinned objects", () => {
  it("leaves pinned objects where they are and moves their neighbours", () => {
    const t = makeHeap({ sizeBytes: 8 * BYTES_IN_BLOCK, defrag: "always", verify: true });
    const { collector: c, mutator: m, scanner } = t;
    // 512 one-line objects with one pointer slot each (8 + 8 + 112 = 128 bytes): blocks 0 and 1.
    const objects = Array.from({ length: 512 }, () => m.alloc(1, 112));
    const kept = objects.filter((_, i) => i % 4 === 0); // 64 holes per block
    kept.forEach((o, i) => fillRaw(c, o, i));
    const pinnedA = objects[0]!; // block 0, line 0
    const pinnedB = objects[260]!; // block 1, line 4
    const movable = objects[256]!; // block 1, line 0
    c.writePointer(pinnedA, 0, movable); // pinned -> movable
    c.writePointer(movable, 0, pinnedB); // movable -> pinned
    c.pin(pinnedA);
    c.pin(pinnedB);
    expect(c.isPinned(pinnedA)).toBe(true);
    scanner.roots = [...kept];
    c.collect(); // builds the histograms

    const cycle = c.collect();
    expect(c.lastDefragCandidates).toEqual([0, 1]);
    expect(cycle.verifyFailures).toBe(0);
    expect(cycle.markedInPlaceInCandidates).toBe(2);
    expect(cycle.evacuatedObjects).toBe(kept.length - 2);
    expect(scanner.roots[0]).toBe(pinnedA);
    expect(scanner.roots[65]).toBe(pinnedB);
    const movedMovable = c.readPointer(pinnedA, 0);
    expect(movedMovable).not.toBe(movable);
    expect(blockOf(movedMovable)).toBeGreaterThan(1);
    expect(c.readPointer(movedMovable, 0)).toBe(pinnedB);
    scanner.roots.forEach((o, i) => expect(rawMatches(c, o, i)).toBe(true));
    // Each candidate block keeps exactly its pinned object's line live.
    const s = c.space;
    expect([s.blockState[0], s.blockState[1]]).toEqual([BLOCK_REUSABLE, BLOCK_REUSABLE]);
    expect(s.lineMarks[lineOf(pinnedA)]).toBe(s.epoch);
    expect(s.lineMarks[lineOf(pinnedB)]).toBe(s.epoch);
    expect(s.lineMarks[lineOf(movable)]).not.toBe(s.epoch);

    // Unpinned, it moves at the next defragmenting collection.
    c.unpin(pinnedA);
    c.unpin(pinnedB);
    c.collect();
    expect(scanner.roots[0]).not.toBe(pinnedA);
    expect(scanner.roots[65]).not.toBe(pinnedB);
    expect(c.readPointer(c.readPointer(scanner.roots[0]!, 0), 0)).toBe(scanner.roots[65]);
    expect(s.blockState[0]).toBe(BLOCK_UNALLOCATED);
    expect(c.stats.last!.verifyFailures).toBe(0);
  });

  it("refuses to pin an address that is not an object", () => {
    const { collector: c, mutator: m } = makeHeap();
    m.alloc(0, 8);
    const error = catchError(() => c.pin(c.space.base + 5 * BYTES_IN_BLOCK + 8));
    expect(error).toBeInstanceOf(CollectorError);
    expect((error as CollectorError).kind).toBe("BAD_POINTER");
  });
});
