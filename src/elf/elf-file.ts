/**
 * A focused ELF64 little-endian reader: header, sections, symbols, Rela relocations and program
 * headers — what rootwalk needs to find `.llvm_stackmaps` in a .o, .so or executable and to
 * resolve the function addresses in it.
 *
 * Why not a package: npm's `elfy` (1.0.0) was evaluated; it is untyped, has no relocation
 * support and does not report bad input as rootwalk's typed errors, so this reader is our own.
 *
 * Everything is validated once here, at the boundary: a file that parses has sane header
 * fields and every section with file contents lies inside the file, so `ElfSection.bytes()`
 * never fails. Tables (symbols, relocations) are decoded lazily and validated when decoded.
 * Every failure is a TruncatedInputError / MalformedInputError / UnsupportedInputError naming
 * the file offset, the value found and the value expected.
 */
import { ByteView, requireBytes } from "../bytes/byte-view.js";
import { hex, InvalidArgumentError, MalformedInputError, TruncatedInputError, UnsupportedInputError } from "../errors.js";
import {
  ELF_MAGIC,
  EM_X86_64,
  machineName,
  ELFCLASS32,
  ELFCLASS64,
  ELFDATA2LSB,
  ELFDATA2MSB,
  EV_CURRENT,
  PN_XNUM,
  PT_LOAD,
  SHN_UNDEF,
  SHN_XINDEX,
  SHT_DYNSYM,
  SHT_NOBITS,
  SHT_NULL,
  SHT_REL,
  SHT_RELA,
  SHT_STRTAB,
  SHT_SYMTAB,
} from "./elf-constants.js";
import { readRelaSection, type ElfRelocation } from "./elf-relocation.js";
import {
  ElfSection,
  SECTION_HEADER_SIZE_BYTES,
  SH_ADDR,
  SH_ADDRALIGN,
  SH_ENTSIZE,
  SH_FLAGS,
  SH_INFO,
  SH_LINK,
  SH_NAME,
  SH_OFFSET,
  SH_SIZE,
  SH_TYPE,
} from "./elf-section.js";
import { readSymbolTable, stringAt, type ElfSymbol } from "./elf-symbol.js";

/**
 * ELF64 file header, 64 bytes at offset 0:
 *
 *   0  u8[4] magic        7f 45 4c 46 ("\x7fELF")
 *   4  u8  EI_CLASS       2 = ELFCLASS64 (1 = ELFCLASS32: unsupported)
 *   5  u8  EI_DATA        1 = little-endian (2 = big-endian: unsupported)
 *   6  u8  EI_VERSION     1
 *   7  u8  EI_OSABI, 8 u8 EI_ABIVERSION, 9..15 padding (not checked)
 *  16  u16 e_type         ET_REL 1 (.o), ET_EXEC 2, ET_DYN 3 (.so, PIE)
 *  18  u16 e_machine      EM_X86_64 62, EM_AARCH64 183
 *  20  u32 e_version      1
 *  24  u64 e_entry
 *  32  u64 e_phoff        program header table offset (0 if none)
 *  40  u64 e_shoff        section header table offset (0 if none)
 *  48  u32 e_flags
 *  52  u16 e_ehsize       64
 *  54  u16 e_phentsize    56 when there are program headers
 *  56  u16 e_phnum        PN_XNUM (0xffff): real count in section 0's sh_info
 *  58  u16 e_shentsize    64 when there are section headers
 *  60  u16 e_shnum        0 with e_shoff != 0: real count in section 0's sh_size
 *  62  u16 e_shstrndx     SHN_UNDEF: no section names; SHN_XINDEX: real index in section 0's sh_link
 */
const EI_MAG = 0;
const EI_CLASS = EI_MAG + 4;
const EI_DATA = EI_CLASS + 1;
const EI_VERSION = EI_DATA + 1;
const EI_NIDENT = 16;
export const E_TYPE = EI_NIDENT;
export const E_MACHINE = E_TYPE + 2;
const E_VERSION = E_MACHINE + 2;
const E_ENTRY = E_VERSION + 4;
export const E_PHOFF = E_ENTRY + 8;
export const E_SHOFF = E_PHOFF + 8;
const E_FLAGS = E_SHOFF + 8;
const E_EHSIZE = E_FLAGS + 4;
const E_PHENTSIZE = E_EHSIZE + 2;
export const E_PHNUM = E_PHENTSIZE + 2;
const E_SHENTSIZE = E_PHNUM + 2;
const E_SHNUM = E_SHENTSIZE + 2;
const E_SHSTRNDX = E_SHNUM + 2;
export const ELF_HEADER_SIZE_BYTES = E_SHSTRNDX + 2; // 64

/**
 * ELF64 program header, 56 bytes:
 *
 *   0  u32 p_type    PT_LOAD 1, PT_DYNAMIC 2, ...
 *   4  u32 p_flags   PF_X 1 | PF_W 2 | PF_R 4
 *   8  u64 p_offset  file offset of the segment
 *  16  u64 p_vaddr   link-time address (run-time address = p_vaddr + load bias)
 *  24  u64 p_paddr
 *  32  u64 p_filesz  bytes in the file
 *  40  u64 p_memsz   bytes in memory (>= p_filesz; the rest is zero-filled)
 *  48  u64 p_align
 */
const P_TYPE = 0;
const P_FLAGS = P_TYPE + 4;
export const P_OFFSET = P_FLAGS + 4;
const P_VADDR = P_OFFSET + 8;
const P_PADDR = P_VADDR + 8;
export const P_FILESZ = P_PADDR + 8;
const P_MEMSZ = P_FILESZ + 8;
const P_ALIGN = P_MEMSZ + 8;
export const PROGRAM_HEADER_SIZE_BYTES = P_ALIGN + 8; // 56

export interface ElfProgramHeader {
  readonly index: number;
  /** PT_* */
  readonly type: number;
  /** PF_* */
  readonly flags: number;
  readonly offset: number;
  readonly vaddr: number;
  readonly fileSize: number;
  readonly memSize: number;
  readonly align: number;
}

export class ElfFile {
  private symtabCache: readonly ElfSymbol[] | undefined;
  private dynsymCache: readonly ElfSymbol[] | undefined;

  private constructor(
    /** The whole file (not copied). */
    readonly bytes: Uint8Array,
    /** ET_REL 1, ET_EXEC 2, ET_DYN 3 (other values are kept as found). */
    readonly type: number,
    /** EM_X86_64 62, EM_AARCH64 183 (other values are kept as found). */
    readonly machine: number,
    readonly entry: number,
    readonly sections: readonly ElfSection[],
    readonly programHeaders: readonly ElfProgramHeader[],
  ) {}

  /** Parses and validates the header, section headers and program headers of an ELF64 LE file. */
  static parse(input: Uint8Array): ElfFile {
    requireBytes(input, "ELF file bytes");
    // A Node Buffer's slice() is a view, not a copy: work on a plain Uint8Array over the same
    // memory so that every later .slice() of section bytes really copies.
    const bytes = new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
    const view = new ByteView(bytes);
    view.need(0, ELF_HEADER_SIZE_BYTES, "ELF header");
    checkIdent(view);
    const type = view.u16(E_TYPE);
    const machine = view.u16(E_MACHINE);
    const version = view.u32(E_VERSION);
    if (version !== EV_CURRENT) {
      throw new MalformedInputError("ELF header e_version", E_VERSION, version, String(EV_CURRENT));
    }
    const ehsize = view.u16(E_EHSIZE);
    if (ehsize !== ELF_HEADER_SIZE_BYTES) {
      throw new MalformedInputError("ELF header e_ehsize", E_EHSIZE, ehsize, String(ELF_HEADER_SIZE_BYTES));
    }
    const entry = view.u64Number(E_ENTRY, "ELF header e_entry");
    const sections = readSections(view);
    const programHeaders = readProgramHeaders(view, sections);
    return new ElfFile(bytes, type, machine, entry, sections, programHeaders);
  }

  /** The first section called `name`, or undefined. */
  section(name: string): ElfSection | undefined {
    return this.sections.find((s) => s.name === name);
  }

  /** The section a header field (sh_link, ...) names; an index past the table is malformed input at `fieldOffset`. */
  linkedSection(index: number, what: string, fieldOffset: number): ElfSection {
    const section = this.sections[index];
    if (section === undefined) {
      throw new MalformedInputError(what, fieldOffset, index, `a section index below ${this.sections.length}`);
    }
    return section;
  }

  /** The SHF_ALLOC section whose [addr, addr + size) holds a link-time address (ET_EXEC/ET_DYN). */
  sectionContainingAddress(address: number): ElfSection | undefined {
    return this.sections.find((s) => s.isAlloc && s.size > 0 && s.containsAddress(address));
  }

  /** `.symtab` (SHT_SYMTAB), decoded on first use; empty when the file has none (stripped). */
  symbols(): readonly ElfSymbol[] {
    if (this.symtabCache === undefined) this.symtabCache = this.readSymbolsOfType(SHT_SYMTAB);
    return this.symtabCache;
  }

  /** `.dynsym` (SHT_DYNSYM), decoded on first use; empty when the file has none (.o, static). */
  dynamicSymbols(): readonly ElfSymbol[] {
    if (this.dynsymCache === undefined) this.dynsymCache = this.readSymbolsOfType(SHT_DYNSYM);
    return this.dynsymCache;
  }

  /** The symbols of a symbol table section (what a relocation section's sh_link names). */
  symbolsOfTable(table: ElfSection): readonly ElfSymbol[] {
    if (table.type === SHT_SYMTAB) return this.symbols();
    if (table.type === SHT_DYNSYM) return this.dynamicSymbols();
    throw new MalformedInputError(`${table.describe()} sh_type`, table.headerOffset + SH_TYPE, table.type, "SHT_SYMTAB (2) or SHT_DYNSYM (11)");
  }

  /** The SHT_RELA / SHT_REL sections whose sh_info names `targetSectionIndex` (`.rela.<name>`). */
  relocationSectionsFor(targetSectionIndex: number): ElfSection[] {
    return this.sections.filter((s) => (s.type === SHT_RELA || s.type === SHT_REL) && s.info === targetSectionIndex && targetSectionIndex !== 0);
  }

  /** The entries of a SHT_RELA section (SHT_REL: UnsupportedInputError). */
  relocations(relSection: ElfSection): ElfRelocation[] {
    if (this.sections[relSection.index] !== relSection) {
      throw new InvalidArgumentError("relocation section", relSection.describe(), `a section of this file`);
    }
    return readRelaSection(relSection);
  }

  /** The PT_LOAD segments, in file order (for load-bias arithmetic). */
  loadSegments(): ElfProgramHeader[] {
    return this.programHeaders.filter((p) => p.type === PT_LOAD);
  }

  private readSymbolsOfType(sectionType: number): readonly ElfSymbol[] {
    const table = this.sections.find((s) => s.type === sectionType);
    return table === undefined ? [] : readSymbolTable(table, this.sections);
  }
}

/**
 * Object formats of other systems, by their first bytes (as `file` tells them): named in the
 * refusal, since rootwalk reads Linux's ELF only (x86-64 and AArch64).
 */
const FOREIGN_OBJECT_FORMATS: readonly { magic: string; name: string }[] = [
  { magic: "cf fa ed fe", name: "a 64-bit Mach-O file (macOS)" },
  { magic: "ce fa ed fe", name: "a 32-bit Mach-O file (macOS)" },
  { magic: "ca fe ba be", name: "a universal Mach-O file (macOS)" },
  { magic: "4d 5a", name: "a PE/COFF file (Windows)" },
  { magic: "64 86", name: "a COFF object (Windows, x86-64)" },
  { magic: "64 aa", name: "a COFF object (Windows, ARM64)" },
];

function checkIdent(view: ByteView): void {
  for (let i = 0; i < ELF_MAGIC.length; i++) {
    if (view.u8(EI_MAG + i) !== ELF_MAGIC[i]) {
      const found = Array.from(view.bytes.subarray(EI_MAG, EI_MAG + 4), (b) => b.toString(16).padStart(2, "0")).join(" ");
      const foreign = FOREIGN_OBJECT_FORMATS.find((f) => found.startsWith(f.magic));
      if (foreign !== undefined) throw new UnsupportedInputError("file format", EI_MAG, `${foreign.name} (${found})`, "ELF (Linux, x86-64 and AArch64)");
      throw new MalformedInputError("ELF magic", EI_MAG, found, "7f 45 4c 46");
    }
  }
  const elfClass = view.u8(EI_CLASS);
  if (elfClass === ELFCLASS32) {
    throw new UnsupportedInputError("ELF class (EI_CLASS)", EI_CLASS, "ELFCLASS32 (1)", "ELFCLASS64 (2)");
  }
  if (elfClass !== ELFCLASS64) {
    throw new MalformedInputError("ELF class (EI_CLASS)", EI_CLASS, elfClass, "ELFCLASS64 (2)");
  }
  const data = view.u8(EI_DATA);
  if (data === ELFDATA2MSB) {
    throw new UnsupportedInputError("ELF data encoding (EI_DATA)", EI_DATA, "ELFDATA2MSB (2, big-endian)", "ELFDATA2LSB (1, little-endian)");
  }
  if (data !== ELFDATA2LSB) {
    throw new MalformedInputError("ELF data encoding (EI_DATA)", EI_DATA, data, "ELFDATA2LSB (1)");
  }
  const identVersion = view.u8(EI_VERSION);
  if (identVersion !== EV_CURRENT) {
    throw new MalformedInputError("ELF ident version (EI_VERSION)", EI_VERSION, identVersion, String(EV_CURRENT));
  }
}

function readSections(view: ByteView): ElfSection[] {
  const shoff = view.u64Number(E_SHOFF, "ELF header e_shoff");
  let count = view.u16(E_SHNUM);
  if (shoff === 0) {
    if (count !== 0) throw new MalformedInputError("ELF header e_shoff", E_SHOFF, 0, `a section header table offset (e_shnum is ${count})`);
    return [];
  }
  const entsize = view.u16(E_SHENTSIZE);
  if (entsize !== SECTION_HEADER_SIZE_BYTES) {
    throw new MalformedInputError("ELF header e_shentsize", E_SHENTSIZE, entsize, String(SECTION_HEADER_SIZE_BYTES));
  }
  view.need(shoff, SECTION_HEADER_SIZE_BYTES, "section header 0");
  if (count === 0) {
    // Extended numbering: more than 0xfeff sections, the count is in section 0's sh_size.
    count = view.u64Number(shoff + SH_SIZE, "section header 0 sh_size (extended section count)");
    if (count === 0) throw new MalformedInputError("section header 0 sh_size (extended section count)", shoff + SH_SIZE, 0, "at least 1");
  }
  view.need(shoff, count * SECTION_HEADER_SIZE_BYTES, `section header table (${count} entries)`);

  let shstrndx = view.u16(E_SHSTRNDX);
  let shstrndxOffset = E_SHSTRNDX;
  if (shstrndx === SHN_XINDEX) {
    shstrndx = view.u32(shoff + SH_LINK);
    shstrndxOffset = shoff + SH_LINK;
  }
  if (shstrndx !== SHN_UNDEF && shstrndx >= count) {
    throw new MalformedInputError("ELF header e_shstrndx", shstrndxOffset, shstrndx, `a section index below ${count}`);
  }

  const headers = [];
  for (let i = 0; i < count; i++) headers.push(readSectionHeader(view, shoff + i * SECTION_HEADER_SIZE_BYTES, i));

  const names = shstrndx === SHN_UNDEF ? undefined : headers[shstrndx];
  if (names !== undefined && names.type !== SHT_STRTAB) {
    throw new MalformedInputError(`section ${shstrndx} (e_shstrndx) sh_type`, names.headerOffset + SH_TYPE, names.type, "SHT_STRTAB (3)");
  }
  const namesSection = names === undefined ? undefined : toSection(view, names, "");
  const namesView = namesSection?.view();
  return headers.map((h) => {
    const name =
      namesSection === undefined || namesView === undefined || h.nameOffset === 0
        ? ""
        : stringAt(namesView, namesSection, h.nameOffset, `section ${h.index} sh_name`, h.headerOffset + SH_NAME);
    return toSection(view, h, name);
  });
}

interface RawSectionHeader {
  index: number;
  headerOffset: number;
  nameOffset: number;
  type: number;
  flags: number;
  addr: number;
  offset: number;
  size: number;
  link: number;
  info: number;
  addrAlign: number;
  entsize: number;
}

function readSectionHeader(view: ByteView, at: number, index: number): RawSectionHeader {
  const what = `section header ${index}`;
  const type = view.u32(at + SH_TYPE);
  const header: RawSectionHeader = {
    index,
    headerOffset: at,
    nameOffset: view.u32(at + SH_NAME),
    type,
    flags: view.u64Number(at + SH_FLAGS, `${what} sh_flags`),
    addr: view.u64Number(at + SH_ADDR, `${what} sh_addr`),
    offset: view.u64Number(at + SH_OFFSET, `${what} sh_offset`),
    size: view.u64Number(at + SH_SIZE, `${what} sh_size`),
    link: view.u32(at + SH_LINK),
    info: view.u32(at + SH_INFO),
    addrAlign: view.u64Number(at + SH_ADDRALIGN, `${what} sh_addralign`),
    entsize: view.u64Number(at + SH_ENTSIZE, `${what} sh_entsize`),
  };
  if (header.addr + header.size > Number.MAX_SAFE_INTEGER) {
    throw new MalformedInputError(`${what} sh_addr + sh_size`, at + SH_ADDR, hex(header.addr + header.size), "an end address below 2^53");
  }
  return header;
}

function toSection(view: ByteView, h: RawSectionHeader, name: string): ElfSection {
  if (h.type !== SHT_NOBITS && h.type !== SHT_NULL) {
    const what = `section ${h.index}${name === "" ? "" : ` (${name})`} contents`;
    if (h.offset > view.lengthBytes) {
      throw new MalformedInputError(
        `${what} sh_offset`,
        h.headerOffset + SH_OFFSET,
        hex(h.offset),
        `an offset within the file (size ${hex(view.lengthBytes)})`,
      );
    }
    if (h.offset + h.size > view.lengthBytes) {
      throw new TruncatedInputError(what, h.offset, h.size, view.lengthBytes - h.offset);
    }
  }
  return new ElfSection(view.bytes, h.index, h.headerOffset, name, h.type, h.flags, h.addr, h.offset, h.size, h.link, h.info, h.entsize, h.addrAlign);
}

function readProgramHeaders(view: ByteView, sections: readonly ElfSection[]): ElfProgramHeader[] {
  const phoff = view.u64Number(E_PHOFF, "ELF header e_phoff");
  let count = view.u16(E_PHNUM);
  if (count === PN_XNUM) {
    const first = sections[0];
    if (first === undefined) {
      throw new MalformedInputError("ELF header e_phnum", E_PHNUM, hex(PN_XNUM), "a count (PN_XNUM needs section 0 to hold it)");
    }
    count = first.info;
  }
  if (count === 0) return [];
  if (phoff === 0) {
    throw new MalformedInputError("ELF header e_phoff", E_PHOFF, 0, `a program header table offset (e_phnum is ${count})`);
  }
  const entsize = view.u16(E_PHENTSIZE);
  if (entsize !== PROGRAM_HEADER_SIZE_BYTES) {
    throw new MalformedInputError("ELF header e_phentsize", E_PHENTSIZE, entsize, String(PROGRAM_HEADER_SIZE_BYTES));
  }
  view.need(phoff, count * PROGRAM_HEADER_SIZE_BYTES, `program header table (${count} entries)`);
  const headers: ElfProgramHeader[] = [];
  for (let i = 0; i < count; i++) {
    const at = phoff + i * PROGRAM_HEADER_SIZE_BYTES;
    const what = `program header ${i}`;
    const header: ElfProgramHeader = {
      index: i,
      type: view.u32(at + P_TYPE),
      flags: view.u32(at + P_FLAGS),
      offset: view.u64Number(at + P_OFFSET, `${what} p_offset`),
      vaddr: view.u64Number(at + P_VADDR, `${what} p_vaddr`),
      fileSize: view.u64Number(at + P_FILESZ, `${what} p_filesz`),
      memSize: view.u64Number(at + P_MEMSZ, `${what} p_memsz`),
      align: view.u64Number(at + P_ALIGN, `${what} p_align`),
    };
    if (header.type === PT_LOAD) {
      if (header.offset + header.fileSize > view.lengthBytes) {
        throw new TruncatedInputError(`${what} (PT_LOAD) file contents`, header.offset, header.fileSize, view.lengthBytes - header.offset);
      }
      if (header.memSize < header.fileSize) {
        throw new MalformedInputError(`${what} p_memsz`, at + P_MEMSZ, hex(header.memSize), `at least p_filesz ${hex(header.fileSize)}`);
      }
      if (header.vaddr + header.memSize > Number.MAX_SAFE_INTEGER) {
        throw new MalformedInputError(`${what} p_vaddr + p_memsz`, at + P_VADDR, hex(header.vaddr + header.memSize), "an end address below 2^53");
      }
    }
    headers.push(header);
  }
  return headers;
}

/**
 * Formats rootwalk reads for x86-64 only (plimmix `_GC_MAP_` maps, OCaml frame tables): a file
 * of another machine holding one is refused by name. `what` names the format in the message.
 */
export function requireX86_64(elf: ElfFile, what: string): void {
  if (elf.machine !== EM_X86_64) {
    throw new UnsupportedInputError(
      "ELF header e_machine",
      E_MACHINE,
      machineName(elf.machine),
      `${machineName(EM_X86_64)}: rootwalk reads ${what} of x86-64 only`,
    );
  }
}
