import { TWO_32 } from "../bytes/word-codec.js";
import { type SafepointTable, slotOfHalves } from "./safepoint-table.js";

/*
 * A registry snapshot's per-frame lookup (RegistrySnapshot.find): return address -> the
 * safepoint's index in the snapshot, or -1, as a C table's lookup does it: one probe of the
 * table's keys and one load of the payload in the cell where the probe ends.
 *
 * Invariants:
 *  - `addresses` is a copy of the table's key column (SafepointTable.addressColumn), so the
 *    hash, capacity and probe order are the table's, and the index keeps answering for its
 *    snapshot after the table's memory was released for reuse (src/safepoints/registration-pool.ts);
 *  - `cells[c]` is the snapshot index of the safepoint keyed in cell c, and -1 for an empty cell:
 *    an address equal to an empty cell's 0 (the address 0) answers -1 with no test of its own;
 *  - one construction path and only number fields, so V8 gives every instance one map with
 *    unboxed fields: the probe reads them without the checks a table made three ways needs.
 */

const TWO_NEG_32 = 1 / TWO_32;

export class SafepointAddressIndex {
  private constructor(
    private readonly addresses: Float64Array,
    private readonly cells: Int32Array,
    private readonly mask: number,
    private readonly shift: number,
  ) {}

  /** The index of `table`, each occupied cell answered with `indexOfCell(cell)` (built once, O(capacity)). */
  static of(table: SafepointTable, indexOfCell: (cell: number) => number): SafepointAddressIndex {
    const cells = new Int32Array(table.capacity).fill(-1);
    const keys = table.keys;
    for (let cell = 0; cell < table.capacity; cell++) {
      if ((keys[2 * cell]! | keys[2 * cell + 1]!) !== 0) cells[cell] = indexOfCell(cell);
    }
    return new SafepointAddressIndex(table.addressColumn.slice(), cells, table.capacity - 1, table.hashShift);
  }

  /** The index of the safepoint at `address`, or -1 (also for anything but an integer in [1, 2^53)). */
  find(address: number): number {
    const addresses = this.addresses;
    let i = slotOfHalves(address >>> 0, (address * TWO_NEG_32) >>> 0, this.shift);
    for (;;) {
      const key = addresses[i]!;
      if (key === address) return this.cells[i]!;
      if (key === 0) return -1;
      i = (i + 1) & this.mask;
    }
  }
}
