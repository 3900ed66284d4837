import Long from "long";
import { InvalidArgumentError, MalformedInputError, TruncatedInputError, describeValue } from "../errors.js";
import { joinHalves } from "./word-codec.js";

/**
 * A bounds-checked little-endian reader over a window of bytes, without copying them.
 *
 * Offsets are relative to the window; `baseOffset` is where the window starts in the enclosing
 * input (a file or a section) and is only used to make error messages name real offsets.
 * Decoders check ranges once with `need()` at the boundary of a structure and then use the
 * unchecked-by-JS-semantics `DataView` accessors, which themselves throw RangeError on an
 * out-of-bounds read: a decoder bug therefore surfaces as a non-rootwalk exception, which the
 * fuzz tests treat as a failure.
 *
 * 64-bit values are read as two 32-bit halves (no BigInt on the hot path). `u64Number` returns a
 * plain number and refuses values above 2^53 - 1; `u64Long` keeps all 64 bits for the public API.
 */
export class ByteView {
  readonly view: DataView;
  readonly lengthBytes: number;

  constructor(
    readonly bytes: Uint8Array,
    readonly baseOffset = 0,
  ) {
    requireBytes(bytes);
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.lengthBytes = bytes.byteLength;
  }

  /** A view of `[offset, offset + lengthBytes)` of this one, sharing the bytes. */
  slice(offset: number, lengthBytes: number, what = "window"): ByteView {
    this.need(offset, lengthBytes, what);
    return new ByteView(this.bytes.subarray(offset, offset + lengthBytes), this.baseOffset + offset);
  }

  /** Throws a TruncatedInputError unless `[offset, offset + sizeBytes)` lies inside the window. */
  need(offset: number, sizeBytes: number, what: string): void {
    if (offset < 0 || sizeBytes < 0 || offset + sizeBytes > this.lengthBytes) {
      throw new TruncatedInputError(what, this.baseOffset + offset, sizeBytes, this.lengthBytes - offset);
    }
  }

  has(offset: number, sizeBytes: number): boolean {
    return offset >= 0 && sizeBytes >= 0 && offset + sizeBytes <= this.lengthBytes;
  }

  u8(offset: number): number {
    return this.view.getUint8(offset);
  }
  i8(offset: number): number {
    return this.view.getInt8(offset);
  }
  u16(offset: number): number {
    return this.view.getUint16(offset, true);
  }
  i16(offset: number): number {
    return this.view.getInt16(offset, true);
  }
  u32(offset: number): number {
    return this.view.getUint32(offset, true);
  }
  i32(offset: number): number {
    return this.view.getInt32(offset, true);
  }
  u64Lo(offset: number): number {
    return this.view.getUint32(offset, true);
  }
  u64Hi(offset: number): number {
    return this.view.getUint32(offset + 4, true);
  }
  /** True when the u64 at `offset` is 0xFFFF_FFFF_FFFF_FFFF. */
  u64IsMax(offset: number): boolean {
    return this.view.getUint32(offset, true) === 0xffffffff && this.view.getUint32(offset + 4, true) === 0xffffffff;
  }
  u64Long(offset: number): Long {
    return new Long(this.view.getInt32(offset, true), this.view.getInt32(offset + 4, true), true);
  }
  i64Long(offset: number): Long {
    return new Long(this.view.getInt32(offset, true), this.view.getInt32(offset + 4, true), false);
  }
  u64BigInt(offset: number): bigint {
    return this.view.getBigUint64(offset, true);
  }
  /** A u64 as an exact number; a value above 2^53 - 1 is malformed for this field. */
  u64Number(offset: number, what: string): number {
    const hi = this.view.getUint32(offset + 4, true);
    if (hi > 0x1fffff) {
      throw new MalformedInputError(what, this.baseOffset + offset, `0x${this.u64BigInt(offset).toString(16)}`, "a value below 2^53");
    }
    return joinHalves(this.view.getUint32(offset, true), hi);
  }
  /** A u64 that may exceed 2^53: exact when it fits, otherwise NaN (callers use u64Long for those). */
  u64NumberOrNaN(offset: number): number {
    const hi = this.view.getUint32(offset + 4, true);
    return hi > 0x1fffff ? Number.NaN : joinHalves(this.view.getUint32(offset, true), hi);
  }
  /** A NUL-terminated string starting at `offset`, bounded by the window. */
  cString(offset: number, what: string): string {
    this.need(offset, 1, what);
    let end = offset;
    while (end < this.lengthBytes && this.bytes[end] !== 0) end++;
    if (end >= this.lengthBytes) {
      throw new TruncatedInputError(`${what} (no NUL terminator)`, this.baseOffset + offset, end - offset + 1, this.lengthBytes - offset);
    }
    return new TextDecoder("latin1").decode(this.bytes.subarray(offset, end));
  }
}

/** Rounds `value` up to a multiple of `align` (a power of two). */
export function alignUp(value: number, align: number): number {
  return Math.ceil(value / align) * align;
}

/**
 * The boundary of every decoder: a JavaScript caller's string, array or undefined is named, not
 * read as 0 bytes or failed on with a TypeError.
 */
export function requireBytes(value: unknown, what = "bytes"): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) throw new InvalidArgumentError(what, describeNonBytes(value), "a Uint8Array (a Buffer is one)");
}

/** What a caller passed instead of bytes, for the message: an ArrayBuffer with the way to wrap it. */
function describeNonBytes(value: unknown): string {
  return value instanceof ArrayBuffer ? "an ArrayBuffer (wrap it: new Uint8Array(buffer))" : describeValue(value);
}
