import { createHash } from "node:crypto";
import type { Architecture } from "../arch/architecture.js";
import { architectureOfMachine } from "../arch/elf-architecture.js";
import { ByteView } from "../bytes/byte-view.js";
import { elfSoname } from "../elf/dynamic.js";
import { ET_REL, STB_GLOBAL, STB_WEAK, STT_FUNC } from "../elf/elf-constants.js";
import { ElfFile } from "../elf/elf-file.js";
import type { ElfSection } from "../elf/elf-section.js";
import type { ElfSymbol } from "../elf/elf-symbol.js";
import { relocatedSection, type RelocatedSection, type RelocationTarget } from "../elf/relocate.js";
import { MalformedInputError, RootwalkError, UnsupportedInputError, hex, withContext } from "../errors.js";
import type { FrameDescriptors } from "../safepoints/frame-descriptors.js";
import type { EhFrame } from "../unwind/eh-frame.js";
import { loadElfUnwind } from "./elf-unwind.js";
import { type ObjectKind, elfObjectKind } from "./object-kind.js";
import type { UnwindRow } from "./unwind-row.js";

/*
 * Loading one format's stack maps from an ELF file, the steps every format shares, written once:
 * parse the file, its architecture and kind (object, shared library, executable); the format's
 * own part (find its maps, locate and relocate them, parse them: `ElfMapFormat.read`); the unwind
 * info (src/loader/elf-unwind.ts); the descriptors (`ElfMapFormat.build`); the registry's content
 * key (sha256 of the format's prefix, its relocated bytes and .eh_frame); every RootwalkError
 * given the file's path. src/loader/object-file.ts (LLVM stack maps), plimmix-loader.ts
 * (`_GC_MAP_`) and ocaml-loader.ts (frame tables) pass their parts in. The helpers below serve the
 * formats whose maps sit at data labels (`_GC_MAP_*`, `caml*__frametable`).
 */

/** The file as every format's part sees it. */
export interface ElfMapFile {
  elf: ElfFile;
  /** From e_machine: whose registers the maps and unwind info name. */
  architecture: Architecture;
  kind: ObjectKind;
}

/** What `loadElfMaps` adds to a format's parts. */
export interface ElfMaps extends ElfMapFile {
  path: string;
  soname: string | undefined;
  unwind: EhFrame | undefined;
  descriptors: FrameDescriptors;
  /** sha256 of the relocated maps and the unwind info: the registry's "same map" key. */
  contentKey: string;
}

export type UnwindRowAt = (address: number, sectionIndex: number | undefined) => UnwindRow | undefined;

/** One format's part of loading its maps from an ELF file. */
export interface ElfMapFormat<Parts> {
  /** The format's maps in `file`, found, relocated and parsed; undefined when the file has none. */
  read(file: ElfMapFile): Parts | undefined;
  /** Their descriptors (addresses before any load bias), with the file's unwind rows. */
  build(parts: Parts, unwindRowAt: UnwindRowAt, file: ElfMapFile): FrameDescriptors;
  /** The content key hashes this, then `keyBytes`, then .eh_frame's bytes. */
  readonly keyPrefix: string;
  keyBytes(parts: Parts): Iterable<Uint8Array>;
}

/** The maps of `format` in the ELF file `bytes` with its parts, or undefined when it has none. Errors carry `path`. */
export function loadElfMaps<Parts extends object>(bytes: Uint8Array, path: string, format: ElfMapFormat<Parts>): (Parts & ElfMaps) | undefined {
  try {
    const elf = ElfFile.parse(bytes);
    const file: ElfMapFile = { elf, architecture: architectureOfMachine(elf.machine), kind: elfObjectKind(elf) };
    const parts = format.read(file);
    if (parts === undefined) return undefined;
    const { unwind, unwindRowAt } = loadElfUnwind(elf, file.kind);
    const descriptors = format.build(parts, unwindRowAt, file);
    const hash = createHash("sha256").update(format.keyPrefix);
    for (const b of format.keyBytes(parts)) hash.update(b);
    const ehFrame = elf.section(".eh_frame");
    if (ehFrame?.hasFileBytes) hash.update(ehFrame.bytes());
    return { ...parts, path, ...file, soname: elfSoname(elf), unwind, descriptors, contentKey: hash.digest("hex") };
  } catch (e) {
    if (e instanceof RootwalkError) throw withContext(e, path);
    throw e;
  }
}

/**
 * Defined STB_GLOBAL / STB_WEAK symbols matching `accept`, from `.symtab` (or `.dynsym` when the
 * file is stripped), one per (section, value), sorted by section then value.
 */
export function findDataSymbols(elf: ElfFile, accept: (symbol: ElfSymbol) => boolean): ElfSymbol[] {
  const seen = new Set<string>();
  const found: ElfSymbol[] = [];
  for (const table of [elf.symbols(), elf.dynamicSymbols()]) {
    for (const s of table) {
      if (s.definedSectionIndex === undefined || (s.bind !== STB_GLOBAL && s.bind !== STB_WEAK) || s.type === STT_FUNC || !accept(s)) continue;
      const key = `${s.definedSectionIndex}:${s.value}`;
      if (seen.has(key)) continue;
      seen.add(key);
      found.push(s);
    }
  }
  return found.sort((a, b) => a.definedSectionIndex! - b.definedSectionIndex! || a.value - b.value);
}

/** A map at a data label: its section (relocated once per section), where it starts, and the map over the stored and the relocated bytes. */
export interface LabelledMap<T> {
  label: ElfSymbol;
  section: ElfSection;
  relocated: RelocatedSection;
  offsetInSection: number;
  /** Over the bytes as stored in the file, and over the relocated bytes (what a loaded program's memory holds, at bias 0). */
  raw: T;
  map: T;
}

/** The map at each of `labels` (`what` names them in errors), parsed by `parse` from its label's offset. */
export function mapsAtLabels<T>(
  elf: ElfFile,
  labels: readonly ElfSymbol[],
  what: string,
  parse: (view: ByteView, offsetInSection: number) => T,
): LabelledMap<T>[] {
  const sections = new RelocatedSections(elf);
  return labels.map((label) => {
    const { section, relocated, offsetInSection } = sections.locate(label, what);
    const raw = parse(section.view(), offsetInSection);
    const map = parse(new ByteView(relocated.bytes, section.offset), offsetInSection);
    return { label, section, relocated, offsetInSection, raw, map };
  });
}

/**
 * The relocation of the address field `fieldOffset` bytes past the label of `at` (at file offset
 * `fileOffset`, for the error); in a `.o` every such field must carry one (`what` names it).
 */
export function addressRelocation(
  at: LabelledMap<unknown>,
  kind: ObjectKind,
  fieldOffset: number,
  fileOffset: number,
  what: string,
): RelocationTarget | undefined {
  const target = at.relocated.targets.get(at.offsetInSection + fieldOffset);
  if (kind === "relocatable" && target === undefined) {
    throw new MalformedInputError(what, fileOffset, "no relocation", `an R_X86_64_64 relocation (.rela${at.section.name})`);
  }
  return target;
}

/** Relocated data sections, each relocated once, and where a label lies in its section. */
class RelocatedSections {
  private readonly cache = new Map<number, RelocatedSection>();
  constructor(private readonly elf: ElfFile) {}

  locate(label: ElfSymbol, what: string): { section: ElfSection; relocated: RelocatedSection; offsetInSection: number } {
    const section = this.elf.sections[label.definedSectionIndex!];
    if (section === undefined || !section.hasFileBytes) {
      throw new MalformedInputError(
        `section of ${what} symbol "${label.name}"`,
        0,
        section?.describe() ?? String(label.sectionIndex),
        "a section with file contents (.data)",
      );
    }
    let relocated = this.cache.get(section.index);
    if (relocated === undefined) {
      relocated = relocatedSection(this.elf, section.name);
      if (relocated === undefined || relocated.section.index !== section.index) {
        throw new UnsupportedInputError(
          `section of ${what} symbol "${label.name}"`,
          section.headerOffset,
          section.describe(),
          "a section whose name is unique in the file",
        );
      }
      this.cache.set(section.index, relocated);
    }
    const offsetInSection = this.elf.type === ET_REL ? label.value : label.value - section.addr;
    if (offsetInSection < 0 || offsetInSection >= section.size) {
      throw new MalformedInputError(`${what} symbol "${label.name}" value`, section.offset, hex(label.value), `an address inside ${section.describe()}`);
    }
    return { section, relocated, offsetInSection };
  }
}

/** In a linked file: the name of each defined symbol of `type` (STT_*) by its address, `.symtab`'s over `.dynsym`'s. */
export function linkedSymbolNames(elf: ElfFile, type: number): Map<number, string> {
  const names = new Map<number, string>();
  for (const table of [elf.dynamicSymbols(), elf.symbols()]) {
    for (const s of table) if (s.type === type && s.definedSectionIndex !== undefined && s.name !== "") names.set(s.value, s.name);
  }
  return names;
}
