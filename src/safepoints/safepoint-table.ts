import { InvalidArgumentError, hex } from "../errors.js";

/*
 * A flat open-addressing hash table from absolute return address to a (module, descriptor) pair.
 *
 * Invariants (after OCaml's runtime/frame_descriptors.c):
 *  - capacity is a power of two and at least twice the number of entries, so a probe sequence
 *    always reaches an empty slot and the expected probe length stays below 2;
 *  - a key is a return address: an integer in [1, 2^53). 0 marks an empty slot;
 *  - linear probing; no deletion in place: removing entries rebuilds the table (registration and
 *    unregistration are rare, lookups are the hot path);
 *  - the slot index is the HIGH bits of a multiplicative mix of both 32-bit halves of the address.
 *    Return addresses are often regularly spaced (the same call sequence repeated, functions
 *    aligned to 16); taking low bits of the address would put them into a few residue classes.
 *  - "not found" is -1, a normal answer: the caller decides whether that ends a walk or is an error.
 *
 * Keys live in a Float64Array (exact for integers below 2^53); values in two Int32Arrays.
 */

const EMPTY = 0;
const MIN_LOG_CAPACITY = 4;
const MAX_ADDRESS = 2 ** 53;
const GOLDEN_32 = 0x9e3779b1;

export class SafepointTable {
  private logCapacity: number;
  private mask: number;
  private keys: Float64Array;
  private moduleSlots: Int32Array;
  private descriptorIndices: Int32Array;
  private entryCount = 0;

  constructor(expectedEntries = 0) {
    this.logCapacity = logCapacityFor(expectedEntries);
    this.mask = (1 << this.logCapacity) - 1;
    this.keys = new Float64Array(1 << this.logCapacity);
    this.moduleSlots = new Int32Array(1 << this.logCapacity);
    this.descriptorIndices = new Int32Array(1 << this.logCapacity);
  }

  get size(): number {
    return this.entryCount;
  }
  get capacity(): number {
    return this.keys.length;
  }
  /** Bytes held by the table's arrays. */
  get sizeBytes(): number {
    return this.keys.byteLength + this.moduleSlots.byteLength + this.descriptorIndices.byteLength;
  }

  /** A copy that can be extended without disturbing readers of this one. */
  clone(extraEntries = 0): SafepointTable {
    const needed = logCapacityFor(this.entryCount + extraEntries);
    if (needed <= this.logCapacity) {
      const copy = Object.create(SafepointTable.prototype) as SafepointTable;
      copy.logCapacity = this.logCapacity;
      copy.mask = this.mask;
      copy.keys = this.keys.slice();
      copy.moduleSlots = this.moduleSlots.slice();
      copy.descriptorIndices = this.descriptorIndices.slice();
      copy.entryCount = this.entryCount;
      return copy;
    }
    const copy = new SafepointTable(this.entryCount + extraEntries);
    for (let i = 0; i < this.keys.length; i++) {
      const key = this.keys[i]!;
      if (key !== EMPTY) copy.insertNew(key, this.moduleSlots[i]!, this.descriptorIndices[i]!);
    }
    return copy;
  }

  private slotOf(address: number): number {
    const lo = address >>> 0;
    const hi = (address / 0x1_0000_0000) >>> 0;
    const mixed = Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), GOLDEN_32);
    return mixed >>> (32 - this.logCapacity);
  }

  /**
   * The table slot holding `address`, or -1. Use `moduleSlotAt`/`descriptorAt` on the result:
   * two typed-array reads, no allocation.
   */
  find(address: number): number {
    // 0 marks an empty slot and is never a key: without this test a lookup of 0 (a stack's end
    // marker, a zeroed slot) "found" the first empty slot and its stale module and descriptor.
    if (address === EMPTY) return -1;
    const keys = this.keys;
    const mask = this.mask;
    let i = this.slotOf(address);
    for (;;) {
      const key = keys[i]!;
      if (key === address) return i;
      if (key === EMPTY) return -1;
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
    const existing = this.find(address);
    if (existing >= 0) return existing;
    if ((this.entryCount + 1) * 2 > this.keys.length) this.grow();
    this.insertNew(address, moduleSlot, descriptorIndex);
    return -1;
  }

  private insertNew(address: number, moduleSlot: number, descriptorIndex: number): void {
    let i = this.slotOf(address);
    while (this.keys[i] !== EMPTY) i = (i + 1) & this.mask;
    this.keys[i] = address;
    this.moduleSlots[i] = moduleSlot;
    this.descriptorIndices[i] = descriptorIndex;
    this.entryCount++;
  }

  private grow(): void {
    const old = { keys: this.keys, modules: this.moduleSlots, descriptors: this.descriptorIndices };
    this.logCapacity++;
    this.mask = (1 << this.logCapacity) - 1;
    this.keys = new Float64Array(1 << this.logCapacity);
    this.moduleSlots = new Int32Array(1 << this.logCapacity);
    this.descriptorIndices = new Int32Array(1 << this.logCapacity);
    this.entryCount = 0;
    for (let i = 0; i < old.keys.length; i++) {
      const key = old.keys[i]!;
      if (key !== EMPTY) this.insertNew(key, old.modules[i]!, old.descriptors[i]!);
    }
  }

  /** Every (address, module slot, descriptor index), in table order. */
  *entries(): IterableIterator<[address: number, moduleSlot: number, descriptorIndex: number]> {
    for (let i = 0; i < this.keys.length; i++) {
      const key = this.keys[i]!;
      if (key !== EMPTY) yield [key, this.moduleSlots[i]!, this.descriptorIndices[i]!];
    }
  }
}

function logCapacityFor(entries: number): number {
  let log = MIN_LOG_CAPACITY;
  while (1 << log < entries * 2) log++;
  if (log > 30) throw new InvalidArgumentError("safepoint count", String(entries), "at most 2^29 safepoints in one table");
  return log;
}
