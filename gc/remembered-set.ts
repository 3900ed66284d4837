import { joinHalves } from "../src/bytes/word-codec.js";
import { AllocationBits } from "./allocation-bits.js";

/**
 * Where the write barrier logs the old objects it saw stored into (the remembered set's list):
 * JavaScript's own (simulated heaps: ImmixCollector.writeBarrier appends) or the native
 * runtime's (src/native/runtime-barrier.c: gc_write_barrier appends in C, bounded).
 */
export interface BarrierLog {
  /** Objects logged since the last collection; above `capacity` when the log overflowed. */
  count(): number;
  readonly capacity: number;
  /** The `index`-th logged object's address (index < min(count, capacity)). */
  entry(index: number): number;
  /** Appends (the JavaScript barrier's slow path); a native log fills itself in C. */
  append(address: number): void;
  clear(): void;
}

/** A log in JavaScript memory, unbounded (grows by doubling). */
export class ArrayBarrierLog implements BarrierLog {
  readonly capacity = Infinity;
  private entries = new Float64Array(256);
  private length = 0;

  count(): number {
    return this.length;
  }

  entry(index: number): number {
    return this.entries[index]!;
  }

  append(address: number): void {
    if (this.length === this.entries.length) {
      const grown = new Float64Array(this.length * 2);
      grown.set(this.entries);
      this.entries = grown;
    }
    this.entries[this.length++] = address;
  }

  clear(): void {
    this.length = 0;
  }
}

/**
 * The remembered set of generational (sticky-mark-bit) collection, after MMTk's object-remembering
 * barrier: an "unlogged" bit per object, in a bitmap of the allocation bitmap's layout
 * (allocation-bits.ts: one bit per 8-byte granule at an object's address; native heaps pass the
 * runtime's memory, which gc_write_barrier tests in C), and the log of the objects whose bit a
 * store cleared.
 *
 * Invariants (generational collectors only; without, no bit is ever set and nothing is logged):
 *   - between collections, an object's bit is set <=> it is old (it survived a collection: its
 *     mark bit is set) and nothing was stored into it since that collection with a barrier;
 *   - an old object whose bit is clear is in the log (or the log overflowed: `overflowed`);
 *   - young objects' bits are clear (a fresh object's granule was cleared with its line or block
 *     at the sweep that freed it, `rearm`), so the barrier's fast path returns for them.
 * The nursery collection scans every logged object's fields as roots; after every collection
 * `rearm` sets the bits of every survivor (all of them are old) and empties the log.
 */
export class RememberedSet {
  readonly unlogged: AllocationBits;
  /** Objects logged at the start of each collection (what its trace rescanned), for the stats. */
  lastSize = 0;

  constructor(
    sizeBytes: number,
    memory: ArrayBuffer | undefined,
    readonly log: BarrierLog = new ArrayBarrierLog(),
  ) {
    this.unlogged = new AllocationBits(sizeBytes, memory);
  }

  /** The barrier (JavaScript's copy of gc_write_barrier's): after a store into the object at heap offset `offset`. */
  barrier(offset: number, address: number): void {
    const bits = this.unlogged.bits;
    const g = offset >>> 3;
    const mask = 1 << (g & 7);
    if ((bits[g >>> 3]! & mask) === 0) return;
    bits[g >>> 3]! &= ~mask;
    this.log.append(address);
  }

  /** True when the object at heap offset `offset` is old and not logged since the last collection. */
  isUnlogged(offset: number): boolean {
    return this.unlogged.isSet(offset);
  }

  /** True when more objects were logged than the log holds: the collection must be a full one. */
  get overflowed(): boolean {
    return this.log.count() > this.log.capacity;
  }

  /** Logged objects the log holds. */
  get size(): number {
    return Math.min(this.log.count(), this.log.capacity);
  }

  /** After a collection: every survivor (its mark bit set) becomes old and unlogged; the log empties. */
  rearm(markBits: Uint32Array, ranges: readonly (readonly [number, number])[]): void {
    for (const [from, to] of ranges) this.unlogged.copyMarks(markBits, from, to);
    this.log.clear();
  }
}

/** A native runtime's log (runtime-barrier.c): its entries as 32-bit halves, count and clear by call. */
export function nativeBarrierLog(entries: Uint32Array, capacity: number, count: () => number, clear: () => void): BarrierLog {
  return {
    capacity,
    count,
    clear,
    entry: (index) => joinHalves(entries[2 * index]!, entries[2 * index + 1]!),
    append: () => {
      throw new Error("a native barrier log is appended to in C");
    },
  };
}
