import { MAX_HOLES_IN_BLOCK } from "./heap-constants.js";
import { BLOCK_UNALLOCATED, type HeapSpace } from "./heap-space.js";

/** Returned by defragThreshold when no block is to be evacuated. */
export const NO_DEFRAG_THRESHOLD = MAX_HOLES_IN_BLOCK + 1;

/**
 * Defragmentation candidate selection, before marking (the paper's section 3.3; MMTk defrag.rs).
 *
 * `markHistogram[h]` is the number of marked lines, at the last sweep, in blocks with h holes.
 * Walking from the most holes down, each bucket's marked lines are added to what evacuation
 * would have to copy; the walk stops at the first bucket that would make that exceed
 * `availableLines`, the free lines evacuation can copy into (clean blocks within the limit,
 * headroom included). Returns the hole count of the last bucket taken: blocks with at least that
 * many holes are candidates. Blocks without holes never are; NO_DEFRAG_THRESHOLD means none is.
 */
export function defragThreshold(markHistogram: ArrayLike<number>, availableLines: number): number {
  let required = 0;
  let threshold = NO_DEFRAG_THRESHOLD;
  for (let holes = MAX_HOLES_IN_BLOCK; holes >= 1; holes--) {
    const lines = markHistogram[holes] ?? 0;
    if (lines === 0) continue; // no block has this many holes
    required += lines;
    if (required > availableLines) break;
    threshold = holes;
  }
  return threshold;
}

/**
 * Flags the candidates in `space.blockDefrag`: every block in use whose hole count (from the last
 * sweep) is at least `threshold`, or every block in use when `allBlocks` (stress mode). Returns
 * the flagged block indices.
 */
export function flagDefragCandidates(space: HeapSpace, threshold: number, allBlocks: boolean): number[] {
  const flagged: number[] = [];
  space.blockDefrag.fill(0);
  for (let b = 0; b < space.immixTopBlock; b++) {
    if (space.blockState[b] === BLOCK_UNALLOCATED) continue;
    if (allBlocks || space.blockHoles[b]! >= threshold) {
      space.blockDefrag[b] = 1;
      flagged.push(b);
    }
  }
  return flagged;
}
