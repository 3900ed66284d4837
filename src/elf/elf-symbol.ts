import type { ByteView } from "../bytes/byte-view.js";
import { hex, MalformedInputError } from "../errors.js";
import { isRealSectionIndex, SHN_XINDEX, SHT_STRTAB, SHT_SYMTAB_SHNDX } from "./elf-constants.js";
import { SH_ENTSIZE, SH_LINK, SH_SIZE, type ElfSection } from "./elf-section.js";

/**
 * ELF64 symbol table entry (SHT_SYMTAB `.symtab`, SHT_DYNSYM `.dynsym`), 24 bytes:
 *
 *   0  u32 st_name   offset of the name in the string table named by the table's sh_link
 *   4  u8  st_info   binding << 4 | type        (STB_* << 4 | STT_*)
 *   5  u8  st_other  visibility in the low 2 bits (STV_*)
 *   6  u16 st_shndx  defining section, or SHN_UNDEF / SHN_ABS / SHN_COMMON / SHN_XINDEX
 *   8  u64 st_value  ET_REL: offset within st_shndx; ET_EXEC/ET_DYN: link-time address
 *  16  u64 st_size   size in bytes (0 when unknown)
 *
 * Entry 0 is the all-zero null symbol. With SHN_XINDEX the real section index is the u32 at the
 * same position in the SHT_SYMTAB_SHNDX section whose sh_link names this table.
 */
const ST_NAME = 0;
const ST_INFO = ST_NAME + 4;
const ST_OTHER = ST_INFO + 1;
const ST_SHNDX = ST_OTHER + 1;
const ST_VALUE = ST_SHNDX + 2;
const ST_SIZE = ST_VALUE + 8;
export const SYMBOL_SIZE_BYTES = ST_SIZE + 8; // 24

export interface ElfSymbol {
  /** Position in its table (what relocations name). */
  readonly index: number;
  readonly name: string;
  /** st_value: an offset within the section in a .o, a link-time address otherwise. */
  readonly value: number;
  readonly size: number;
  /** STT_* */
  readonly type: number;
  /** STB_* */
  readonly bind: number;
  /** STV_* */
  readonly visibility: number;
  /** st_shndx as stored (SHN_UNDEF, SHN_ABS, SHN_XINDEX, ... included). */
  readonly sectionIndex: number;
  /** The section the symbol is defined in (SHN_XINDEX resolved); undefined for UNDEF/ABS/COMMON. */
  readonly definedSectionIndex: number | undefined;
}

/** Decodes a whole SHT_SYMTAB / SHT_DYNSYM section. */
export function readSymbolTable(table: ElfSection, sections: readonly ElfSection[]): ElfSymbol[] {
  checkTableShape(table, SYMBOL_SIZE_BYTES, "symbol table");
  const strtab = linkedStringTable(table, sections);
  const strings = strtab.view();
  const extendedIndices = sections.find((s) => s.type === SHT_SYMTAB_SHNDX && s.link === table.index);
  const view = table.view();
  const count = table.size / SYMBOL_SIZE_BYTES;
  const symbols: ElfSymbol[] = new Array<ElfSymbol>(count);
  for (let i = 0; i < count; i++) {
    const at = i * SYMBOL_SIZE_BYTES;
    const nameOffset = view.u32(at + ST_NAME);
    const info = view.u8(at + ST_INFO);
    const sectionIndex = view.u16(at + ST_SHNDX);
    let definedSectionIndex: number | undefined = isRealSectionIndex(sectionIndex) ? sectionIndex : undefined;
    if (sectionIndex === SHN_XINDEX) {
      definedSectionIndex = extendedSectionIndex(extendedIndices, table, i);
    }
    symbols[i] = {
      index: i,
      name: nameOffset === 0 ? "" : stringAt(strings, strtab, nameOffset, `${table.describe()} symbol ${i} st_name`, table.offset + at),
      value: view.u64Number(at + ST_VALUE, `${table.describe()} symbol ${i} st_value`),
      size: view.u64Number(at + ST_SIZE, `${table.describe()} symbol ${i} st_size`),
      type: info & 0xf,
      bind: info >>> 4,
      visibility: view.u8(at + ST_OTHER) & 0x3,
      sectionIndex,
      definedSectionIndex,
    };
  }
  return symbols;
}

function extendedSectionIndex(shndx: ElfSection | undefined, table: ElfSection, symbolIndex: number): number {
  if (shndx === undefined) {
    throw new MalformedInputError(
      `${table.describe()} symbol ${symbolIndex} st_shndx`,
      table.offset + symbolIndex * SYMBOL_SIZE_BYTES + ST_SHNDX,
      hex(SHN_XINDEX),
      `a SHT_SYMTAB_SHNDX section linked to ${table.describe()}`,
    );
  }
  const view = shndx.view();
  view.need(symbolIndex * 4, 4, `${shndx.describe()} entry ${symbolIndex}`);
  return view.u32(symbolIndex * 4);
}

/** A table section must have the ELF64 entry size and a whole number of entries. */
export function checkTableShape(table: ElfSection, entrySizeBytes: number, what: string): void {
  if (table.entsize !== entrySizeBytes) {
    throw new MalformedInputError(`${table.describe()} sh_entsize of a ${what}`, table.headerOffset + SH_ENTSIZE, table.entsize, String(entrySizeBytes));
  }
  if (table.size % entrySizeBytes !== 0) {
    throw new MalformedInputError(`${table.describe()} sh_size of a ${what}`, table.headerOffset + SH_SIZE, hex(table.size), `a multiple of ${entrySizeBytes}`);
  }
}

/** The SHT_STRTAB section named by `table.sh_link`. */
export function linkedStringTable(table: ElfSection, sections: readonly ElfSection[]): ElfSection {
  const strtab = sections[table.link];
  if (strtab === undefined || strtab.type !== SHT_STRTAB) {
    throw new MalformedInputError(
      `${table.describe()} sh_link`,
      table.headerOffset + SH_LINK,
      strtab === undefined ? `${table.link} (no such section)` : `${table.link} (sh_type ${strtab.type})`,
      "the index of a SHT_STRTAB section",
    );
  }
  return strtab;
}

/**
 * A NUL-terminated string of a string table. An offset past the table's end is malformed at
 * `fieldOffset` (the file offset of the field holding it); a string running off the end is
 * truncated.
 */
export function stringAt(strings: ByteView, strtab: ElfSection, nameOffset: number, what: string, fieldOffset: number): string {
  if (nameOffset >= strings.lengthBytes) {
    throw new MalformedInputError(what, fieldOffset, hex(nameOffset), `an offset below ${hex(strtab.size)} (size of ${strtab.describe()})`);
  }
  return strings.cString(nameOffset, what);
}
