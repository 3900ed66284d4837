/**
 * A section's bytes as they are meant to be read: a copy with the 64-bit absolute relocations
 * applied, and for every relocated 8-byte field, what it points to. This is what turns the zero
 * Function Addresses of a .o's `.llvm_stackmaps` into "offset 0x40 of .text (function f)", and
 * what gives a .so's stack map the addresses its dynamic loader would write (at load bias 0).
 *
 * ET_REL (.o) — the SHT_RELA section whose sh_info names the section (`.rela.llvm_stackmaps`):
 *   R_X86_64_64 (1), R_AARCH64_ABS64 (257)   value = S + A, S = st_value of the symbol (in a .o,
 *                                            an offset within the symbol's section; 0 for a
 *                                            section symbol, so internal functions referenced as
 *                                            `.text`+addend become offset = addend)
 *   R_*_NONE (0)                             ignored
 *   anything else                            UnsupportedInputError (type and offset)
 *
 * ET_EXEC / ET_DYN (executables, PIE, .so) — the file already holds link-time addresses; the
 * dynamic relocations (SHF_ALLOC SHT_RELA sections with sh_info 0 or naming the section, such
 * as `.rela.dyn`, and SHT_RELR `.relr.dyn`) whose field lies in [sh_addr, sh_addr + sh_size):
 *   R_X86_64_RELATIVE (8), R_AARCH64_RELATIVE (1027)      value = A            kind "relative"
 *   SHT_RELR entries                                      value = file bytes   kind "relative"
 *   R_X86_64_64 (1), R_X86_64_GLOB_DAT (6),
 *   R_AARCH64_ABS64 (257), R_AARCH64_GLOB_DAT (1025)      value = S + A        kind "symbol"
 *     with S = st_value in `.dynsym` at link time; an undefined symbol (st_shndx 0) has no
 *     value in this file and is a MalformedInputError naming it. The dynamic loader may bind
 *     a preemptible symbol elsewhere at run time: kind "symbol" says so.
 *   R_*_NONE (0)                                          ignored
 *   anything else                                         UnsupportedInputError
 *
 * Values written are plain numbers below 2^53; a negative or larger S + A is malformed.
 */
import { joinHalves, setViewU64 } from "../bytes/word-codec.js";
import { hex, MalformedInputError, requireArgument, UnsupportedInputError } from "../errors.js";
import {
  EM_AARCH64,
  EM_X86_64,
  absolute64RelocationName,
  ET_DYN,
  ET_EXEC,
  ET_REL,
  machineName,
  R_AARCH64_ABS64,
  R_AARCH64_GLOB_DAT,
  R_AARCH64_NONE,
  R_AARCH64_RELATIVE,
  R_X86_64_64,
  R_X86_64_GLOB_DAT,
  R_X86_64_NONE,
  R_X86_64_RELATIVE,
  relocationTypeName,
  SHN_COMMON,
  SHN_UNDEF,
  SHT_REL,
  SHT_RELA,
  SHT_RELR,
  STT_SECTION,
} from "./elf-constants.js";
import { E_MACHINE, E_TYPE, ElfFile } from "./elf-file.js";
import { readRelrSection, type ElfRelocation } from "./elf-relocation.js";
import { SH_LINK, type ElfSection } from "./elf-section.js";
import type { ElfSymbol } from "./elf-symbol.js";
import { functionStartingAt } from "./symbol-at.js";

export { functionStartingAt, symbolAt } from "./symbol-at.js";

export interface RelocatedSection {
  section: ElfSection;
  /** A copy of the section's bytes with the relocations applied. */
  bytes: Uint8Array;
  /** For each relocated 8-byte field (offset within the section): the target. */
  targets: Map<number, RelocationTarget>;
}

export interface RelocationTarget {
  /**
   * The symbol the field points to. For a relocation against a section symbol (a .o's internal
   * functions: `.text`+addend) or a RELATIVE one: the function starting exactly at the target,
   * if there is one, else undefined (then use `sectionName`).
   */
  symbolName: string | undefined;
  /** The section the target lies in (for a .o: `value` is an offset in it). */
  sectionIndex: number | undefined;
  sectionName: string | undefined;
  /** The value written into the field. */
  value: number;
  /**
   * "absolute": a .o's static 64-bit relocation, or a dynamic one without a symbol.
   * "relative": a dynamic R_*_RELATIVE / RELR field: load bias + link-time address.
   * "symbol": a dynamic relocation against a `.dynsym` symbol; `value` is its link-time address,
   *           but the loader may bind a preemptible symbol to another module's definition.
   */
  kind: "absolute" | "relative" | "symbol";
}

/** The named section with its relocations applied, or undefined when the file has no such section. */
export function relocatedSection(elf: ElfFile, sectionName: string): RelocatedSection | undefined {
  requireArgument(elf instanceof ElfFile, "elf", elf, "an ElfFile (ElfFile.parse(bytes))");
  requireArgument(typeof sectionName === "string", "section name", sectionName, 'a string such as ".llvm_stackmaps"');
  const section = elf.section(sectionName);
  if (section === undefined) return undefined;
  const result: RelocatedSection = { section, bytes: new Uint8Array(section.bytes()), targets: new Map() };
  switch (elf.type) {
    case ET_REL:
      applyObjectRelocations(elf, result);
      break;
    case ET_EXEC:
    case ET_DYN:
      applyDynamicRelocations(elf, result);
      break;
    default:
      throw new UnsupportedInputError("ELF header e_type", E_TYPE, elf.type, "ET_REL (1), ET_EXEC (2) or ET_DYN (3)");
  }
  return result;
}

/** How the reader treats one relocation type of one machine. */
type RelocationRole = "none" | "absolute64" | "relative" | "other";

function roleOf(elf: ElfFile, type: number): RelocationRole {
  switch (elf.machine) {
    case EM_X86_64:
      if (type === R_X86_64_NONE) return "none";
      if (type === R_X86_64_64 || (elf.type !== ET_REL && type === R_X86_64_GLOB_DAT)) return "absolute64";
      if (elf.type !== ET_REL && type === R_X86_64_RELATIVE) return "relative";
      return "other";
    case EM_AARCH64:
      if (type === R_AARCH64_NONE) return "none";
      if (type === R_AARCH64_ABS64 || (elf.type !== ET_REL && type === R_AARCH64_GLOB_DAT)) return "absolute64";
      if (elf.type !== ET_REL && type === R_AARCH64_RELATIVE) return "relative";
      return "other";
    default:
      throw new UnsupportedInputError("ELF header e_machine (for relocations)", E_MACHINE, machineName(elf.machine), "EM_X86_64 (62) or EM_AARCH64 (183)");
  }
}

function supportedTypes(elf: ElfFile): string {
  const aarch64 = elf.machine === EM_AARCH64;
  if (elf.type === ET_REL) return absolute64RelocationName(elf.machine);
  return aarch64 ? "R_AARCH64_RELATIVE, R_AARCH64_ABS64, R_AARCH64_GLOB_DAT" : "R_X86_64_RELATIVE, R_X86_64_64, R_X86_64_GLOB_DAT";
}

function applyObjectRelocations(elf: ElfFile, result: RelocatedSection): void {
  const { section } = result;
  for (const relSection of elf.relocationSectionsFor(section.index)) {
    const relocations = elf.relocations(relSection);
    const symbols = linkedSymbols(elf, relSection);
    for (const r of relocations) {
      const role = roleOf(elf, r.type);
      if (role === "none") continue;
      if (role !== "absolute64") throw unsupportedType(elf, r, section, r.offset);
      checkField(section, r, r.offset);
      const symbol = symbolOf(symbols, r, relSection);
      // S is 0 without a symbol and for symbols this object does not place (undefined, common).
      const placed = symbol !== undefined && symbol.sectionIndex !== SHN_UNDEF && symbol.sectionIndex !== SHN_COMMON;
      const value = checkedValue((placed ? symbol.value : 0) + r.addend, r);
      writeU64(result.bytes, r.offset, value);
      result.targets.set(r.offset, objectTarget(elf, symbol, value));
    }
  }
}

function objectTarget(elf: ElfFile, symbol: ElfSymbol | undefined, value: number): RelocationTarget {
  if (symbol === undefined) return { symbolName: undefined, sectionIndex: undefined, sectionName: undefined, value, kind: "absolute" };
  const sectionIndex = symbol.definedSectionIndex;
  const sectionName = sectionIndex === undefined ? undefined : elf.sections[sectionIndex]?.name;
  const symbolName = symbol.type === STT_SECTION ? (sectionIndex === undefined ? undefined : functionStartingAt(elf, sectionIndex, value)?.name) : symbol.name;
  return { symbolName, sectionIndex, sectionName, value, kind: "absolute" };
}

function applyDynamicRelocations(elf: ElfFile, result: RelocatedSection): void {
  const { section } = result;
  if (!section.isAlloc) return; // not loaded: no dynamic relocation applies (sh_addr is 0)
  const dynamic = elf.sections.filter(
    (s) => s.isAlloc && (s.type === SHT_RELA || s.type === SHT_REL || s.type === SHT_RELR) && (s.info === 0 || s.info === section.index),
  );
  for (const relSection of dynamic) {
    if (relSection.type === SHT_RELR) {
      applyRelr(elf, relSection, result);
      continue;
    }
    const relocations = elf.relocations(relSection);
    let symbols: readonly ElfSymbol[] | undefined; // decoded only if a symbol relocation needs them
    for (const r of relocations) {
      if (!section.containsAddress(r.offset)) continue;
      const role = roleOf(elf, r.type);
      if (role === "none") continue;
      const fieldOffset = r.offset - section.addr;
      if (role === "other") throw unsupportedType(elf, r, section, fieldOffset);
      checkField(section, r, fieldOffset);
      let target: RelocationTarget;
      if (role === "relative" || r.symbolIndex === 0) {
        const value = checkedValue(r.addend, r);
        target = addressTarget(elf, value, role === "relative" ? "relative" : "absolute");
      } else {
        symbols ??= linkedSymbols(elf, relSection);
        const symbol = symbolOf(symbols, r, relSection)!;
        if (symbol.sectionIndex === SHN_UNDEF) {
          throw new MalformedInputError(
            `${relocationTypeName(elf.machine, r.type)} at ${section.name} offset ${hex(fieldOffset)} against symbol ${r.symbolIndex}`,
            r.fileOffset,
            `undefined symbol "${symbol.name}"`,
            "a symbol defined in this file (its address is only known at run time)",
          );
        }
        const value = checkedValue(symbol.value + r.addend, r);
        const sectionIndex = symbol.definedSectionIndex ?? elf.sectionContainingAddress(value)?.index;
        const sectionName = sectionIndex === undefined ? undefined : elf.sections[sectionIndex]?.name;
        target = { symbolName: symbol.name, sectionIndex, sectionName, value, kind: "symbol" };
      }
      writeU64(result.bytes, fieldOffset, target.value);
      result.targets.set(fieldOffset, target);
    }
  }
}

function applyRelr(elf: ElfFile, relr: ElfSection, result: RelocatedSection): void {
  const { section } = result;
  const view = new DataView(result.bytes.buffer, result.bytes.byteOffset, result.bytes.byteLength);
  for (const address of readRelrSection(relr)) {
    if (!section.containsAddress(address)) continue;
    const fieldOffset = address - section.addr;
    if (fieldOffset + 8 > section.size || !section.hasFileBytes) {
      throw new MalformedInputError(
        `${relr.describe()} entry for ${section.name}`,
        relr.offset,
        `field at ${hex(address)}`,
        `an 8-byte field inside [${hex(section.addr)}, ${hex(section.addr + section.size)}) with file contents`,
      );
    }
    const hi = view.getUint32(fieldOffset + 4, true);
    if (hi > 0x1fffff) {
      throw new MalformedInputError(
        `${section.name} field relocated by ${relr.describe()}`,
        section.offset + fieldOffset,
        hex(view.getBigUint64(fieldOffset, true)),
        "a link-time address below 2^53",
      );
    }
    const value = joinHalves(view.getUint32(fieldOffset, true), hi);
    result.targets.set(fieldOffset, addressTarget(elf, value, "relative"));
  }
}

/** Target of a link-time address with no symbol of its own: name it by the function starting there. */
function addressTarget(elf: ElfFile, value: number, kind: "relative" | "absolute"): RelocationTarget {
  const section = elf.sectionContainingAddress(value);
  return {
    symbolName: functionStartingAt(elf, undefined, value)?.name,
    sectionIndex: section?.index,
    sectionName: section?.name,
    value,
    kind,
  };
}

/** The symbols of the table a relocation section's sh_link names. */
function linkedSymbols(elf: ElfFile, relSection: ElfSection): readonly ElfSymbol[] {
  const table = elf.linkedSection(relSection.link, `${relSection.describe()} sh_link`, relSection.headerOffset + SH_LINK);
  return elf.symbolsOfTable(table);
}

/** The relocation's symbol; undefined for index 0 (no symbol, S = 0). */
function symbolOf(symbols: readonly ElfSymbol[], r: ElfRelocation, relSection: ElfSection): ElfSymbol | undefined {
  if (r.symbolIndex === 0) return undefined;
  const symbol = symbols[r.symbolIndex];
  if (symbol === undefined) {
    throw new MalformedInputError(`${relSection.describe()} entry r_info symbol index`, r.fileOffset + 12, r.symbolIndex, `an index below ${symbols.length}`);
  }
  return symbol;
}

/** The relocated 8-byte field must lie inside the section's file bytes. */
function checkField(section: ElfSection, r: ElfRelocation, fieldOffset: number): void {
  if (fieldOffset < 0 || fieldOffset + 8 > section.size || !section.hasFileBytes) {
    throw new MalformedInputError(
      `relocation r_offset for ${section.describe()}`,
      r.fileOffset,
      hex(r.offset),
      `an 8-byte field inside the section's ${hex(section.hasFileBytes ? section.size : 0)} bytes of file contents`,
    );
  }
}

function checkedValue(value: number, r: ElfRelocation): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new MalformedInputError("relocated value S + A", r.fileOffset, hex(value), "an address between 0 and 2^53 - 1");
  }
  return value;
}

function unsupportedType(elf: ElfFile, r: ElfRelocation, section: ElfSection, fieldOffset: number): UnsupportedInputError {
  return new UnsupportedInputError(
    `relocation type for ${section.name} offset ${hex(fieldOffset)}`,
    r.fileOffset,
    relocationTypeName(elf.machine, r.type),
    supportedTypes(elf),
  );
}

function writeU64(bytes: Uint8Array, offset: number, value: number): void {
  setViewU64(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset, value);
}
