import type { SafepointTable } from "./safepoint-table.js";

/*
 * A registry snapshot's per-frame lookup (RegistrySnapshot.find): return address -> the
 * safepoint's index in the snapshot, or -1, as a C table's lookup does it: one probe of the
 * table's keys and one load of the payload in the cell where the probe ends. This file builds
 * the two columns; the probe itself is written out in RegistrySnapshot.find over copies of these
 * fields held by the snapshot, so that no object sits between the snapshot and its key column
 * (one dependent load and one map check fewer per call than a probe method of this class).
 *
 * Invariants:
 *  - `addresses` is a copy of the table's key column (SafepointTable.addressColumn), so the
 *    hash (slotOfHalves with `shift`), capacity and probe order are the table's, and the index keeps
 *    answering for its snapshot after the table's memory was released for reuse
 *    (src/safepoints/registration-pool.ts);
 *  - `cells[c]` is the snapshot index of the safepoint keyed in cell c, and -1 for an empty cell:
 *    an address equal to an empty cell's 0 (the address 0) answers -1 with no test of its own;
 *  - the probe (i = hash; while addresses[i] != address: if addresses[i] == 0 miss; i = (i + 1) & mask)
 *    compares whole numbers: a fraction, a negative number or NaN equals no key, whatever its
 *    truncated halves hash to.
 *
 * Memory: 8 + 4 bytes per cell (capacity = the table's, 2 to 4 cells per safepoint), built at
 * the first miss of a snapshot's `find`.
 */

export class SafepointAddressIndex {
  private constructor(
    readonly addresses: Float64Array,
    readonly cells: Int32Array,
    readonly mask: number,
    readonly shift: number,
  ) {}

  /** An index of no address (two empty cells): a snapshot's until its first miss builds the real one. */
  static readonly UNBUILT = new SafepointAddressIndex(new Float64Array(2), new Int32Array(2).fill(-1), 1, 31);

  /** The index of `table`, each occupied cell answered with `indexOfCell(cell)` (built once, O(capacity)). */
  static of(table: SafepointTable, indexOfCell: (cell: number) => number): SafepointAddressIndex {
    const cells = new Int32Array(table.capacity).fill(-1);
    const keys = table.keys;
    for (let cell = 0; cell < table.capacity; cell++) {
      if ((keys[2 * cell]! | keys[2 * cell + 1]!) !== 0) cells[cell] = indexOfCell(cell);
    }
    return new SafepointAddressIndex(table.addressColumn.slice(), cells, table.capacity - 1, table.hashShift);
  }
}
