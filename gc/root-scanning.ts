/*
 * What the collector needs from whoever knows where the roots are (the stack walker for thread
 * stacks, a list for globals). The collector declares it; `walker/` implements it; collector
 * tests use a mock over plain arrays. (After MMTk's src/vm/scanning.rs.)
 *
 * A collection uses a scanner in two phases, so that every root is read before any is written
 * (one slot can hold the base of a derived pointer and be a root of its own):
 *   1. scanRoots(visit): `visit` is called once per root with the address of the object it keeps
 *      alive (the base pointer; an interior or derived pointer is reported by its base).
 *   2. updateRoots(forward): after objects moved, the scanner rewrites every root slot it
 *      reported: base' = forward(base), derived' = base' + (derived - base).
 * Null (0) bases are never visited.
 *
 * The collector may call scanRoots more than once per collection (with `verify` on it reads the
 * roots before and after to compare the reachable graph), and outside one (verifyHeap,
 * graphChecksum): each call says why (RootScanReason), reports the current roots and replaces what
 * the previous call remembered; updateRoots follows the last scanRoots before it. `forward`
 * accepts any base this scanner reported and returns it unchanged if it did not move (large
 * objects, pinned objects, objects outside evacuation candidates).
 */
export interface RootScanner {
  scanRoots(visit: (baseAddress: number) => void, reason: RootScanReason): void;
  updateRoots(forward: (oldBaseAddress: number) => number): void;
  /**
   * Optional, for verification messages only (never on the scan path): where the `index`-th root
   * the last scanRoots visited (0-based, in visit order) lives, e.g. "thread #0, frame #1
   * rw_main+0x2a, stack slot 0x7ffd..." or "global slot 0x4040a0". Undefined if unknown.
   */
  describeRoot?(index: number): string | undefined;
}

/**
 * Why the collector calls scanRoots, so that a scanner (or what it reports to) needs no look at
 * the collector's state:
 *   "collection"    the one scan of a full collection whose roots are traced, then updated:
 *                   exactly one per collection, with the world stopped, followed by one updateRoots;
 *   "nursery-collection"  the same for a nursery collection (generational: old objects are
 *                   neither traced nor moved). A scanner may leave out roots it knows point to old
 *                   objects only: stack frames that have not run since the previous collection
 *                   (which left every object it traced old), found by return barriers;
 *   "verification"  a read of the roots to inspect the reachable graph (before and after a
 *                   collection with `verify` on, verifyHeap, graphChecksum): its roots are only
 *                   read, never traced or updated by it.
 */
export type RootScanReason = "collection" | "nursery-collection" | "verification";

/** Whether `reason` is a collection's own scan (traced, then updated), full or nursery. */
export function isCollectionScan(reason: RootScanReason): boolean {
  return reason !== "verification";
}
