/*
 * The one codec for 64-bit little-endian words held as two u32 halves: in a Uint32Array (a
 * stack, the heap, the native runtime's thread records: word pair [2i, 2i + 1] = lo, hi) or at a
 * byte offset of a DataView.
 *
 * Values are plain numbers: exact for 0 <= value < 2^53, which covers every address, heap pointer
 * and small integer (after protobuf-es and msgpack: lo/hi halves, no BigInt on the hot path).
 * A stored word at or above 2^53 reads back as the nearest double. The BigInt forms keep all 64
 * bits, for registers and fields that may hold anything. Writers of numbers take values in
 * [0, 2^53): callers that accept input check that first.
 *
 * The hottest loop (walker/fast-scan.ts runFastFrames) inlines `hi * TWO_32 + lo` on its own
 * locals; everything else calls these.
 */

export const TWO_32 = 0x1_0000_0000;

/** lo + hi * 2^32: a u64 from two u32 halves, or an i64 when `hi` is the signed (i32) high half. */
export function joinHalves(lo: number, hi: number): number {
  return hi * TWO_32 + lo;
}

/** The low 32 bits of an integer in [0, 2^53) (ToUint32 is exact modulo 2^32). */
export function lowU32(value: number): number {
  return value >>> 0;
}

/** The high 32 bits of an integer in [0, 2^53). */
export function highU32(value: number): number {
  return (value - (value >>> 0)) / TWO_32;
}

/** The word whose low half is `words[index]` (index even for 8-aligned words). */
export function readU64(words: Uint32Array, index: number): number {
  return words[index + 1]! * TWO_32 + words[index]!;
}

export function writeU64(words: Uint32Array, index: number, value: number): void {
  const lo = value >>> 0;
  words[index] = lo;
  words[index + 1] = (value - lo) / TWO_32;
}

export function readU64BigInt(words: Uint32Array, index: number): bigint {
  return (BigInt(words[index + 1]!) << 32n) | BigInt(words[index]!);
}

/** Writes the low 64 bits of `value` (a negative value as its two's complement). */
export function writeU64BigInt(words: Uint32Array, index: number, value: bigint): void {
  words[index] = Number(BigInt.asUintN(32, value));
  words[index + 1] = Number(BigInt.asUintN(32, value >> 32n));
}

/** The little-endian word at byte `offset` of `view`. */
export function viewU64(view: DataView, offset: number): number {
  return view.getUint32(offset + 4, true) * TWO_32 + view.getUint32(offset, true);
}

export function setViewU64(view: DataView, offset: number, value: number): void {
  const lo = value >>> 0;
  view.setUint32(offset, lo, true);
  view.setUint32(offset + 4, (value - lo) / TWO_32, true);
}
