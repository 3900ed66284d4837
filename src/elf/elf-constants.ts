/**
 * The ELF numbers rootwalk's reader looks at (System V gABI, x86-64 psABI, AArch64 ELF ABI).
 * Only what the reader decodes or names in messages is listed; values are the on-disk numbers.
 */

// e_ident
export const ELF_MAGIC = [0x7f, 0x45, 0x4c, 0x46] as const; // "\x7fELF"
export const ELFCLASS32 = 1;
export const ELFCLASS64 = 2;
export const ELFDATA2LSB = 1;
export const ELFDATA2MSB = 2;
export const EV_CURRENT = 1;

// e_type
export const ET_NONE = 0;
export const ET_REL = 1;
export const ET_EXEC = 2;
export const ET_DYN = 3;
export const ET_CORE = 4;

// e_machine
export const EM_X86_64 = 62;
export const EM_AARCH64 = 183;

// Special section indices (st_shndx, e_shstrndx).
export const SHN_UNDEF = 0;
export const SHN_LORESERVE = 0xff00;
export const SHN_ABS = 0xfff1;
export const SHN_COMMON = 0xfff2;
/** In e_shstrndx / st_shndx: the real index is elsewhere (section 0's sh_link / SHT_SYMTAB_SHNDX). */
export const SHN_XINDEX = 0xffff;
/** In e_phnum: the real count is in section 0's sh_info. */
export const PN_XNUM = 0xffff;

// sh_type
export const SHT_NULL = 0;
export const SHT_PROGBITS = 1;
export const SHT_SYMTAB = 2;
export const SHT_STRTAB = 3;
export const SHT_RELA = 4;
export const SHT_HASH = 5;
export const SHT_DYNAMIC = 6;
export const SHT_NOTE = 7;
export const SHT_NOBITS = 8;
export const SHT_REL = 9;
export const SHT_DYNSYM = 11;
export const SHT_SYMTAB_SHNDX = 18;
export const SHT_RELR = 19;

// sh_flags
export const SHF_WRITE = 0x1;
export const SHF_ALLOC = 0x2;
export const SHF_EXECINSTR = 0x4;
export const SHF_INFO_LINK = 0x40;

// p_type
export const PT_NULL = 0;
export const PT_LOAD = 1;
export const PT_DYNAMIC = 2;
export const PT_INTERP = 3;
export const PT_NOTE = 4;

// p_flags
export const PF_X = 0x1;
export const PF_W = 0x2;
export const PF_R = 0x4;

// Symbol type (low 4 bits of st_info).
export const STT_NOTYPE = 0;
export const STT_OBJECT = 1;
export const STT_FUNC = 2;
export const STT_SECTION = 3;
export const STT_FILE = 4;
export const STT_COMMON = 5;
export const STT_TLS = 6;
export const STT_GNU_IFUNC = 10;

// Symbol binding (high 4 bits of st_info).
export const STB_LOCAL = 0;
export const STB_GLOBAL = 1;
export const STB_WEAK = 2;
export const STB_GNU_UNIQUE = 10;

// Symbol visibility (low 2 bits of st_other).
export const STV_DEFAULT = 0;
export const STV_INTERNAL = 1;
export const STV_HIDDEN = 2;
export const STV_PROTECTED = 3;

// x86-64 relocation types (psABI table 4.9). Only the ones the reader applies or names.
export const R_X86_64_NONE = 0;
export const R_X86_64_64 = 1;
export const R_X86_64_PC32 = 2;
export const R_X86_64_PLT32 = 4;
export const R_X86_64_COPY = 5;
export const R_X86_64_GLOB_DAT = 6;
export const R_X86_64_JUMP_SLOT = 7;
export const R_X86_64_RELATIVE = 8;
export const R_X86_64_GOTPCREL = 9;
export const R_X86_64_32 = 10;
export const R_X86_64_32S = 11;
export const R_X86_64_DTPMOD64 = 16;
export const R_X86_64_DTPOFF64 = 17;
export const R_X86_64_TPOFF64 = 18;
export const R_X86_64_PC64 = 24;
export const R_X86_64_IRELATIVE = 37;

// AArch64 relocation types (AAELF64 section 5.7).
export const R_AARCH64_NONE = 0;
export const R_AARCH64_ABS64 = 257;
export const R_AARCH64_ABS32 = 258;
export const R_AARCH64_PREL64 = 260;
export const R_AARCH64_PREL32 = 261;
export const R_AARCH64_COPY = 1024;
export const R_AARCH64_GLOB_DAT = 1025;
export const R_AARCH64_JUMP_SLOT = 1026;
export const R_AARCH64_RELATIVE = 1027;
export const R_AARCH64_TLS_TPREL64 = 1030;
export const R_AARCH64_IRELATIVE = 1032;

const X86_64_RELOCATION_NAMES: ReadonlyMap<number, string> = new Map([
  [R_X86_64_NONE, "R_X86_64_NONE"],
  [R_X86_64_64, "R_X86_64_64"],
  [R_X86_64_PC32, "R_X86_64_PC32"],
  [R_X86_64_PLT32, "R_X86_64_PLT32"],
  [R_X86_64_COPY, "R_X86_64_COPY"],
  [R_X86_64_GLOB_DAT, "R_X86_64_GLOB_DAT"],
  [R_X86_64_JUMP_SLOT, "R_X86_64_JUMP_SLOT"],
  [R_X86_64_RELATIVE, "R_X86_64_RELATIVE"],
  [R_X86_64_GOTPCREL, "R_X86_64_GOTPCREL"],
  [R_X86_64_32, "R_X86_64_32"],
  [R_X86_64_32S, "R_X86_64_32S"],
  [R_X86_64_DTPMOD64, "R_X86_64_DTPMOD64"],
  [R_X86_64_DTPOFF64, "R_X86_64_DTPOFF64"],
  [R_X86_64_TPOFF64, "R_X86_64_TPOFF64"],
  [R_X86_64_PC64, "R_X86_64_PC64"],
  [R_X86_64_IRELATIVE, "R_X86_64_IRELATIVE"],
]);

const AARCH64_RELOCATION_NAMES: ReadonlyMap<number, string> = new Map([
  [R_AARCH64_NONE, "R_AARCH64_NONE"],
  [R_AARCH64_ABS64, "R_AARCH64_ABS64"],
  [R_AARCH64_ABS32, "R_AARCH64_ABS32"],
  [R_AARCH64_PREL64, "R_AARCH64_PREL64"],
  [R_AARCH64_PREL32, "R_AARCH64_PREL32"],
  [R_AARCH64_COPY, "R_AARCH64_COPY"],
  [R_AARCH64_GLOB_DAT, "R_AARCH64_GLOB_DAT"],
  [R_AARCH64_JUMP_SLOT, "R_AARCH64_JUMP_SLOT"],
  [R_AARCH64_RELATIVE, "R_AARCH64_RELATIVE"],
  [R_AARCH64_TLS_TPREL64, "R_AARCH64_TLS_TPREL64"],
  [R_AARCH64_IRELATIVE, "R_AARCH64_IRELATIVE"],
]);

/** "R_X86_64_64 (1)" for messages; unknown types and machines print as the bare number. */
export function relocationTypeName(machine: number, type: number): string {
  const names = machine === EM_X86_64 ? X86_64_RELOCATION_NAMES : machine === EM_AARCH64 ? AARCH64_RELOCATION_NAMES : undefined;
  const name = names?.get(type);
  return name === undefined ? String(type) : `${name} (${type})`;
}

/**
 * The 32-bit PC-relative relocation of a machine (what `.rela.eh_frame` of a `.o` uses for an
 * FDE's pc_begin): R_X86_64_PC32, R_AARCH64_PREL32; undefined for other machines.
 */
export function pcRelative32RelocationType(machine: number): number | undefined {
  return machine === EM_X86_64 ? R_X86_64_PC32 : machine === EM_AARCH64 ? R_AARCH64_PREL32 : undefined;
}

/** The name of a machine's 64-bit absolute relocation (what a `.o`'s stack maps use): "R_X86_64_64", "R_AARCH64_ABS64". */
export function absolute64RelocationName(machine: number): string {
  return machine === EM_AARCH64 ? "R_AARCH64_ABS64" : "R_X86_64_64";
}

/** "EM_X86_64 (62)" for messages. */
export function machineName(machine: number): string {
  return machine === EM_X86_64 ? `EM_X86_64 (${machine})` : machine === EM_AARCH64 ? `EM_AARCH64 (${machine})` : String(machine);
}

/** True for st_shndx values that name a real section (not UNDEF, ABS, COMMON, XINDEX, ...). */
export function isRealSectionIndex(shndx: number): boolean {
  return shndx !== SHN_UNDEF && shndx < SHN_LORESERVE;
}
