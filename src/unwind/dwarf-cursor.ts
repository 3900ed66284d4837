import { joinHalves } from "../bytes/word-codec.js";
import { ByteView } from "../bytes/byte-view.js";
import { MalformedInputError, TruncatedInputError } from "../errors.js";

/**
 * A forward-only reader over a `ByteView` for the variable-length DWARF fields of `.eh_frame`
 * and call-frame instructions: fixed-width little-endian integers and LEB128.
 *
 * LEB128 (DWARF 5 §7.6): 7 value bits per byte, least significant group first, bit 7 set on
 * every byte but the last; SLEB128 sign-extends from bit 6 of the last byte. Encoders may pad
 * with redundant groups (0x80 ... 0x00), so the length is bounded only by the window. Values
 * must be exact JS numbers (|value| <= 2^53 - 1); anything larger is malformed for the fields
 * we read (register numbers, offsets, lengths, alignment factors).
 *
 * Every read checks the window first, so a truncated field is a TruncatedInputError naming the
 * field's offset in the enclosing input (`view.baseOffset + pos`), never a RangeError.
 */
export class DwarfCursor {
  constructor(
    readonly view: ByteView,
    public pos = 0,
  ) {}

  /** Offset of the next byte in the enclosing input (for error messages). */
  get absolutePos(): number {
    return this.view.baseOffset + this.pos;
  }

  get atEnd(): boolean {
    return this.pos >= this.view.lengthBytes;
  }

  u8(what: string): number {
    this.view.need(this.pos, 1, what);
    return this.view.u8(this.pos++);
  }

  u16(what: string): number {
    this.view.need(this.pos, 2, what);
    const value = this.view.u16(this.pos);
    this.pos += 2;
    return value;
  }

  i16(what: string): number {
    this.view.need(this.pos, 2, what);
    const value = this.view.i16(this.pos);
    this.pos += 2;
    return value;
  }

  u32(what: string): number {
    this.view.need(this.pos, 4, what);
    const value = this.view.u32(this.pos);
    this.pos += 4;
    return value;
  }

  i32(what: string): number {
    this.view.need(this.pos, 4, what);
    const value = this.view.i32(this.pos);
    this.pos += 4;
    return value;
  }

  /** An unsigned 64-bit value that must fit in 2^53 - 1. */
  u64(what: string): number {
    this.view.need(this.pos, 8, what);
    const value = this.view.u64Number(this.pos, what);
    this.pos += 8;
    return value;
  }

  /** A signed 64-bit value that must lie in [-(2^53 - 1), 2^53 - 1]. */
  i64(what: string): number {
    this.view.need(this.pos, 8, what);
    const lo = this.view.u32(this.pos);
    const hi = this.view.i32(this.pos + 4);
    const value = joinHalves(lo, hi);
    if (!Number.isSafeInteger(value)) {
      throw new MalformedInputError(what, this.absolutePos, `0x${this.view.u64BigInt(this.pos).toString(16)}`, "a signed value within +-2^53");
    }
    this.pos += 8;
    return value;
  }

  uleb128(what: string): number {
    return this.leb128(what, false);
  }

  sleb128(what: string): number {
    return this.leb128(what, true);
  }

  private leb128(what: string, signed: boolean): number {
    const start = this.pos;
    const end = this.view.lengthBytes;
    // Fast path: up to 7 groups (49 bits) are exact in a double.
    let value = 0;
    let scale = 1;
    let pos = start;
    for (let groups = 0; groups < 7; groups++) {
      if (pos >= end) this.truncatedLeb(what, start, pos);
      const byte = this.view.u8(pos++);
      value += (byte & 0x7f) * scale;
      scale *= 128;
      if ((byte & 0x80) === 0) {
        if (signed && (byte & 0x40) !== 0) value -= scale;
        this.pos = pos;
        return value;
      }
    }
    // Slow path (long or padded encodings): find the end, then decode exactly with BigInt.
    while (true) {
      if (pos >= end) this.truncatedLeb(what, start, pos);
      if ((this.view.u8(pos++) & 0x80) === 0) break;
    }
    let big = 0n;
    for (let i = pos - 1; i >= start; i--) big = (big << 7n) | BigInt(this.view.u8(i) & 0x7f);
    const bits = BigInt(7 * (pos - start));
    if (signed && (this.view.u8(pos - 1) & 0x40) !== 0) big -= 1n << bits;
    if (big > BigInt(Number.MAX_SAFE_INTEGER) || big < -BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new MalformedInputError(`${what} (${signed ? "SLEB128" : "ULEB128"})`, this.view.baseOffset + start, big.toString(), "a value within +-2^53");
    }
    this.pos = pos;
    return Number(big);
  }

  private truncatedLeb(what: string, start: number, pos: number): never {
    throw new TruncatedInputError(`${what} (LEB128 without a final byte)`, this.view.baseOffset + start, pos - start + 1, pos - start);
  }
}
