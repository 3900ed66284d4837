// Stress mode: every collection evacuates every movable object (every block in use is a
// candidate, the copy may use the whole reservation); pinned and large objects stay.
import { describe, expect, it } from "vitest";
import { BYTES_IN_BLOCK } from "../../gc/heap-constants.js";
import { fillRaw, makeHeap, rawMatches } from "./support/mock-vm.js";

describe("stress mode", () => {
  it("moves every movable object at every collection and keeps the graph intact", () => {
    const t = makeHeap({ stress: true, verify: true, sizeBytes: 64 * BYTES_IN_BLOCK });
    const { collector: c, mutator: m, scanner } = t;
    // A doubly linked ring of 1000 objects of mixed sizes, some medium, plus two large objects.
    const ring: number[] = [];
    for (let i = 0; i < 1000; i++) {
      const o = m.alloc(2, i % 50 === 0 ? 1000 : 8 + (i % 40));
      fillRaw(c, o, i);
      ring.push(o);
    }
    ring.forEach((o, i) => {
      c.writePointer(o, 0, ring[(i + 1) % ring.length]!);
      c.writePointer(o, 1, ring[(i + ring.length - 1) % ring.length]!);
    });
    const large = m.alloc(1, 20_000);
    c.writePointer(large, 0, ring[500]!);
    c.pin(ring[10]!);
    c.pin(ring[700]!);
    scanner.roots = [ring[0]!, large];
    for (let i = 0; i < 100; i++) m.alloc(1, 64); // garbage
    const checksum = c.graphChecksum();

    for (let round = 0; round < 4; round++) {
      const before = collectRing(t.collector, scanner.roots[0]!);
      const cycle = c.collect();
      expect(cycle.verifyFailures).toBe(0);
      expect(cycle.evacuatedObjects).toBe(1000 - 2);
      expect(cycle.markedInPlaceInCandidates).toBe(2);
      expect(cycle.markedObjects).toBe(1000 + 1);
      const after = collectRing(t.collector, scanner.roots[0]!);
      after.forEach((o, i) => {
        const pinned = i === 10 || i === 700;
        expect(o === before[i]).toBe(pinned);
        expect(rawMatches(c, o, i)).toBe(true);
        expect(c.readPointer(o, 1)).toBe(after[(i + 999) % 1000]);
      });
      expect(scanner.roots[1]).toBe(large);
      expect(c.readPointer(large, 0)).toBe(after[500]);
      expect(c.graphChecksum()).toBe(checksum);
      expect(c.verifyHeap().failures).toBe(0);
    }
  });
});

function collectRing(c: import("../../gc/immix-collector.js").ImmixCollector, first: number): number[] {
  const out = [first];
  for (let o = c.readPointer(first, 0); o !== first; o = c.readPointer(o, 0)) out.push(o);
  return out;
}
