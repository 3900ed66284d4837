import { MalformedInputError, UnsupportedInputError, hex } from "../errors.js";
import type { DwarfCursor } from "./dwarf-cursor.js";

/**
 * `DW_EH_PE_*` pointer encodings (LSB 5.0, "Linux Standard Base Core Specification", §10.5;
 * the same byte values are used by GCC, LLVM and libunwind). One byte:
 *
 *   bits 0-3  value format       bits 4-6  application        bit 7  indirect
 *   0x00 absptr (8 bytes here)   0x00 absolute                0x80 the value is the address
 *   0x01 uleb128                 0x10 pcrel: + field address        of a pointer-sized slot
 *   0x02 udata2   0x0a sdata2    0x20 textrel  (unsupported)        holding the real value
 *   0x03 udata4   0x0b sdata4    0x30 datarel  (unsupported)
 *   0x04 udata8   0x0c sdata8    0x40 funcrel  (unsupported)
 *   0x09 sleb128                 0x50 aligned  (unsupported)
 *
 *   0xff DW_EH_PE_omit: no value follows (only legal where the field is optional).
 *
 * `absptr` is 8 bytes because rootwalk reads ELF64 only (x86-64 and AArch64).
 * Indirect values cannot be resolved without reading memory, so decoders report the slot address
 * and set `indirect`; a field that must be direct (an FDE's pc_begin) rejects the flag.
 */
export const DW_EH_PE_ABSPTR = 0x00;
export const DW_EH_PE_ULEB128 = 0x01;
export const DW_EH_PE_UDATA2 = 0x02;
export const DW_EH_PE_UDATA4 = 0x03;
export const DW_EH_PE_UDATA8 = 0x04;
export const DW_EH_PE_SLEB128 = 0x09;
export const DW_EH_PE_SDATA2 = 0x0a;
export const DW_EH_PE_SDATA4 = 0x0b;
export const DW_EH_PE_SDATA8 = 0x0c;
export const DW_EH_PE_PCREL = 0x10;
export const DW_EH_PE_INDIRECT = 0x80;
export const DW_EH_PE_OMIT = 0xff;

const FORMAT_MASK = 0x0f;
const APPLICATION_MASK = 0x70;

const SUPPORTED_ENCODINGS = "formats absptr/uleb128/udata2/4/8/sleb128/sdata2/4/8, applications absolute/pcrel, optional indirect (0x80)";

/** A decoded pointer; `indirect` means `address` is where the real pointer is stored. */
export interface EncodedPointer {
  readonly encoding: number;
  readonly address: number;
  readonly indirect: boolean;
}

export function isIndirect(encoding: number): boolean {
  return (encoding & DW_EH_PE_INDIRECT) !== 0;
}

/** Throws unless `encoding` is one this module can decode (omit is accepted separately). */
export function checkPointerEncoding(encoding: number, what: string, offset: number): void {
  if (encoding === DW_EH_PE_OMIT) return;
  const format = encoding & FORMAT_MASK;
  const application = encoding & APPLICATION_MASK;
  const knownFormat =
    format === DW_EH_PE_ABSPTR ||
    format === DW_EH_PE_ULEB128 ||
    format === DW_EH_PE_UDATA2 ||
    format === DW_EH_PE_UDATA4 ||
    format === DW_EH_PE_UDATA8 ||
    format === DW_EH_PE_SLEB128 ||
    format === DW_EH_PE_SDATA2 ||
    format === DW_EH_PE_SDATA4 ||
    format === DW_EH_PE_SDATA8;
  if (!knownFormat) throw new MalformedInputError(`${what} pointer encoding`, offset, hex(encoding), "a DW_EH_PE value format (0x0-0x4, 0x9-0xc)");
  if (application !== 0 && application !== DW_EH_PE_PCREL) {
    throw new UnsupportedInputError(`${what} pointer encoding`, offset, hex(encoding), SUPPORTED_ENCODINGS);
  }
}

/** Reads the value bits of `encoding` without applying pcrel (used for an FDE's pc_range). */
export function readEncodedValue(cursor: DwarfCursor, encoding: number, what: string): number {
  switch (encoding & FORMAT_MASK) {
    case DW_EH_PE_ABSPTR:
    case DW_EH_PE_UDATA8:
      return cursor.u64(what);
    case DW_EH_PE_ULEB128:
      return cursor.uleb128(what);
    case DW_EH_PE_UDATA2:
      return cursor.u16(what);
    case DW_EH_PE_UDATA4:
      return cursor.u32(what);
    case DW_EH_PE_SLEB128:
      return cursor.sleb128(what);
    case DW_EH_PE_SDATA2:
      return cursor.i16(what);
    case DW_EH_PE_SDATA4:
      return cursor.i32(what);
    case DW_EH_PE_SDATA8:
      return cursor.i64(what);
    default:
      throw new MalformedInputError(`${what} pointer encoding`, cursor.absolutePos, hex(encoding), "a DW_EH_PE value format (0x0-0x4, 0x9-0xc)");
  }
}

/**
 * Reads a pointer with `encoding` at the cursor. `sectionAddress` is the run-time (or link-time)
 * address of offset 0 of the window's enclosing section, so a pcrel value is relative to
 * `sectionAddress + <offset of the field>`. The caller has already handled DW_EH_PE_omit.
 */
export function readEncodedPointer(cursor: DwarfCursor, encoding: number, sectionAddress: number, what: string): EncodedPointer {
  const fieldOffset = cursor.absolutePos;
  checkPointerEncoding(encoding, what, fieldOffset);
  if (encoding === DW_EH_PE_OMIT) {
    throw new MalformedInputError(`${what} pointer encoding`, fieldOffset, hex(encoding), "a value encoding (DW_EH_PE_omit is not allowed here)");
  }
  let address = readEncodedValue(cursor, encoding, what);
  if ((encoding & APPLICATION_MASK) === DW_EH_PE_PCREL) address += sectionAddress + fieldOffset;
  if (!Number.isSafeInteger(address)) {
    throw new MalformedInputError(what, fieldOffset, String(address), "an address below 2^53");
  }
  return { encoding, address, indirect: isIndirect(encoding) };
}
