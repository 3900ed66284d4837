import { describe, expect, it } from "vitest";
import { RootPairs } from "../../walker/frame-roots.js";

describe("RootPairs frame records", () => {
  it("records one (frame, first pair) per frame with pairs, and maps every pair to its frame across growth", () => {
    const pairs = new RootPairs();
    // Frames 0..999; frame f has f % 4 pairs (so a quarter have none), 1500 pairs in all: grows past 256.
    const expected: number[] = [];
    for (let f = 0; f < 1000; f++) {
      for (let k = 0; k < f % 4; k++) {
        pairs.push(8 * expected.length, 8 * expected.length + 8, f, f * 16 + k);
        expected.push(f);
      }
    }
    expect(pairs.count).toBe(1500);
    expect(pairs.frameCount).toBe(750);
    expect([pairs.frameRecords[0], pairs.frameRecords[1], pairs.frameRecords[2], pairs.frameRecords[3]]).toEqual([1, 0, 2, 1]);
    for (let i = 0; i < pairs.count; i++) expect(pairs.frameOf(i)).toBe(expected[i]);
    pairs.clear();
    pairs.push(0, 0, 7, 0);
    expect([pairs.frameCount, pairs.frameOf(0)]).toEqual([1, 7]);
  });
});
