import { InvalidArgumentError, hex } from "../errors.js";

/*
 * A flat open-addressing hash table from absolute return address to a (module, descriptor) pair.
 *
 * Invariants (after OCaml's runtime/frame_descriptors.c):
 *  - capacity is a power of two and at least twice the number of entries, so a probe sequence
 *    always reaches an empty slot and the expected probe length stays below 2;
 *  - a key is a return address: an integer in [1, 2^53), kept as its two u32 halves (keysLo,
 *    keysHi) so that a walker reading a return address as two words from a stack never forms a
 *    double; (0, 0) marks an empty slot;
 *  - linear probing; no deletion in place: removing entries rebuilds the table (registration and
 *    unregistration are rare, lookups are the hot path);
 *  - the slot index is the HIGH bits of a multiplicative mix of both 32-bit halves of the address
 *    (integer arithmetic only). Return addresses are often regularly spaced (the same call
 *    sequence repeated, functions aligned to 16); taking low bits of the address would put them
 *    into a few residue classes.
 *  - "not found" is -1, a normal answer: the caller decides whether that ends a walk or is an error.
 *
 * Values in two Int32Arrays (module slot, descriptor index).
 */

const MIN_LOG_CAPACITY = 4;
const MAX_ADDRESS = 2 ** 53;
const TWO_32 = 0x1_0000_0000;
const GOLDEN_32 = 0x9e3779b1;

export class SafepointTable {
  private logCapacity: number;
  private mask: number;
  /** Low and high u32 halves of each key; both 0 = empty. */
  keysLo: Uint32Array;
  keysHi: Uint32Array;
  moduleSlots: Int32Array;
  descriptorIndices: Int32Array;
  private entryCount = 0;

  constructor(expectedEntries = 0) {
    this.logCapacity = logCapacityFor(expectedEntries);
    this.mask = (1 << this.logCapacity) - 1;
    this.keysLo = new Uint32Array(1 << this.logCapacity);
    this.keysHi = new Uint32Array(1 << this.logCapacity);
    this.moduleSlots = new Int32Array(1 << this.logCapacity);
    this.descriptorIndices = new Int32Array(1 << this.logCapacity);
  }

  get size(): number {
    return this.entryCount;
  }
  get capacity(): number {
    return this.keysLo.length;
  }
  /** Bytes held by the table's arrays. */
  get sizeBytes(): number {
    return this.keysLo.byteLength + this.keysHi.byteLength + this.moduleSlots.byteLength + this.descriptorIndices.byteLength;
  }
  /** Shift that turns the 32-bit mix into a slot index (32 - log2 capacity). */
  get hashShift(): number {
    return 32 - this.logCapacity;
  }

  /** A copy that can be extended without disturbing readers of this one. */
  clone(extraEntries = 0): SafepointTable {
    const needed = logCapacityFor(this.entryCount + extraEntries);
    if (needed <= this.logCapacity) {
      const copy = Object.create(SafepointTable.prototype) as SafepointTable;
      copy.logCapacity = this.logCapacity;
      copy.mask = this.mask;
      copy.keysLo = this.keysLo.slice();
      copy.keysHi = this.keysHi.slice();
      copy.moduleSlots = this.moduleSlots.slice();
      copy.descriptorIndices = this.descriptorIndices.slice();
      copy.entryCount = this.entryCount;
      return copy;
    }
    const copy = new SafepointTable(this.entryCount + extraEntries);
    copy.insertAllFrom(this);
    return copy;
  }

  /** Home slot of `address` (where its probe sequence starts). */
  slotOf(address: number): number {
    return slotOfHalves(address >>> 0, (address / TWO_32) >>> 0, 32 - this.logCapacity);
  }

  /**
   * The table slot holding `address`, or -1. Use `moduleSlotAt`/`descriptorAt` on the result:
   * two typed-array reads, no allocation. Anything but an integer in [0, 2^53) is -1: the halves
   * of -8 or 0x401000.5 would otherwise be those of a real key (0xfffffff8, 0x401000).
   */
  find(address: number): number {
    const lo = address >>> 0;
    const hi = (address / TWO_32) >>> 0;
    if (hi * TWO_32 + lo !== address) return -1;
    return this.findHalves(lo, hi);
  }

  /** `find` of the address hi * 2^32 + lo, with integer arithmetic only. */
  findHalves(lo: number, hi: number): number {
    const keysLo = this.keysLo;
    const keysHi = this.keysHi;
    const mask = this.mask;
    let i = slotOfHalves(lo, hi, 32 - this.logCapacity);
    for (;;) {
      const kl = keysLo[i]!;
      const kh = keysHi[i]!;
      // (0, 0) marks an empty slot and is never a key: a lookup of 0 (a stack's end marker, a
      // zeroed slot) must not "find" an empty slot and its stale module and descriptor.
      if (kl === lo && kh === hi) return (lo | hi) === 0 ? -1 : i;
      if ((kl | kh) === 0) return -1;
      i = (i + 1) & mask;
    }
  }
  moduleSlotAt(slot: number): number {
    return this.moduleSlots[slot]!;
  }
  descriptorAt(slot: number): number {
    return this.descriptorIndices[slot]!;
  }

  /**
   * Adds `address`; returns -1 on success or the table slot of an existing entry with the same
   * address (nothing is changed then: the caller decides whether that is a duplicate error).
   */
  insert(address: number, moduleSlot: number, descriptorIndex: number): number {
    if (!Number.isInteger(address) || address <= 0 || address >= MAX_ADDRESS) {
      throw new InvalidArgumentError("return address", String(address), `an integer in [1, 2^53), e.g. ${hex(0x401000)}`);
    }
    const lo = address >>> 0;
    const hi = (address / TWO_32) >>> 0;
    // One probe sequence: it ends at the key (a duplicate) or at the empty slot the key goes to.
    const keysLo = this.keysLo;
    const keysHi = this.keysHi;
    let i = slotOfHalves(lo, hi, 32 - this.logCapacity);
    for (;;) {
      const kl = keysLo[i]!;
      const kh = keysHi[i]!;
      if ((kl | kh) === 0) break;
      if (kl === lo && kh === hi) return i;
      i = (i + 1) & this.mask;
    }
    if ((this.entryCount + 1) * 2 > keysLo.length) {
      this.grow();
      this.insertNew(lo, hi, moduleSlot, descriptorIndex);
      return -1;
    }
    this.fill(i, lo, hi, moduleSlot, descriptorIndex);
    return -1;
  }

  /** Puts a new entry into the empty slot `i`. */
  private fill(i: number, lo: number, hi: number, moduleSlot: number, descriptorIndex: number): void {
    this.keysLo[i] = lo;
    this.keysHi[i] = hi;
    this.moduleSlots[i] = moduleSlot;
    this.descriptorIndices[i] = descriptorIndex;
    this.entryCount++;
  }

  private insertNew(lo: number, hi: number, moduleSlot: number, descriptorIndex: number): void {
    const keysLo = this.keysLo;
    const keysHi = this.keysHi;
    let i = slotOfHalves(lo, hi, 32 - this.logCapacity);
    while ((keysLo[i]! | keysHi[i]!) !== 0) i = (i + 1) & this.mask;
    this.fill(i, lo, hi, moduleSlot, descriptorIndex);
  }

  private insertAllFrom(other: SafepointTable): void {
    for (let i = 0; i < other.keysLo.length; i++) {
      const lo = other.keysLo[i]!;
      const hi = other.keysHi[i]!;
      if ((lo | hi) !== 0) this.insertNew(lo, hi, other.moduleSlots[i]!, other.descriptorIndices[i]!);
    }
  }

  private grow(): void {
    const old = Object.create(SafepointTable.prototype) as SafepointTable;
    old.keysLo = this.keysLo;
    old.keysHi = this.keysHi;
    old.moduleSlots = this.moduleSlots;
    old.descriptorIndices = this.descriptorIndices;
    this.logCapacity++;
    this.mask = (1 << this.logCapacity) - 1;
    this.keysLo = new Uint32Array(1 << this.logCapacity);
    this.keysHi = new Uint32Array(1 << this.logCapacity);
    this.moduleSlots = new Int32Array(1 << this.logCapacity);
    this.descriptorIndices = new Int32Array(1 << this.logCapacity);
    this.entryCount = 0;
    this.insertAllFrom(old);
  }

  /** Every (address, module slot, descriptor index), in table order. */
  *entries(): IterableIterator<[address: number, moduleSlot: number, descriptorIndex: number]> {
    for (let i = 0; i < this.keysLo.length; i++) {
      const lo = this.keysLo[i]!;
      const hi = this.keysHi[i]!;
      if ((lo | hi) !== 0) yield [hi * TWO_32 + lo, this.moduleSlots[i]!, this.descriptorIndices[i]!];
    }
  }
}

/** Home slot of the key (lo, hi): the high bits of a multiplicative mix (`shift` = 32 - log2 capacity). */
export function slotOfHalves(lo: number, hi: number, shift: number): number {
  return Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), GOLDEN_32) >>> shift;
}

function logCapacityFor(entries: number): number {
  let log = MIN_LOG_CAPACITY;
  while (1 << log < entries * 2) log++;
  if (log > 30) throw new InvalidArgumentError("safepoint count", String(entries), "at most 2^29 safepoints in one table");
  return log;
}
