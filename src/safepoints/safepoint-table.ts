import { TWO_32, joinHalves } from "../bytes/word-codec.js";
import { InvalidArgumentError, hex } from "../errors.js";

/*
 * A flat open-addressing hash table from absolute return address to a (module, descriptor) pair.
 *
 * Invariants (after OCaml's runtime/frame_descriptors.c):
 *  - capacity is a power of two and at least twice the number of entries, so a probe sequence
 *    always reaches an empty slot and the expected probe length stays below 2;
 *  - a key is a return address: an integer in [1, 2^53), kept as its two u32 halves so that a
 *    walker reading a return address as two words from a stack never forms a double; (0, 0)
 *    marks an empty slot;
 *  - slot i is keys[2i] (lo), keys[2i + 1] (hi), values[2i] (module slot), values[2i + 1]
 *    (descriptor index): the key's two halves in one 8-byte cell, as a u64 key would be, so a
 *    probe reads one cache line, and a miss (which never reads a value) touches only the keys;
 *  - `addresses[i]` is slot i's key as a double (0 = empty): `find` of a double compares it with one
 *    load and one compare, as the C reference compares one u64, with no integer check (a double
 *    that is not an integer in [1, 2^53) equals no key). Measured (bench/HISTORY.md, "Issue 19, lookups"): the
 *    split-and-check path cost 64 instructions and 26 cycles per hit, this one 47 and 19. The
 *    price is 8 bytes per slot outside the scan path (the scan layout copies `keys` only);
 *  - linear probing; no deletion in place: removing entries rebuilds the table (registration and
 *    unregistration are rare, lookups are the hot path);
 *  - the slot index is the HIGH bits of a multiplicative mix of both 32-bit halves of the address
 *    (integer arithmetic only). Return addresses are often regularly spaced (the same call
 *    sequence repeated, functions aligned to 16); taking low bits of the address would put them
 *    into a few residue classes.
 *  - "not found" is -1, a normal answer: the caller decides whether that ends a walk or is an error.
 *
 */

const MIN_LOG_CAPACITY = 4;
const MAX_ADDRESS = 2 ** 53;
/** 2^-32: `x * TWO_NEG_32` is exact (a power of two), unlike a division, and cheaper. */
const TWO_NEG_32 = 1 / TWO_32;
/** The hash's two multipliers (slotOfHalves; RegistrySnapshot.find writes the same hash out). */
export const GOLDEN_32 = 0x9e3779b1;
export const MIX_HI_32 = 0x85ebca6b;

export class SafepointTable {
  private logCapacity: number;
  private mask: number;
  /** Two u32 per slot: key lo, key hi (both 0 = empty). */
  keys: Uint32Array;
  /** Two u32 per slot: module slot, descriptor index. */
  values: Uint32Array;
  /** One f64 per slot: the key of `keys` as a number (0 = empty), what `find` compares. */
  private addresses: Float64Array;
  private entryCount = 0;

  constructor(expectedEntries = 0) {
    this.logCapacity = logCapacityFor(expectedEntries);
    this.mask = (1 << this.logCapacity) - 1;
    this.keys = new Uint32Array(2 * this.capacity);
    this.values = new Uint32Array(2 * this.capacity);
    this.addresses = new Float64Array(this.capacity);
  }

  /**
   * A table made elsewhere with this class's invariants and layout (capacity `keys.length / 2`, a
   * power of two, at least twice `entries`; the same hash and probe order): the scan kernel's
   * stack map index (src/safepoints/kernel-index.ts) fills these columns in the scan memory.
   */
  static fromColumns(keys: Uint32Array, values: Uint32Array, addresses: Float64Array, entries: number): SafepointTable {
    const table = Object.create(SafepointTable.prototype) as SafepointTable;
    table.logCapacity = Math.log2(keys.length / 2);
    table.mask = keys.length / 2 - 1;
    table.keys = keys;
    table.values = values;
    table.addresses = addresses;
    table.entryCount = entries;
    return table;
  }

  /** log2 of the capacity of a table made for `entries` (what `new SafepointTable(entries)` has). */
  static logCapacityFor(entries: number): number {
    return logCapacityFor(entries);
  }

  get size(): number {
    return this.entryCount;
  }
  get capacity(): number {
    return 1 << this.logCapacity;
  }
  /** Bytes held by the table's arrays. */
  get sizeBytes(): number {
    return this.keys.byteLength + this.values.byteLength + this.addresses.byteLength;
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
      copy.keys = this.keys.slice();
      copy.values = this.values.slice();
      copy.addresses = this.addresses.slice();
      copy.entryCount = this.entryCount;
      return copy;
    }
    const copy = new SafepointTable(this.entryCount + extraEntries);
    copy.insertAllFrom(this);
    return copy;
  }

  /** Home slot of `address` (where its probe sequence starts). */
  slotOf(address: number): number {
    return slotOfHalves(address >>> 0, (address * TWO_NEG_32) >>> 0, 32 - this.logCapacity);
  }

  /**
   * The table slot holding `address`, or -1. Use `moduleSlotAt`/`descriptorAt` on the result:
   * two typed-array reads, no allocation. Anything but an integer in [0, 2^53) is -1: the halves
   * of -8 or 0x401000.5 would otherwise be those of a real key (0xfffffff8, 0x401000).
   */
  find(address: number): number {
    const addresses = this.addresses;
    const mask = this.mask;
    // A non-integer or out-of-range address hashes somewhere (its truncated halves) and equals
    // no key there. 0 equals the first empty slot's 0 and is no key: that match answers -1.
    let i = slotOfHalves(address >>> 0, (address * TWO_NEG_32) >>> 0, 32 - this.logCapacity);
    for (;;) {
      const key = addresses[i]!;
      if (key === address) return address === 0 ? -1 : i;
      if (key === 0) return -1;
      i = (i + 1) & mask;
    }
  }

  /** Per cell, its key as a number (0 = empty): the column `find` compares (read-only by convention). */
  get addressColumn(): Float64Array {
    return this.addresses;
  }

  /** `find` of the address hi * 2^32 + lo, with integer arithmetic only. */
  findHalves(lo: number, hi: number): number {
    const keys = this.keys;
    const mask = this.mask;
    let i = slotOfHalves(lo, hi, 32 - this.logCapacity);
    for (;;) {
      const kl = keys[2 * i]!;
      const kh = keys[2 * i + 1]!;
      // (0, 0) marks an empty slot and is never a key: a lookup of 0 (a stack's end marker, a
      // zeroed slot) must not "find" an empty slot and its stale module and descriptor.
      if (kl === lo && kh === hi) return (lo | hi) === 0 ? -1 : i;
      if ((kl | kh) === 0) return -1;
      i = (i + 1) & mask;
    }
  }
  moduleSlotAt(slot: number): number {
    return this.values[2 * slot]!;
  }
  descriptorAt(slot: number): number {
    return this.values[2 * slot + 1]!;
  }

  /**
   * Adds `address`; returns -1 on success or the table slot of an existing entry with the same
   * address (nothing is changed then: the caller decides whether that is a duplicate error).
   */
  insert(address: number, moduleSlot: number, descriptorIndex: number): number {
    if (!Number.isInteger(address) || address <= 0 || address >= MAX_ADDRESS) {
      throw new InvalidArgumentError("return address", String(address), `an integer in [1, 2^53), e.g. ${hex(0x401000)}`);
    }
    if ((this.entryCount + 1) * 2 > this.capacity) this.grow();
    return this.insertHalves(address >>> 0, (address * TWO_NEG_32) >>> 0, moduleSlot, descriptorIndex);
  }

  /**
   * One probe sequence: the slot of an existing entry for (lo, hi) (nothing changed), or -1 after
   * writing the new entry into the first empty slot. The caller keeps capacity >= 2x entries.
   */
  private insertHalves(lo: number, hi: number, moduleSlot: number, descriptorIndex: number): number {
    const keys = this.keys;
    const mask = this.mask;
    let i = slotOfHalves(lo, hi, 32 - this.logCapacity);
    for (;;) {
      const kl = keys[2 * i]!;
      const kh = keys[2 * i + 1]!;
      if ((kl | kh) === 0) {
        keys[2 * i] = lo;
        keys[2 * i + 1] = hi;
        this.values[2 * i] = moduleSlot;
        this.values[2 * i + 1] = descriptorIndex;
        this.addresses[i] = joinHalves(lo, hi);
        this.entryCount++;
        return -1;
      }
      if (kl === lo && kh === hi) return i;
      i = (i + 1) & mask;
    }
  }

  private insertAllFrom(other: SafepointTable): void {
    const keys = other.keys;
    const values = other.values;
    for (let at = 0; at < keys.length; at += 2) {
      const lo = keys[at]!;
      const hi = keys[at + 1]!;
      if ((lo | hi) !== 0) this.insertHalves(lo, hi, values[at]!, values[at + 1]!);
    }
  }

  private grow(): void {
    const old = Object.create(SafepointTable.prototype) as SafepointTable;
    old.keys = this.keys;
    old.values = this.values;
    this.logCapacity++;
    this.mask = (1 << this.logCapacity) - 1;
    this.keys = new Uint32Array(2 * this.capacity);
    this.values = new Uint32Array(2 * this.capacity);
    this.addresses = new Float64Array(this.capacity);
    this.entryCount = 0;
    this.insertAllFrom(old);
  }

  /** Every (address, module slot, descriptor index), in table order. */
  *entriesInOrder(): IterableIterator<[address: number, moduleSlot: number, descriptorIndex: number]> {
    const keys = this.keys;
    for (let at = 0; at < keys.length; at += 2) {
      const lo = keys[at]!;
      const hi = keys[at + 1]!;
      if ((lo | hi) !== 0) yield [joinHalves(lo, hi), this.values[at]!, this.values[at + 1]!];
    }
  }
}

/**
 * Home slot of the key (lo, hi): the high bits of a multiplicative mix (`shift` = 32 - log2 capacity).
 * RegistrySnapshot.find (registry.ts) writes this same expression out inline, for its per-call
 * cost; test/safepoints/snapshot-find.test.ts fails if the two ever differ (every hit would miss).
 */
export function slotOfHalves(lo: number, hi: number, shift: number): number {
  return Math.imul(lo ^ Math.imul(hi, MIX_HI_32), GOLDEN_32) >>> shift;
}

function logCapacityFor(entries: number): number {
  let log = MIN_LOG_CAPACITY;
  while (1 << log < entries * 2) log++;
  // 2^29 slots of two u32 keys: 4 GiB of keys, past what a typed array may hold.
  if (log > 28) throw new InvalidArgumentError("safepoint count", String(entries), "at most 2^27 safepoints in one table");
  return log;
}
