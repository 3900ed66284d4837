import { joinHalves } from "../bytes/word-codec.js";
import type { ByteView } from "../bytes/byte-view.js";
import { hex, InvalidArgumentError, MalformedInputError, UnsupportedInputError } from "../errors.js";
import { SHT_REL, SHT_RELA, SHT_RELR } from "./elf-constants.js";
import { SH_TYPE, type ElfSection } from "./elf-section.js";
import { checkTableShape } from "./elf-symbol.js";

/**
 * ELF64 relocation entry with explicit addend (SHT_RELA: `.rela.text`, `.rela.llvm_stackmaps`,
 * `.rela.dyn`, ...), 24 bytes:
 *
 *   0  u64 r_offset  ET_REL: offset within the section named by the rela section's sh_info;
 *                    ET_EXEC/ET_DYN: link-time address of the field
 *   8  u64 r_info    symbol index << 32 | relocation type (both u32; the type is per e_machine)
 *  16  i64 r_addend  signed
 *
 * The symbol index refers to the symbol table named by the rela section's sh_link (`.symtab` in a
 * .o, `.dynsym` for dynamic relocations); index 0 means "no symbol" (S = 0).
 *
 * SHT_REL (implicit addends, 16-byte entries) is never used on x86-64 or AArch64 and is reported
 * as unsupported.
 */
const R_OFFSET = 0;
const R_INFO_TYPE = R_OFFSET + 8; // low half of r_info
const R_INFO_SYM = R_INFO_TYPE + 4; // high half of r_info
const R_ADDEND = R_INFO_SYM + 4;
export const RELA_SIZE_BYTES = R_ADDEND + 8; // 24

export interface ElfRelocation {
  /** r_offset: section offset (ET_REL) or link-time address (ET_EXEC/ET_DYN) of the field. */
  readonly offset: number;
  /** Relocation type; its meaning depends on the file's machine. */
  readonly type: number;
  /** Index into the symbol table named by the relocation section's sh_link; 0 = none. */
  readonly symbolIndex: number;
  readonly addend: number;
  /** File offset of this entry (for error messages). */
  readonly fileOffset: number;
}

/** Decodes a whole SHT_RELA section. */
export function readRelaSection(section: ElfSection): ElfRelocation[] {
  if (section.type === SHT_REL) {
    throw new UnsupportedInputError(`${section.describe()} sh_type`, section.headerOffset + SH_TYPE, "SHT_REL (9)", "SHT_RELA (4)");
  }
  if (section.type !== SHT_RELA) {
    throw new InvalidArgumentError("relocation section", `${section.describe()} with sh_type ${section.type}`, "a SHT_RELA section");
  }
  checkTableShape(section, RELA_SIZE_BYTES, "relocation table");
  const view = section.view();
  const count = section.size / RELA_SIZE_BYTES;
  const relocations: ElfRelocation[] = new Array<ElfRelocation>(count);
  for (let i = 0; i < count; i++) {
    const at = i * RELA_SIZE_BYTES;
    relocations[i] = {
      offset: view.u64Number(at + R_OFFSET, `${section.describe()} entry ${i} r_offset`),
      type: view.u32(at + R_INFO_TYPE),
      symbolIndex: view.u32(at + R_INFO_SYM),
      addend: i64Number(view, at + R_ADDEND, `${section.describe()} entry ${i} r_addend`),
      fileOffset: section.offset + at,
    };
  }
  return relocations;
}

/** A signed 64-bit field as an exact number; magnitudes of 2^53 and above are malformed. */
export function i64Number(view: ByteView, offset: number, what: string): number {
  const hi = view.i32(offset + 4);
  const value = joinHalves(view.u32(offset), hi);
  if (!Number.isSafeInteger(value)) {
    throw new MalformedInputError(what, view.baseOffset + offset, hex(view.u64BigInt(offset)), "a value between -(2^53 - 1) and 2^53 - 1");
  }
  return value;
}

/**
 * SHT_RELR (`.relr.dyn`, `ld -z pack-relative-relocs`): packed relative relocations, one u64 per
 * entry, each field relocated by adding the load bias to the link-time address already stored in
 * it (the implicit addend):
 *
 *   even entry (bit 0 clear)  the address of a field to relocate; the next field is address + 8
 *   odd entry (bit 0 set)     a bitmap: bit i (1..63) set relocates the field at next + (i-1)*8;
 *                             afterwards next += 63 * 8
 *
 * A bitmap before any address is malformed. Returns the link-time addresses of all the fields.
 */
export function readRelrSection(section: ElfSection): number[] {
  if (section.type !== SHT_RELR) {
    throw new InvalidArgumentError("relocation section", `${section.describe()} with sh_type ${section.type}`, "a SHT_RELR section");
  }
  checkTableShape(section, 8, "packed relative relocation table");
  const view = section.view();
  const addresses: number[] = [];
  let next: number | undefined;
  for (let at = 0; at < section.size; at += 8) {
    const lo = view.u32(at);
    if ((lo & 1) === 0) {
      const address = view.u64Number(at, `${section.describe()} address entry`);
      addresses.push(address);
      next = address + 8;
      continue;
    }
    if (next === undefined) {
      throw new MalformedInputError(`${section.describe()} first entry`, section.offset + at, "a bitmap (bit 0 set)", "an address (bit 0 clear)");
    }
    const hi = view.u32(at + 4);
    for (let bit = 1; bit < 64; bit++) {
      const set = bit < 32 ? (lo >>> bit) & 1 : (hi >>> (bit - 32)) & 1;
      if (set !== 0) addresses.push(next + (bit - 1) * 8);
    }
    next += 63 * 8;
    if (next > Number.MAX_SAFE_INTEGER) {
      throw new MalformedInputError(`${section.describe()} bitmap entry`, section.offset + at, `next address ${hex(next)}`, "an address below 2^53");
    }
  }
  return addresses;
}
