/**
 * Just enough ELF64 little-endian reading for the unwind tests: section headers by name,
 * RELA entries and symbol values. Deliberately independent of src/elf (tests must not depend on
 * the reader under construction elsewhere); inputs are trusted files our compilers just wrote.
 *
 *   ELF header:  e_shoff u64 @0x28, e_shentsize u16 @0x3a, e_shnum u16 @0x3c, e_shstrndx u16 @0x3e
 *   Shdr (64 B): sh_name u32 @0, sh_type u32 @4, sh_addr u64 @16, sh_offset u64 @24,
 *                sh_size u64 @32, sh_link u32 @40, sh_info u32 @44
 *   Rela (24 B): r_offset u64 @0, r_info u64 @8 (symbol = high 32 bits, type = low 32), r_addend i64 @16
 *   Sym  (24 B): st_value u64 @8
 */
export interface ElfSection {
  index: number;
  name: string;
  type: number;
  address: number;
  offset: number;
  size: number;
  link: number;
  info: number;
  bytes: Uint8Array;
}

export interface Rela {
  offset: number;
  type: number;
  symbol: number;
  addend: number;
}

export const SHT_SYMTAB = 2;
export const SHT_RELA = 4;
export const R_X86_64_PC32 = 2;
export const R_X86_64_PLT32 = 4;

export function elfSections(file: Uint8Array): ElfSection[] {
  const data = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  if (data.readUInt32BE(0) !== 0x7f454c46 || data[4] !== 2 || data[5] !== 1) throw new Error("not an ELF64 little-endian file");
  const shoff = Number(data.readBigUInt64LE(0x28));
  const shentsize = data.readUInt16LE(0x3a);
  const shnum = data.readUInt16LE(0x3c);
  const shstrndx = data.readUInt16LE(0x3e);
  const raw = Array.from({ length: shnum }, (_, index) => {
    const h = shoff + index * shentsize;
    const offset = Number(data.readBigUInt64LE(h + 24));
    const size = Number(data.readBigUInt64LE(h + 32));
    const type = data.readUInt32LE(h + 4);
    return {
      index,
      nameOffset: data.readUInt32LE(h),
      type,
      address: Number(data.readBigUInt64LE(h + 16)),
      offset,
      size,
      link: data.readUInt32LE(h + 40),
      info: data.readUInt32LE(h + 44),
      bytes: type === 8 /* SHT_NOBITS */ ? new Uint8Array(0) : file.subarray(offset, offset + size),
    };
  });
  const strtab = raw[shstrndx]!;
  return raw.map(({ nameOffset, ...s }) => {
    const start = strtab.offset + nameOffset;
    return { ...s, name: data.toString("latin1", start, data.indexOf(0, start)) };
  });
}

export function section(sections: ElfSection[], name: string): ElfSection {
  const found = sections.find((s) => s.name === name);
  if (found === undefined) throw new Error(`no section ${name}`);
  return found;
}

export function relas(rela: ElfSection): Rela[] {
  const data = Buffer.from(rela.bytes.buffer, rela.bytes.byteOffset, rela.bytes.byteLength);
  return Array.from({ length: rela.size / 24 }, (_, i) => {
    const info = data.readBigUInt64LE(i * 24 + 8);
    return {
      offset: Number(data.readBigUInt64LE(i * 24)),
      type: Number(info & 0xffffffffn),
      symbol: Number(info >> 32n),
      addend: Number(data.readBigInt64LE(i * 24 + 16)),
    };
  });
}

export function symbolValues(symtab: ElfSection): number[] {
  const data = Buffer.from(symtab.bytes.buffer, symtab.bytes.byteOffset, symtab.bytes.byteLength);
  return Array.from({ length: symtab.size / 24 }, (_, i) => Number(data.readBigUInt64LE(i * 24 + 8)));
}

/** The RELA section that applies to section `target`, if any. */
export function relaFor(sections: ElfSection[], target: ElfSection): ElfSection | undefined {
  return sections.find((s) => s.type === SHT_RELA && s.info === target.index);
}

export interface ElfSymbol {
  name: string;
  value: number;
  size: number;
  sectionIndex: number;
}

/** Symbols of a SHT_SYMTAB/SHT_DYNSYM section (names from its linked string table). */
export function symbols(sections: ElfSection[], symtab: ElfSection): ElfSymbol[] {
  const data = Buffer.from(symtab.bytes.buffer, symtab.bytes.byteOffset, symtab.bytes.byteLength);
  const strtab = sections[symtab.link]!;
  const strings = Buffer.from(strtab.bytes.buffer, strtab.bytes.byteOffset, strtab.bytes.byteLength);
  return Array.from({ length: symtab.size / 24 }, (_, i) => {
    const nameOffset = data.readUInt32LE(i * 24);
    return {
      name: strings.toString("latin1", nameOffset, strings.indexOf(0, nameOffset)),
      sectionIndex: data.readUInt16LE(i * 24 + 6),
      value: Number(data.readBigUInt64LE(i * 24 + 8)),
      size: Number(data.readBigUInt64LE(i * 24 + 16)),
    };
  });
}
