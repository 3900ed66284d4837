// The heap verifier's offset -> traversal index (gc/traversal-index.ts): stamped entries, so
// nothing is cleared between traversals, yet no traversal ever sees what an earlier one reached:
// not in the same block, not in a page handed back and taken by another block, not after the
// stamps restart.
import { describe, expect, it } from "vitest";
import { BYTES_IN_BLOCK } from "../../gc/heap-constants.js";
import { TraversalIndex } from "../../gc/traversal-index.js";

const HEAP_BYTES = 16 * BYTES_IN_BLOCK;

describe("TraversalIndex", () => {
  it("answers for the objects of this traversal only", () => {
    const index = new TraversalIndex();
    index.begin(HEAP_BYTES);
    index.set(8, 0);
    index.set(3 * BYTES_IN_BLOCK + 64, 1);
    expect([index.get(8), index.get(3 * BYTES_IN_BLOCK + 64)]).toEqual([0, 1]);
    expect(index.get(16)).toBeLessThan(0);
    expect(index.get(12)).toBeLessThan(0); // misaligned: never an object's offset
    expect(index.get(HEAP_BYTES)).toBeLessThan(0);
    index.finish(2);

    index.begin(HEAP_BYTES);
    expect(index.get(8)).toBeLessThan(0);
    expect(index.get(3 * BYTES_IN_BLOCK + 64)).toBeLessThan(0);
    index.set(16, 0);
    expect(index.get(16)).toBe(0);
    expect(index.get(8)).toBeLessThan(0);
  });

  it("a page handed back carries nothing into the block that takes it next", () => {
    const index = new TraversalIndex();
    index.begin(HEAP_BYTES);
    // Block 2's page, every granule reached.
    for (let g = 1; g < BYTES_IN_BLOCK / 8; g++) index.set(2 * BYTES_IN_BLOCK + g * 8, g - 1);
    index.finish(BYTES_IN_BLOCK / 8 - 1);

    index.begin(HEAP_BYTES);
    index.set(5 * BYTES_IN_BLOCK + 8, 0); // takes the page block 2 gave back
    for (let g = 2; g < BYTES_IN_BLOCK / 8; g++) expect(index.get(5 * BYTES_IN_BLOCK + g * 8)).toBeLessThan(0);
    expect(index.anyInRange(5 * BYTES_IN_BLOCK + 16, 6 * BYTES_IN_BLOCK)).toBe(false);
    expect(index.anyInRange(5 * BYTES_IN_BLOCK, 5 * BYTES_IN_BLOCK + 16)).toBe(true);
    index.finish(1);
  });

  it("a traversal that stops midway (an exception) leaves nothing behind once finished", () => {
    const index = new TraversalIndex();
    index.begin(HEAP_BYTES);
    index.set(64, 0);
    index.set(128, 1);
    index.finish(2); // what inspectGraph's finally does with the count reached so far
    index.begin(HEAP_BYTES);
    expect(index.get(64)).toBeLessThan(0);
    expect(index.get(128)).toBeLessThan(0);
  });

  it("stamps restart with every entry cleared when they would pass 2^30", () => {
    const index = new TraversalIndex();
    index.begin(HEAP_BYTES);
    index.finish(2 ** 30 - 2); // as if that many objects had been reached so far
    index.begin(HEAP_BYTES);
    index.set(64, 5); // an entry above 2^30
    index.finish(10); // the stamps restart at 0
    index.begin(HEAP_BYTES);
    index.set(BYTES_IN_BLOCK + 8, 0); // takes block 0's page back
    expect(index.get(BYTES_IN_BLOCK + 8)).toBe(0);
    expect(index.get(BYTES_IN_BLOCK + 64)).toBeLessThan(0);
    index.finish(1);
  });

  it("anyInRange looks at the first block of the range only (no Immix object starts at a block's first granule)", () => {
    const index = new TraversalIndex();
    index.begin(HEAP_BYTES);
    index.set(5 * BYTES_IN_BLOCK + 8, 0); // page 1
    index.set(BYTES_IN_BLOCK - 16, 1); // block 0: page 2
    index.set(3 * BYTES_IN_BLOCK, 2); // page 3, first granule: the granule right after page 2's last
    expect(index.anyInRange(BYTES_IN_BLOCK - 24, BYTES_IN_BLOCK - 8)).toBe(true);
    expect(index.anyInRange(BYTES_IN_BLOCK - 8, BYTES_IN_BLOCK + 8)).toBe(false);
    index.finish(3);
  });
});
