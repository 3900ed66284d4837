// After a sweep: line marks (conservative), block states, unavailable lines, holes, histograms
// and the statistics derived from them.
import { describe, expect, it } from "vitest";
import { BYTES_IN_BLOCK, LINES_IN_BLOCK } from "../../gc/heap-constants.js";
import { BLOCK_MARKED, BLOCK_REUSABLE, BLOCK_UNALLOCATED } from "../../gc/heap-space.js";
import { allocOneLineObjects, keepOnly, makeHeap } from "./support/mock-vm.js";

describe("line and block states after a sweep", () => {
  it("classifies blocks as full, reusable (with unavailable lines and holes) or free", () => {
    const t = makeHeap({ defrag: "never", sizeBytes: 16 * BYTES_IN_BLOCK, headroomFraction: 0 });
    const objects = allocOneLineObjects(t, 4 * 256);
    // Block 0: all live (full). Block 1: every 4th line live (64 holes of 2 lines).
    // Block 2: dead. Block 3: lines 0..99 live (one hole: [101, 256)).
    const keep = [
      ...Array.from({ length: 256 }, (_, i) => i),
      ...Array.from({ length: 64 }, (_, i) => 256 + 4 * i),
      ...Array.from({ length: 100 }, (_, i) => 768 + i),
    ];
    keepOnly(t, objects, keep);
    const cycle = t.collector.collect();
    const s = t.collector.space;

    expect(Array.from(s.blockState.subarray(0, 4))).toEqual([BLOCK_MARKED, BLOCK_REUSABLE, BLOCK_UNALLOCATED, BLOCK_REUSABLE]);
    expect(Array.from(s.blockHoles.subarray(0, 4))).toEqual([0, 64, 0, 1]);
    // Unavailable = marked + the line after each marked line.
    expect(s.blockUnavailableLines[1]).toBe(128);
    expect(s.blockUnavailableLines[3]).toBe(101);
    // Line marks hold this collection's epoch for live lines only.
    const line = (b: number, l: number): number => s.lineMarks[b * LINES_IN_BLOCK + l]!;
    expect([line(1, 0), line(1, 1), line(1, 4)]).toEqual([s.epoch, 0, s.epoch]);
    expect(line(3, 99)).toBe(s.epoch);
    expect(line(3, 100)).not.toBe(s.epoch);
    // Histograms: marked and free lines by hole count.
    expect(s.markHistogram[0]).toBe(256);
    expect(s.markHistogram[64]).toBe(64);
    expect(s.markHistogram[1]).toBe(100);
    expect(s.availableHistogram[64]).toBe(128);
    expect(s.availableHistogram[1]).toBe(155);

    expect(cycle).toMatchObject({ blocksFull: 1, blocksReusable: 2, blocksFreed: 1, blocksInUse: 3, markedLines: 256 + 64 + 100, reusableLines: 128 + 155 });
    expect(cycle.markedObjects).toBe(keep.length);
    expect(cycle.fragmentation).toBeCloseTo((128 + 155) / (16 * LINES_IN_BLOCK), 10);
    expect(cycle.blocksFree).toBe(16 - 3);
  });

  it("marks every line of a medium object and only the first line of a small one", () => {
    const t = makeHeap({ defrag: "never" });
    const m = t.mutator;
    const small = m.alloc(0, 112); // 120 bytes at offset 0: line 0 only
    const straddling = m.alloc(0, 40); // 48 bytes at offset 120: starts in line 0, spills into line 1
    m.alloc(0, 1000); // garbage, lines 1..9
    const medium = m.alloc(1, 500); // 8 + 8 + 504 = 520 bytes, from offset 1176 (line 9) to 1695 (line 13)
    t.scanner.roots = [small, straddling, medium];
    t.collector.collect();
    const s = t.collector.space;
    const e = s.epoch;
    const marked = Array.from(s.lineMarks.subarray(0, 16))
      .map((x, l) => (x === e ? l : -1))
      .filter((l) => l >= 0);
    expect(marked).toEqual([0, 9, 10, 11, 12, 13]);
    // Line 1 is not marked, but not available either: the straddling object lives in it.
    expect(s.firstAvailableLine(0, 256)).toBe(2);
    expect(s.firstUnavailableLine(2, 256)).toBe(9);
    expect(s.firstAvailableLine(9, 256)).toBe(15);
  });
});
