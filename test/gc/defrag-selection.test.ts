// Defragmentation candidates, chosen before marking from the last sweep's histograms: from the
// most holes down, until the marked lines to evacuate would exceed the free lines to copy into.
import { describe, expect, it } from "vitest";
import { NO_DEFRAG_THRESHOLD, defragThreshold } from "../../gc/defrag.js";
import { BYTES_IN_BLOCK, MAX_HOLES_IN_BLOCK } from "../../gc/heap-constants.js";
import { allocOneLineObjects, blockOf, fillRaw, keepOnly, makeHeap, rawMatches } from "./support/mock-vm.js";

function histogram(entries: Record<number, number>): Uint32Array {
  const h = new Uint32Array(MAX_HOLES_IN_BLOCK + 1);
  for (const [holes, lines] of Object.entries(entries)) h[Number(holes)] = lines;
  return h;
}

describe("defragmentation candidate selection", () => {
  it.each([
    // [marked lines by hole count, free lines available, threshold]
    [{}, 1000, NO_DEFRAG_THRESHOLD], // nothing fragmented
    [{ 0: 5000 }, 1000, NO_DEFRAG_THRESHOLD], // blocks without holes are never candidates
    [{ 10: 100 }, 100, 10], // exactly fits
    [{ 10: 101 }, 100, NO_DEFRAG_THRESHOLD], // one line too many
    [{ 128: 5, 3: 50, 2: 1 }, 55, 3],
    [{ 128: 5, 3: 50, 2: 1 }, 56, 2],
    [{ 128: 5, 3: 50, 2: 1 }, 4, NO_DEFRAG_THRESHOLD],
    [{ 64: 128, 8: 432, 1: 128 }, 512, 64],
    [{ 64: 128, 8: 432, 1: 128 }, 2816, 1],
  ] as const)("histogram %j with %d free lines -> at least %d holes", (entries, available, expected) => {
    expect(defragThreshold(histogram(entries), available)).toBe(expected);
  });

  /**
   * Blocks 0-1: every 4th line live (64 holes, 64 marked lines each); blocks 2-3: 27 of every 32
   * lines live (8 holes, 216 marked lines each); block 4: lines 0-127 live (1 hole).
   */
  function fragmentedHeap(heapBlocks: number) {
    const t = makeHeap({ sizeBytes: heapBlocks * BYTES_IN_BLOCK, defrag: "always", verify: true });
    const objects = allocOneLineObjects(t, 5 * 256);
    const keep: number[] = [];
    for (let l = 0; l < 256; l++) {
      if (l % 4 === 0) keep.push(l, 256 + l);
      if (l % 32 < 27) keep.push(512 + l, 768 + l);
      if (l < 128) keep.push(1024 + l);
    }
    keepOnly(t, objects, keep);
    t.scanner.roots.forEach((o, i) => fillRaw(t.collector, o, i));
    t.collector.collect(); // the first sweep builds the histograms; nothing is selected yet
    expect(t.collector.stats.last!.defragCandidateBlocks).toBe(0);
    expect(t.collector.stats.last!.evacuatedObjects).toBe(0);
    return t;
  }

  it("evacuates only the most fragmented blocks when two clean blocks are free", () => {
    const t = fragmentedHeap(7); // 5 blocks in use, 2 free (one of them the headroom)
    const before = [...t.scanner.roots];
    const cycle = t.collector.collect();
    expect(cycle.defragThresholdHoles).toBe(64);
    expect(t.collector.lastDefragCandidates).toEqual([0, 1]);
    expect(cycle.evacuatedObjects).toBe(128);
    expect(cycle.headroomExhausted).toBe(false);
    expect(cycle.verifyFailures).toBe(0);
    t.scanner.roots.forEach((now, i) => {
      const was = before[i]!;
      if (blockOf(was) <= 1)
        expect(blockOf(now)).toBeGreaterThan(4); // moved into a clean block
      else expect(now).toBe(was);
      expect(rawMatches(t.collector, now, i)).toBe(true);
    });
    // The two candidates are free now; 128 one-line objects fill half a block.
    expect(t.collector.space.blockState[0]).toBe(0);
    expect(t.collector.space.blockState[1]).toBe(0);
    expect(cycle.blocksInUse).toBe(4);
  });

  it("walks further down the histogram when more free lines are available", () => {
    const t = fragmentedHeap(16);
    const cycle = t.collector.collect();
    expect(cycle.defragThresholdHoles).toBe(1);
    expect(t.collector.lastDefragCandidates).toEqual([0, 1, 2, 3, 4]);
    expect(cycle.evacuatedObjects).toBe(t.scanner.roots.length);
    expect(cycle.verifyFailures).toBe(0);
  });
});
