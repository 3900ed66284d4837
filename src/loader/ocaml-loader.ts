import { type ElfFile, requireX86_64 } from "../elf/elf-file.js";
import { symbolAt } from "../elf/symbol-at.js";
import { MalformedInputError, UnsupportedInputError, hex } from "../errors.js";
import { DWARF_RBP, DWARF_RSP, FrameDescriptorBuilder, type FrameDescriptors } from "../safepoints/frame-descriptors.js";
import { ROOT_TYPE_POINTER } from "../location/location-word.js";
import { OCAML_SYMBOL_PREFIX, OcamlFrametable, ocamlModuleName } from "../stackmap/ocaml-frametable.js";
import type { UnwindRow } from "./unwind-row.js";
import { RootListSafepoints } from "./root-list-safepoints.js";
import { type ElfMapFile, type ElfMapFormat, type ElfMaps, addressRelocation, findDataSymbols, loadElfMaps, mapsAtLabels } from "./elf-maps.js";

/*
 * Loading LLVM's OCaml frame tables (stackmap/ocaml-frametable.ts) into frame descriptors.
 *
 * Which register a descriptor's root offsets are relative to is not in the table: LLVM's
 * GCMachineCodeAnalysis takes them from getFrameIndexReference, which answers RBP-relative
 * (negative) in a function with a frame pointer and SP-relative (0 <= off < FrameSize) in one
 * without. The loader decides per safepoint:
 *   - from the CFI row at RA - 1: CFA = rbp + N means the function has a frame pointer (this is
 *     the only CFA rule LLVM emits inside a frame-pointer function's body), CFA = rsp + N that it
 *     has not;
 *   - without unwind info it cannot know, and infers it from the offsets: SP-relative if every
 *     offset read unsigned is a slot inside the frame, RBP-relative if every offset read signed is
 *     one; an offset valid under neither reading is malformed, one valid under both (frames above
 *     32 KiB) is refused as ambiguous (UnsupportedInputError): give the unwind info.
 * Roots become `Indirect [DWARF_CFA + off]`, ROOT_TYPE_POINTER, as pairs with base = derived:
 *   SP-relative    off = spOffset - FrameSize - 8   (FrameSize excludes the return address)
 *   RBP-relative   off = rbpOffset - 16             (RBP = CFA - 16 after push rbp; mov rsp, rbp)
 * Consecutive descriptors with the same roots (the safepoints of one function) share their
 * locations and pairs. Frame size and CFA rule: frameAtSafepoint (as for LLVM stack maps).
 */

export interface OcamlReturnAddress {
  /** Relocated: link-time address, or the offset in `sectionIndex` for a .o. */
  address: number;
  sectionIndex: number | undefined;
}

export interface OcamlFunction {
  name: string | undefined;
  /** Start of the function (same address space as the return addresses). */
  address: number;
}

export interface OcamlLoadOptions {
  /** Where descriptor `d` of table `t` returns to, after relocation. Default: the stored address. */
  resolveReturnAddress?: (tableIndex: number, descriptorIndex: number) => OcamlReturnAddress;
  /**
   * The function containing `address` (a return address - 1), for names. Without it, each run of
   * descriptors with the same frame size and roots counts as one unnamed function whose address
   * is its lowest return address (the table does not record where functions start).
   */
  functionAt?: (address: number, sectionIndex: number | undefined) => OcamlFunction | undefined;
  /** The CFI row that applies at `address` of `sectionIndex`, if unwind info covers it. */
  unwindRowAt?: (address: number, sectionIndex: number | undefined) => UnwindRow | undefined;
}

type RootBase = "sp" | "rbp";

/** Builds the frame descriptors of every descriptor of every table (addresses before any load bias). */
export function buildOcamlDescriptors(tables: OcamlFrametable | readonly OcamlFrametable[], options: OcamlLoadOptions = {}): FrameDescriptors {
  const list: readonly OcamlFrametable[] = tables instanceof OcamlFrametable ? [tables] : tables;
  const builder = new FrameDescriptorBuilder();
  const safepoints = new RootListSafepoints(builder);
  const functionIndices = new Map<string, number>();

  list.forEach((table, t) => {
    let previousKey = "";
    let previousFunction = -1;
    let locStart = 0;
    let pairStart = 0;
    for (let d = 0; d < table.numDescriptors; d++) {
      const { address: returnAddress, sectionIndex } = options.resolveReturnAddress?.(t, d) ?? { address: table.returnAddress(d), sectionIndex: undefined };
      if (!Number.isSafeInteger(returnAddress) || returnAddress <= 0) {
        throw new MalformedInputError(
          `return address of frametable descriptor #${d}`,
          table.sectionOffset + table.returnAddressFieldOffset(d),
          Number.isNaN(returnAddress) ? table.returnAddressLong(d).toString() : hex(returnAddress),
          "a non-zero address below 2^53",
        );
      }
      const frameSize = table.frameSizeBytes(d);
      const numLive = table.numLive(d);
      const row = options.unwindRowAt?.(returnAddress - 1, sectionIndex);
      const base = rootBase(table, d, row);
      const key = `${frameSize}/${base}/${liveKey(table, d)}`;

      // The function: named by the caller's symbols, or one per run of identical descriptors.
      let functionIndex: number;
      const fn = options.functionAt?.(returnAddress - 1, sectionIndex);
      if (fn !== undefined) {
        const fnKey = `${sectionIndex ?? ""}:${fn.address}`;
        functionIndex = functionIndices.get(fnKey) ?? builder.addFunction({ name: fn.name, address: fn.address, stackSizeBytes: frameSize });
        functionIndices.set(fnKey, functionIndex);
      } else if (key === previousKey && previousFunction >= 0) {
        functionIndex = previousFunction;
      } else {
        functionIndex = builder.addFunction({ name: undefined, address: returnAddress, stackSizeBytes: frameSize });
      }

      if (key !== previousKey) {
        locStart = builder.nextLocationIndex;
        pairStart = builder.nextPairIndex;
        for (let k = 0; k < numLive; k++) safepoints.addCfaRoot(ROOT_TYPE_POINTER, cfaOffsetOf(table, d, k, base, frameSize));
        previousKey = key;
      }
      previousFunction = functionIndex;

      safepoints.add(returnAddress, row, frameSize, functionIndex, t, d, locStart, pairStart, numLive);
    }
  });
  return builder.finish();
}

function liveKey(table: OcamlFrametable, d: number): string {
  let key = "";
  for (let k = 0; k < table.numLive(d); k++) key += `${table.liveOffsetU16(d, k)},`;
  return key;
}

/** Whether `off` (relative to `base`) names an 8-aligned slot inside a frame of `frameSize` bytes. */
function slotInFrame(off: number, base: RootBase, frameSize: number): boolean {
  if (off % 8 !== 0) return false;
  // SP-relative slots: [0, frameSize - 8]; RBP-relative: [8 - frameSize, -8] (frameSize counts the saved RBP).
  return base === "sp" ? off >= 0 && off + 8 <= frameSize : off <= -8 && off >= 8 - frameSize;
}

function rootBase(table: OcamlFrametable, d: number, row: UnwindRow | undefined): RootBase {
  if (row !== undefined) {
    if (row.cfaRegister === DWARF_RBP) return "rbp";
    if (row.cfaRegister === DWARF_RSP) return "sp";
    throw new UnsupportedInputError(
      `CFA rule at the return address of frametable descriptor #${d}`,
      table.sectionOffset + table.returnAddressFieldOffset(d),
      `register ${row.cfaRegister}`,
      "CFA = rsp + N or rbp + N",
    );
  }
  const frameSize = table.frameSizeBytes(d);
  let sp = true;
  let rbp = true;
  for (let k = 0; k < table.numLive(d); k++) {
    sp &&= slotInFrame(table.liveOffsetU16(d, k), "sp", frameSize);
    rbp &&= slotInFrame(table.liveOffsetI16(d, k), "rbp", frameSize);
  }
  if (sp && rbp && table.numLive(d) > 0) {
    throw new UnsupportedInputError(
      `root offsets of frametable descriptor #${d} without unwind info`,
      table.sectionOffset + table.liveOffsetFieldOffset(d, 0),
      "offsets valid both SP- and RBP-relative",
      "a file with .eh_frame (the CFA rule tells whether the function has a frame pointer)",
    );
  }
  return rbp && !sp ? "rbp" : "sp";
}

function cfaOffsetOf(table: OcamlFrametable, d: number, k: number, base: RootBase, frameSize: number): number {
  const off = base === "sp" ? table.liveOffsetU16(d, k) : table.liveOffsetI16(d, k);
  if (!slotInFrame(off, base, frameSize)) {
    throw new MalformedInputError(
      `live offset #${k} of frametable descriptor #${d} (${base === "sp" ? "SP" : "RBP"}-relative)`,
      table.sectionOffset + table.liveOffsetFieldOffset(d, k),
      off,
      frameSize < 8
        ? `no root at all: the frame is ${frameSize} bytes`
        : base === "sp"
          ? `a multiple of 8 in [0, ${frameSize - 8}] (a slot inside the ${frameSize}-byte frame)`
          : `a multiple of 8 in [${8 - frameSize}, -8] (a slot below the saved RBP, inside the ${frameSize}-byte frame)`,
    );
  }
  return base === "sp" ? off - frameSize - 8 : off - 16;
}

// ---- ELF files -----------------------------------------------------------------------------------

/** One `caml<M>__frametable` of a file and its module's other labels (symbol values). */
export interface OcamlModule {
  /** `<M>`: the module identifier up to its first '.', first letter upper-cased. */
  name: string;
  frametableSymbol: string;
  sectionIndex: number;
  /** Offset of the frametable label within its section. */
  offsetInSection: number;
  /** Values of caml<M>__code_begin/_end, __data_begin/_end when present (section offsets in a .o). */
  codeBegin: number | undefined;
  codeEnd: number | undefined;
  dataBegin: number | undefined;
  dataEnd: number | undefined;
}

/** The OCaml frame tables of one ELF file (its own parts). */
export interface OcamlTables {
  modules: OcamlModule[];
  /** Tables over the bytes as stored in the file. */
  rawTables: OcamlFrametable[];
  /** Tables over the relocated bytes. */
  tables: OcamlFrametable[];
  /** Per table, per descriptor: the relocated return address. */
  returnAddresses: OcamlReturnAddress[][];
  /** The functions containing the safepoints, in first-seen order (section offsets in a .o); filled as the descriptors are built. */
  functions: { name: string | undefined; address: number; sectionIndex: number | undefined }[];
}

/** The OCaml frame tables of one ELF file, decoded, relocated and joined with its unwind info (src/loader/elf-maps.ts). */
export type OcamlObject = OcamlTables & ElfMaps;

/**
 * Reads every `caml*__frametable` global of an ELF object, shared library or executable. Returns
 * undefined when there is none. In a `.o` every return address must carry its R_X86_64_64
 * relocation (against `.text` + offset); a linked file holds link-time addresses. Errors carry
 * the path.
 */
export function loadOcamlFromElf(bytes: Uint8Array, path: string): OcamlObject | undefined {
  return loadElfMaps(bytes, path, OCAML_ELF_FORMAT);
}

const OCAML_ELF_FORMAT: ElfMapFormat<OcamlTables> = {
  read: readOcamlTables,
  build: (parts, unwindRowAt, file) =>
    buildOcamlDescriptors(parts.tables, {
      resolveReturnAddress: (t, d) => parts.returnAddresses[t]![d]!,
      functionAt: functionsSeen(file, parts.functions),
      unwindRowAt,
    }),
  keyPrefix: "ocaml\0",
  keyBytes: (parts) => parts.tables.map((table) => table.view.bytes),
};

/** The file's frame tables, each return address's relocation checked, and their modules' labels. */
function readOcamlTables({ elf, kind }: ElfMapFile): OcamlTables | undefined {
  const labels = findDataSymbols(elf, (s) => ocamlModuleName(s.name) !== undefined);
  if (labels.length === 0) return undefined;
  requireX86_64(elf, "OCaml frame tables");
  const found = mapsAtLabels(elf, labels, "frametable", (view, offset) => OcamlFrametable.parse(view, offset));
  const returnAddresses = found.map((at) =>
    Array.from({ length: at.map.numDescriptors }, (_, d): OcamlReturnAddress => {
      const fieldOffset = at.map.returnAddressFieldOffset(d);
      const target = addressRelocation(at, kind, fieldOffset, at.map.sectionOffset + fieldOffset, `return address of frametable descriptor #${d}`);
      return { address: at.map.returnAddress(d), sectionIndex: kind === "relocatable" ? target?.sectionIndex : undefined };
    }),
  );
  return {
    modules: found.map(({ label, section, offsetInSection }) => ocamlModule(elf, label.name, section.index, offsetInSection)),
    rawTables: found.map((at) => at.raw),
    tables: found.map((at) => at.map),
    returnAddresses,
    functions: [],
  };
}

/** The module of the frame table labelled `symbol`, with its other labels' values. */
function ocamlModule(elf: ElfFile, symbol: string, sectionIndex: number, offsetInSection: number): OcamlModule {
  const symbolValue = (name: string): number | undefined =>
    (
      elf.symbols().find((s) => s.name === name && s.definedSectionIndex !== undefined) ??
      elf.dynamicSymbols().find((s) => s.name === name && s.definedSectionIndex !== undefined)
    )?.value;
  const name = ocamlModuleName(symbol)!;
  const prefix = `${OCAML_SYMBOL_PREFIX}${name}__`;
  return {
    name,
    frametableSymbol: symbol,
    sectionIndex,
    offsetInSection,
    codeBegin: symbolValue(`${prefix}code_begin`),
    codeEnd: symbolValue(`${prefix}code_end`),
    dataBegin: symbolValue(`${prefix}data_begin`),
    dataEnd: symbolValue(`${prefix}data_end`),
  };
}

/** `functionAt` for buildOcamlDescriptors from the file's symbols, noting each function in `seen` the first time. */
function functionsSeen(
  { elf, kind }: ElfMapFile,
  seen: OcamlTables["functions"],
): (address: number, sectionIndex: number | undefined) => OcamlFunction | undefined {
  const keys = new Set<string>();
  return (address, sectionIndex) => {
    const symbol = symbolAt(elf, kind === "relocatable" ? sectionIndex : undefined, address);
    if (symbol === undefined) return undefined;
    const key = `${sectionIndex ?? ""}:${symbol.value}`;
    if (!keys.has(key)) {
      keys.add(key);
      seen.push({ name: symbol.name, address: symbol.value, sectionIndex: kind === "relocatable" ? sectionIndex : undefined });
    }
    return { name: symbol.name, address: symbol.value };
  };
}
