import { LOG_BYTES_IN_WORD } from "./heap-constants.js";

/*
 * The allocation bitmap ("valid object" bits, after MMTk's VO bits): one bit per 8-byte granule
 * of the heap, at the granule of an object's ADDRESS (what roots and pointer fields hold, the
 * header's end), bit (g & 7) of byte (g >>> 3) for granule g = (address - base) >>> 3.
 *
 * Invariant: a bit is set <=> an object that is live or not yet swept has its address there.
 *   - set by every allocation: the mutators' JavaScript path (ImmixAllocator.alloc, large objects
 *     included) and the C fast path in src/native/runtime-alloc.c (gc_alloc bumps a hole and sets the
 *     bit in the same native memory, no call into JavaScript);
 *   - replaced by the mark bits over the whole used heap after marking, before the sweep
 *     (HeapSpace.keepMarkedAsAllocated): evacuation's new copies (marked when made) and the
 *     objects marked in place keep or gain their bits; what the sweep frees (dead objects, freed
 *     lines, blocks and large pages) and the old copies of evacuated objects (never marked) lose
 *     them;
 *   - cleared for a block or a run of large pages when it is handed out again (defensive: they
 *     are clear already by the line above).
 * So between collections it answers, for any address, "does an object start here?", whether or
 * not anything reaches that object: the collector tests every root against it before anything
 * moves (ImmixCollector), and the verifier every pointer it follows (heap-verifier.ts).
 *
 * Bytes, not 32-bit words: the C fast paths of two threads allocate into different holes, which
 * are whole 128-byte lines, and one byte covers 64 bytes of heap, so no two threads ever write
 * the same byte (a plain `|=` in C, no atomics). The layout is the mark bitmap's (a Uint32Array,
 * bit g & 31 of word g >>> 5) seen byte by byte on a little-endian machine, which every
 * architecture rootwalk runs on is: so the marks are copied over in one block copy.
 */
export class AllocationBits {
  readonly bits: Uint8Array;

  /** Over `sizeBytes` of heap: `memory` (native, shared with C: sizeBytes / 64 bytes) or a new array. */
  constructor(sizeBytes: number, memory?: ArrayBuffer) {
    const length = AllocationBits.bytesFor(sizeBytes);
    this.bits = memory === undefined ? new Uint8Array(length) : new Uint8Array(memory, 0, length);
  }

  /** Bytes of bitmap for a heap of `sizeBytes` (one bit per 8 bytes). */
  static bytesFor(sizeBytes: number): number {
    return Math.ceil(sizeBytes / 64);
  }

  /** True when an object's address is at heap offset `offset` (an 8-aligned integer inside the heap). */
  isSet(offset: number): boolean {
    const g = offset >>> LOG_BYTES_IN_WORD;
    return (this.bits[g >>> 3]! & (1 << (g & 7))) !== 0;
  }

  set(offset: number): void {
    const g = offset >>> LOG_BYTES_IN_WORD;
    this.bits[g >>> 3]! |= 1 << (g & 7);
  }

  /** Clears the bits of heap offsets [from, to) (both multiples of 64). */
  clear(from: number, to: number): void {
    this.bits.fill(0, from >>> 6, to >>> 6);
  }

  /** The bits of heap offsets [from, to) (multiples of 256) become the mark bits' there. */
  copyMarks(markBits: Uint32Array, from: number, to: number): void {
    const marks = new Uint8Array(markBits.buffer, markBits.byteOffset, markBits.byteLength);
    this.bits.set(marks.subarray(from >>> 6, to >>> 6), from >>> 6);
  }

  /**
   * The heap offset of the nearest object address at or below `offset` and at or above `floor`
   * (offsets, `floor` 8-aligned), or -1. A byte at a time where it is zero.
   */
  nearestAtOrBelow(offset: number, floor: number): number {
    const bits = this.bits;
    let g = offset >>> LOG_BYTES_IN_WORD;
    const lowest = floor >>> LOG_BYTES_IN_WORD;
    while (g >= lowest) {
      const byte = bits[g >>> 3]!;
      if (byte === 0) {
        g = (g & ~7) - 1;
        continue;
      }
      if ((byte & (1 << (g & 7))) !== 0) return g * 8; // (g << 3 would turn negative past 2 GiB)
      g--;
    }
    return -1;
  }
}

/** Every machine rootwalk runs on is little-endian: AllocationBits.copyMarks relies on it. */
if (new Uint8Array(new Uint32Array([1]).buffer)[0] !== 1) throw new Error("gc/allocation-bits.ts: a big-endian machine is not supported");
