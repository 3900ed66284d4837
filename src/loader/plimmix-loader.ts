import { ROOT_TYPE_ATOMIC } from "../location/location-word.js";
import { createHash } from "node:crypto";
import { requireBytes } from "../bytes/byte-view.js";
import { STT_FUNC, STT_OBJECT } from "../elf/elf-constants.js";
import { type ElfFile, requireX86_64 } from "../elf/elf-file.js";
import type { RelocationTarget } from "../elf/relocate.js";
import { InvalidArgumentError, MalformedInputError, UnsupportedInputError, hex } from "../errors.js";
import { FrameDescriptorBuilder, type FrameDescriptors } from "../safepoints/frame-descriptors.js";
import { checkRegistryArgument, type SafepointRegistry } from "../safepoints/registry.js";
import { PLIMMIX_SYMBOL_PREFIX, PlimmixMap, parsePlimmixBlob } from "../stackmap/plimmix-map.js";
import type { ResolvedFunction } from "./llvm-map-loader.js";
import type { UnwindRow } from "./unwind-row.js";
import type { ObjectKind } from "./object-kind.js";
import { RootListSafepoints } from "./root-list-safepoints.js";
import {
  type ElfMapFile,
  type ElfMapFormat,
  type ElfMaps,
  type LabelledMap,
  addressRelocation,
  findDataSymbols,
  linkedSymbolNames,
  loadElfMaps,
  mapsAtLabels,
} from "./elf-maps.js";

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
  const safepoints = new RootListSafepoints(builder);

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
      for (let r = 0; r < numRoots; r++)
        safepoints.addCfaRoot(ROOT_TYPE_ATOMIC + map.rootType(f, r), plimmixRootCfaOffset(map.rootOffsetBytes(f, r), recorded));

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
        safepoints.add(returnAddress, row, recorded, functionIndex, m, map.firstSafepointOf(f) + s, locStart, pairStart, numRoots);
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

/** The `_GC_MAP_` maps of one ELF file (its own parts): one per map, in section then offset order. */
export interface PlimmixMaps {
  modules: PlimmixModule[];
  /** The maps over the bytes as stored in the file. */
  rawMaps: PlimmixMap[];
  /** The maps over the relocated bytes (what a loaded program's memory holds, at bias 0). */
  maps: PlimmixMap[];
  /** Per map, per function: where it is (section offset in a .o) and its name. */
  functions: ResolvedFunction[][];
  /** Per map: the global roots. */
  globals: PlimmixGlobal[][];
}

/** The `_GC_MAP_` blobs of one ELF file, decoded, relocated and joined with its unwind info (src/loader/elf-maps.ts). */
export type PlimmixObject = PlimmixMaps & ElfMaps;

/**
 * Reads every `_GC_MAP_*` global (STB_GLOBAL or STB_WEAK, defined) of an ELF object, shared
 * library or executable: `.symtab`, else `.dynsym`. Returns undefined when there is none. In a
 * `.o` every address field must carry its R_X86_64_64 relocation; a linked file holds link-time
 * addresses (R_X86_64_RELATIVE fields of `.rela.dyn` applied). Errors carry the path.
 */
export function loadPlimmixFromElf(bytes: Uint8Array, path: string): PlimmixObject | undefined {
  return loadElfMaps(bytes, path, PLIMMIX_ELF_FORMAT);
}

const PLIMMIX_ELF_FORMAT: ElfMapFormat<PlimmixMaps> = {
  read: readPlimmixMaps,
  build: (parts, unwindRowAt) => buildPlimmixDescriptors(parts.maps, { resolveFunction: (m, f) => parts.functions[m]![f]!, unwindRowAt }),
  keyPrefix: "plimmix-v1\0",
  keyBytes: (parts) => parts.maps.map((map) => map.view.bytes),
};

/** The file's `_GC_MAP_` maps, each address field's relocation checked, functions and globals resolved. */
function readPlimmixMaps({ elf, kind }: ElfMapFile): PlimmixMaps | undefined {
  const labels = findDataSymbols(elf, (s) => s.name.startsWith(PLIMMIX_SYMBOL_PREFIX) && s.name.length > PLIMMIX_SYMBOL_PREFIX.length);
  if (labels.length === 0) return undefined;
  requireX86_64(elf, "_GC_MAP_ maps");
  const found = mapsAtLabels(elf, labels, "_GC_MAP_", (view, offset) => PlimmixMap.parse(view, offset));
  const functions = found.map((at) => resolvePlimmixFunctions(at, kind));
  const globals = found.map(({ map, ...at }) =>
    Array.from({ length: map.numGlobals }, (_, g): PlimmixGlobal => {
      const t = addressRelocation({ map, ...at }, kind, map.globalFieldOffset(g), map.sectionOffset + map.globalFieldOffset(g), `_GC_MAP_ global root #${g}`);
      return { address: map.globalAddress(g), name: t?.symbolName, sectionIndex: kind === "relocatable" ? t?.sectionIndex : undefined };
    }),
  );
  if (kind !== "relocatable") nameLinkedAddresses(elf, functions, globals);
  return {
    modules: found.map(({ label, section, offsetInSection }) => ({
      symbol: label.name,
      sourceName: label.name.slice(PLIMMIX_SYMBOL_PREFIX.length),
      sectionIndex: section.index,
      offsetInSection,
    })),
    rawMaps: found.map((at) => at.raw),
    maps: found.map((at) => at.map),
    functions,
    globals,
  };
}

/** The functions of one map, each function's and safepoint's relocation checked (a safepoint in its function's section). */
function resolvePlimmixFunctions(at: LabelledMap<PlimmixMap>, kind: ObjectKind): ResolvedFunction[] {
  const map = at.map;
  const target = (fieldOffset: number, what: string): RelocationTarget | undefined =>
    addressRelocation(at, kind, fieldOffset, map.sectionOffset + fieldOffset, what);
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
  return fns;
}

/** In a linked file, names come from the symbol tables (functions and data objects at the address). */
function nameLinkedAddresses(elf: ElfFile, functions: ResolvedFunction[][], globals: PlimmixGlobal[][]): void {
  const functionNames = linkedSymbolNames(elf, STT_FUNC);
  const objectNames = linkedSymbolNames(elf, STT_OBJECT);
  for (const list of functions) for (const fn of list) fn.name ??= functionNames.get(fn.address);
  for (const list of globals) for (const g of list) g.name ??= objectNames.get(g.address);
}
