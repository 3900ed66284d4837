import { encodeLocationWord0, LocationKind, ROOT_TYPE_ATOMIC } from "../location/location-word.js";
import { createHash } from "node:crypto";
import { ByteView, requireBytes } from "../bytes/byte-view.js";
import { elfSoname } from "../elf/dynamic.js";
import { ET_REL, STB_GLOBAL, STB_WEAK, STT_FUNC, STT_OBJECT } from "../elf/elf-constants.js";
import { ElfFile, requireX86_64 } from "../elf/elf-file.js";
import { architectureOfMachine } from "../arch/elf-architecture.js";
import { X86_64 } from "../arch/x86-64.js";
import type { ElfSection } from "../elf/elf-section.js";
import type { ElfSymbol } from "../elf/elf-symbol.js";
import { relocatedSection, type RelocatedSection, type RelocationTarget } from "../elf/relocate.js";
import { InvalidArgumentError, MalformedInputError, RootwalkError, UnsupportedInputError, hex, withContext } from "../errors.js";
import { DWARF_CFA, FrameDescriptorBuilder, type FrameDescriptors } from "../safepoints/frame-descriptors.js";
import { checkRegistryArgument, type SafepointRegistry } from "../safepoints/registry.js";
import { PLIMMIX_SYMBOL_PREFIX, PlimmixMap, parsePlimmixBlob } from "../stackmap/plimmix-map.js";
import { type EhFrame } from "../unwind/eh-frame.js";
import type { ResolvedFunction } from "./llvm-map-loader.js";
import type { UnwindRow } from "./unwind-row.js";
import { type ObjectKind, elfObjectKind } from "./object-kind.js";
import { frameAtSafepoint } from "./safepoint-frame.js";
import { loadElfUnwind } from "./elf-unwind.js";
export { frameAtSafepoint, loadElfUnwind };

/**
 * The pseudo DWARF register of CFA-relative root locations (defined with the descriptors; the
 * walker resolves `[DWARF_CFA + off]` as the frame's CFA + off).
 */
export { DWARF_CFA } from "../safepoints/frame-descriptors.js";

/*
 * Loading `_GC_MAP_` v1 blobs (stackmap/plimmix-map.ts) into frame descriptors.
 *
 * Roots. The format's offsets are function-wide: SP-relative for the SP the frame has when no
 * outgoing arguments are pushed (static frames), RBP-relative for dynamic ones. At a call site
 * where LLVM pushed stack arguments SP is lower, but the CFA (the caller's SP after the return) is
 * the same at every safepoint of the frame, so each root becomes `Indirect [DWARF_CFA + off]`:
 *   static frame   off = spOffset - frameSizeBytes - 8   (frameSizeBytes = recorded words * 8)
 *   dynamic frame  off = rbpOffset - 16                  (RBP = CFA - 16 after push rbp; mov)
 * as a pair (base = derived) whose location carries the root type (ROOT_TYPE_ATOMIC + type code).
 * The roots of a function are one list for all its safepoints: their locations and pairs are
 * stored once per function and every safepoint of it points at them.
 *
 * Frame size, per safepoint, from the CFI row at RA - 1 (exactly as buildLlvmDescriptors does):
 *   CFA = rsp + N    N - 8 (counts pushed arguments; FLAG_FRAME_SIZE_DIFFERS when != recorded)
 *   CFA = rbp + N    -1 with FLAG_FRAME_POINTER_CFA (or recorded + DW_CFA_GNU_args_size)
 *   no unwind info   the recorded size (FLAG_NO_UNWIND_INFO); for a dynamic frame the format
 *                    itself implies the frame-pointer rule CFA = rbp + 16 with the caller's rbp
 *                    saved at CFA - 16, which is what the descriptor then says
 * FLAG_DYNAMIC_FRAME for a recorded -1.
 */

export interface PlimmixLoadOptions {
  /** Where function `f` of map `m` is (after relocation). Default: the address in the bytes. */
  resolveFunction?: (mapIndex: number, functionIndex: number) => ResolvedFunction;
  /** The CFI row that applies at `address` of `sectionIndex`, if unwind info covers it. */
  unwindRowAt?: (address: number, sectionIndex: number | undefined) => UnwindRow | undefined;
}

/** The CFA offset of a `_GC_MAP_` root (see the layout comment of plimmix-map.ts). */
export function plimmixRootCfaOffset(rootOffsetBytes: number, recordedFrameBytes: number): number {
  return recordedFrameBytes < 0 ? rootOffsetBytes - 16 : rootOffsetBytes - recordedFrameBytes - 8;
}

const MAX_ROOTS_PER_SAFEPOINT = 0xffff;

/** Builds the frame descriptors of every safepoint of every map (addresses before any load bias). */
export function buildPlimmixDescriptors(maps: readonly PlimmixMap[], options: PlimmixLoadOptions = {}): FrameDescriptors {
  const builder = new FrameDescriptorBuilder();
  const saved = new Int16Array(X86_64.calleeSavedDwarf.length); // _GC_MAP_ maps are x86-64 only (requireX86_64)

  maps.forEach((map, m) => {
    for (let f = 0; f < map.numFunctions; f++) {
      const resolved = options.resolveFunction?.(m, f) ?? { address: map.functionAddress(f), name: undefined, sectionIndex: undefined };
      if (!Number.isSafeInteger(resolved.address) || resolved.address < 0) {
        throw new MalformedInputError(
          `address of _GC_MAP_ function #${f}`,
          map.sectionOffset + map.functionAddressFieldOffset(f),
          map.functionAddressLong(f).toString(),
          "an address below 2^53",
        );
      }
      const recorded = map.frameSizeBytes(f);
      const numRoots = map.numRootsOf(f);
      if (numRoots > MAX_ROOTS_PER_SAFEPOINT) {
        throw new UnsupportedInputError(
          `root count of _GC_MAP_ function #${f}`,
          map.sectionOffset + map.functionOffset(f) + 16,
          numRoots,
          `at most ${MAX_ROOTS_PER_SAFEPOINT} roots`,
        );
      }
      const functionIndex = builder.addFunction({ name: resolved.name, address: resolved.address, stackSizeBytes: recorded });

      // The function's roots, once: every safepoint of the function shares them.
      const locStart = builder.nextLocationIndex;
      const pairStart = builder.nextPairIndex;
      for (let r = 0; r < numRoots; r++) {
        const rootType = ROOT_TYPE_ATOMIC + map.rootType(f, r);
        const loc = builder.addLocation(
          encodeLocationWord0(LocationKind.Indirect, rootType, DWARF_CFA, 8),
          plimmixRootCfaOffset(map.rootOffsetBytes(f, r), recorded),
        );
        builder.addPair(loc, loc);
      }

      for (let s = 0; s < map.numSafepointsOf(f); s++) {
        const returnAddress = map.safepointAddress(f, s);
        if (!Number.isSafeInteger(returnAddress) || returnAddress <= resolved.address) {
          throw new MalformedInputError(
            `safepoint #${s} of _GC_MAP_ function #${f}`,
            map.sectionOffset + map.safepointFieldOffset(f, s),
            Number.isNaN(returnAddress) ? map.safepointAddressLong(f, s).toString() : hex(returnAddress),
            `a return address above the function's address ${hex(resolved.address)}`,
          );
        }
        const row = options.unwindRowAt?.(returnAddress - 1, resolved.sectionIndex);
        const frame = frameAtSafepoint(row, recorded, saved);
        builder.addSafepoint({
          returnAddress,
          frameSizeBytes: frame.frameSizeBytes,
          stackSizeBytes: recorded,
          cfaRegister: frame.cfaRegister,
          cfaOffsetBytes: frame.cfaOffsetBytes,
          savedRegOffsets: saved,
          flags: frame.flags,
          functionIndex,
          blobIndex: m,
          recordIndex: map.firstSafepointOf(f) + s,
          locStart,
          deoptCount: 0,
          pairStart,
          pairCount: numRoots,
          allocaCount: 0,
        });
      }
    }
  });
  return builder.finish();
}

/**
 * Registers one live `_GC_MAP_` blob: the bytes a program's `gc_init(ptr)` points at, copied
 * (`plimmixMapLength` says how many). Its addresses are absolute already, so the load bias is 0
 * unless the blob was taken from a file. Without `unwindRowAt` the recorded frame sizes are all
 * there is (see buildPlimmixDescriptors).
 */
export function registerPlimmixBytes(
  registry: SafepointRegistry,
  bytes: Uint8Array,
  options: { name: string; loadBias?: number } & Pick<PlimmixLoadOptions, "unwindRowAt">,
): number {
  checkRegistryArgument(registry);
  requireBytes(bytes, "_GC_MAP_ bytes");
  if (bytes.byteLength === 0) throw new InvalidArgumentError("_GC_MAP_ bytes", "0 bytes", "a _GC_MAP_ v1 blob");
  const map = parsePlimmixBlob(bytes);
  const descriptors = buildPlimmixDescriptors([map], options.unwindRowAt ? { unwindRowAt: options.unwindRowAt } : {});
  const contentKey = createHash("sha256").update("plimmix-v1\0").update(bytes).digest("hex");
  return registry.register({ name: options.name, format: "plimmix-v1", descriptors, loadBias: options.loadBias ?? 0, contentKey });
}

// ---- ELF files -----------------------------------------------------------------------------------

/** One `_GC_MAP_` label of a file. */
export interface PlimmixModule {
  /** `_GC_MAP_<source name>`. */
  symbol: string;
  /** Module::getSourceFileName() of the module that emitted it. */
  sourceName: string;
  sectionIndex: number;
  /** Offset of the label within its section. */
  offsetInSection: number;
}

export interface PlimmixGlobal {
  /** Relocated address: link-time, or the offset in `sectionIndex` for a .o. */
  address: number;
  name: string | undefined;
  sectionIndex: number | undefined;
}

/** The `_GC_MAP_` blobs of one ELF file, decoded, relocated and joined with its unwind info. */
export interface PlimmixObject {
  path: string;
  elf: ElfFile;
  kind: ObjectKind;
  soname: string | undefined;
  /** One per map, in section then offset order. */
  modules: PlimmixModule[];
  /** The maps over the bytes as stored in the file. */
  rawMaps: PlimmixMap[];
  /** The maps over the relocated bytes (what a loaded program's memory holds, at bias 0). */
  maps: PlimmixMap[];
  /** Per map, per function: where it is (section offset in a .o) and its name. */
  functions: ResolvedFunction[][];
  /** Per map: the global roots. */
  globals: PlimmixGlobal[][];
  unwind: EhFrame | undefined;
  descriptors: FrameDescriptors;
  /** sha256 of the relocated maps and the unwind info: the registry's "same map" key. */
  contentKey: string;
}

/**
 * Reads every `_GC_MAP_*` global (STB_GLOBAL or STB_WEAK, defined) of an ELF object, shared
 * library or executable: `.symtab`, else `.dynsym`. Returns undefined when there is none. In a
 * `.o` every address field must carry its R_X86_64_64 relocation; a linked file holds link-time
 * addresses (R_X86_64_RELATIVE fields of `.rela.dyn` applied). Errors carry the path.
 */
export function loadPlimmixFromElf(bytes: Uint8Array, path: string): PlimmixObject | undefined {
  try {
    const elf = ElfFile.parse(bytes);
    architectureOfMachine(elf.machine);
    const kind = elfObjectKind(elf);
    const labels = findDataSymbols(elf, (s) => s.name.startsWith(PLIMMIX_SYMBOL_PREFIX) && s.name.length > PLIMMIX_SYMBOL_PREFIX.length);
    if (labels.length === 0) return undefined;
    requireX86_64(elf, "_GC_MAP_ maps");

    const modules: PlimmixModule[] = [];
    const rawMaps: PlimmixMap[] = [];
    const maps: PlimmixMap[] = [];
    const functions: ResolvedFunction[][] = [];
    const globals: PlimmixGlobal[][] = [];
    const sections = new RelocatedSections(elf);
    for (const label of labels) {
      const { section, relocated, offsetInSection } = sections.locate(label, "_GC_MAP_");
      const raw = PlimmixMap.parse(section.view(), offsetInSection);
      const map = PlimmixMap.parse(new ByteView(relocated.bytes, section.offset), offsetInSection);
      const target = (fieldOffset: number, what: string): RelocationTarget | undefined => {
        const t = relocated.targets.get(offsetInSection + fieldOffset);
        if (kind === "relocatable" && t === undefined) {
          throw new MalformedInputError(what, map.sectionOffset + fieldOffset, "no relocation", `an R_X86_64_64 relocation (.rela${section.name})`);
        }
        return t;
      };
      const fns: ResolvedFunction[] = [];
      for (let f = 0; f < map.numFunctions; f++) {
        const t = target(map.functionAddressFieldOffset(f), `address of _GC_MAP_ function #${f}`);
        const sectionIndex = kind === "relocatable" ? t?.sectionIndex : undefined;
        fns.push({ address: map.functionAddress(f), name: t?.symbolName, sectionIndex });
        for (let s = 0; s < map.numSafepointsOf(f); s++) {
          const st = target(map.safepointFieldOffset(f, s), `safepoint #${s} of _GC_MAP_ function #${f}`);
          if (kind === "relocatable" && st?.sectionIndex !== sectionIndex) {
            throw new MalformedInputError(
              `relocation of safepoint #${s} of _GC_MAP_ function #${f}`,
              map.sectionOffset + map.safepointFieldOffset(f, s),
              `section ${st?.sectionName ?? "?"}`,
              `the function's section ${t?.sectionName ?? "?"}`,
            );
          }
        }
      }
      const gs: PlimmixGlobal[] = [];
      for (let g = 0; g < map.numGlobals; g++) {
        const t = target(map.globalFieldOffset(g), `_GC_MAP_ global root #${g}`);
        gs.push({ address: map.globalAddress(g), name: t?.symbolName, sectionIndex: kind === "relocatable" ? t?.sectionIndex : undefined });
      }
      modules.push({ symbol: label.name, sourceName: label.name.slice(PLIMMIX_SYMBOL_PREFIX.length), sectionIndex: section.index, offsetInSection });
      rawMaps.push(raw);
      maps.push(map);
      functions.push(fns);
      globals.push(gs);
    }
    if (kind !== "relocatable") nameLinkedAddresses(elf, functions, globals);

    const { unwind, unwindRowAt } = loadElfUnwind(elf, kind);
    const descriptors = buildPlimmixDescriptors(maps, { resolveFunction: (m, f) => functions[m]![f]!, unwindRowAt });
    const hash = createHash("sha256").update("plimmix-v1\0");
    for (const map of maps) hash.update(map.view.bytes);
    const ehFrame = elf.section(".eh_frame");
    if (ehFrame?.hasFileBytes) hash.update(ehFrame.bytes());
    return {
      path,
      elf,
      kind,
      soname: elfSoname(elf),
      modules,
      rawMaps,
      maps,
      functions,
      globals,
      unwind,
      descriptors,
      contentKey: hash.digest("hex"),
    };
  } catch (e) {
    if (e instanceof RootwalkError) throw withContext(e, path);
    throw e;
  }
}

// ---- ELF helpers shared with the OCaml loader (same rules as loader/object-file.ts) ----------------

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

/** Relocated data sections, each relocated once, and where a label lies in its section. */
export class RelocatedSections {
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

/** In a linked file, names come from the symbol tables (functions and data objects at the address). */
function nameLinkedAddresses(elf: ElfFile, functions: ResolvedFunction[][], globals: PlimmixGlobal[][]): void {
  const functionNames = new Map<number, string>();
  const objectNames = new Map<number, string>();
  for (const table of [elf.dynamicSymbols(), elf.symbols()]) {
    for (const s of table) {
      if (s.definedSectionIndex === undefined || s.name === "") continue;
      if (s.type === STT_FUNC) functionNames.set(s.value, s.name);
      if (s.type === STT_OBJECT) objectNames.set(s.value, s.name);
    }
  }
  for (const list of functions) for (const fn of list) fn.name ??= functionNames.get(fn.address);
  for (const list of globals) for (const g of list) g.name ??= objectNames.get(g.address);
}
