// Allocation path 6: objects above 8 KiB go to the large-object space: page runs at the top of
// the reservation, growing down, never moved, freed when dead and reused first-fit.
import { describe, expect, it } from "vitest";
import { BYTES_IN_BLOCK, BYTES_IN_LARGE_PAGE, MAX_IMMIX_OBJECT_BYTES } from "../../gc/heap-constants.js";
import { HEAP_BASE, blockOf, fillRaw, makeHeap, rawMatches } from "./support/mock-vm.js";

const SIZE = 32 * BYTES_IN_BLOCK;
const END = HEAP_BASE + SIZE;

describe("large-object allocation", () => {
  it("uses the Immix blocks up to 8 KiB of storage and the large-object space above", () => {
    const { mutator: m } = makeHeap({ sizeBytes: SIZE });
    const atLimit = m.alloc(0, MAX_IMMIX_OBJECT_BYTES - 8); // storage exactly 8 KiB
    expect(blockOf(atLimit)).toBe(0);
    const large = m.alloc(0, MAX_IMMIX_OBJECT_BYTES - 8 + 1); // 8 KiB + 8: three pages
    expect(large).toBe(END - 3 * BYTES_IN_LARGE_PAGE + 8);
    const larger = m.alloc(2, 20_000); // 8 + 16 + 20000 = 20024 bytes: five pages, below the first
    expect(larger).toBe(END - 8 * BYTES_IN_LARGE_PAGE + 8);
  });

  it("frees dead large objects, reuses their pages first-fit and never moves live ones", () => {
    const t = makeHeap({ sizeBytes: SIZE, stress: true, verify: true });
    const { collector: c, mutator: m, scanner } = t;
    const a = m.alloc(0, 3 * BYTES_IN_LARGE_PAGE); // 4 pages (header + 12 KiB)
    const b = m.alloc(1, 5 * BYTES_IN_LARGE_PAGE); // 6 pages
    const small = m.alloc(0, 16);
    fillRaw(c, small, 7);
    c.writePointer(b, 0, small); // a large object's slots are traced
    fillRaw(c, b, 3);
    scanner.roots = [b];
    const cycle = c.collect();
    expect(cycle.verifyFailures).toBe(0);
    expect(scanner.roots[0]).toBe(b); // never moved, even in stress mode
    const movedSmall = c.readPointer(b, 0);
    expect(movedSmall).not.toBe(small); // the small object it holds was evacuated
    expect(rawMatches(c, movedSmall, 7)).toBe(true);
    expect(rawMatches(c, b, 3)).toBe(true);
    expect(cycle.largeObjects).toBe(1);
    expect(cycle.largeFreedBytes).toBe(4 * BYTES_IN_LARGE_PAGE);
    expect(a).toBe(END - 4 * BYTES_IN_LARGE_PAGE + 8);

    // a's four pages are free: a three-page object takes them first-fit, zeroed.
    const c3 = m.alloc(0, 2 * BYTES_IN_LARGE_PAGE + 100);
    expect(c3).toBe(a);
    expect(c.rawBytes(c3).every((x) => x === 0)).toBe(true);
  });

  it("gives the pages back to the Immix blocks when the bottom of the space is free", () => {
    const t = makeHeap({ sizeBytes: 4 * BYTES_IN_BLOCK, headroomFraction: 0 });
    const { collector: c, mutator: m } = t;
    const big = m.alloc(0, 3 * BYTES_IN_BLOCK - 64); // three blocks' worth of pages
    expect(blockOf(big)).toBe(1);
    expect(() => {
      for (let i = 0; i < 2 * 256; i++) m.alloc(0, 120); // only one block is left for Immix
    }).not.toThrow(); // the dead large object is collected and its pages handed back
    expect(c.stats.collections).toBeGreaterThan(0);
    expect(c.space.los.pagesInUse).toBe(0);
  });
});
