import { encodeLocationWord0, LocationKind, ROOT_TYPE_POINTER } from "../location/location-word.js";
import { createHash } from "node:crypto";
import { ByteView } from "../bytes/byte-view.js";
import { elfSoname } from "../elf/dynamic.js";
import { ElfFile, requireX86_64 } from "../elf/elf-file.js";
import { architectureOfMachine } from "../arch/elf-architecture.js";
import { X86_64 } from "../arch/x86-64.js";
import { symbolAt } from "../elf/symbol-at.js";
import { MalformedInputError, RootwalkError, UnsupportedInputError, hex, withContext } from "../errors.js";
import { DWARF_CFA, DWARF_RBP, DWARF_RSP, FrameDescriptorBuilder, type FrameDescriptors } from "../safepoints/frame-descriptors.js";
import { OCAML_SYMBOL_PREFIX, OcamlFrametable, ocamlModuleName } from "../stackmap/ocaml-frametable.js";
import type { EhFrame } from "../unwind/eh-frame.js";
import type { UnwindRow } from "./unwind-row.js";
import { type ObjectKind, elfObjectKind } from "./object-kind.js";
import { RelocatedSections, findDataSymbols, frameAtSafepoint, loadElfUnwind } from "./plimmix-loader.js";

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
  const saved = new Int16Array(X86_64.calleeSavedDwarf.length); // OCaml frame tables are x86-64 only (requireX86_64)
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
        for (let k = 0; k < numLive; k++) {
          const offset = cfaOffsetOf(table, d, k, base, frameSize);
          const loc = builder.addLocation(encodeLocationWord0(LocationKind.Indirect, ROOT_TYPE_POINTER, DWARF_CFA, 8), offset);
          builder.addPair(loc, loc);
        }
        previousKey = key;
      }
      previousFunction = functionIndex;

      const frame = frameAtSafepoint(row, frameSize, saved);
      builder.addSafepoint({
        returnAddress,
        frameSizeBytes: frame.frameSizeBytes,
        stackSizeBytes: frameSize,
        cfaRegister: frame.cfaRegister,
        cfaOffsetBytes: frame.cfaOffsetBytes,
        savedRegOffsets: saved,
        flags: frame.flags,
        functionIndex,
        blobIndex: t,
        recordIndex: d,
        locStart,
        deoptCount: 0,
        pairStart,
        pairCount: numLive,
        allocaCount: 0,
      });
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

/** The OCaml frame tables of one ELF file, decoded, relocated and joined with its unwind info. */
export interface OcamlObject {
  path: string;
  elf: ElfFile;
  kind: ObjectKind;
  soname: string | undefined;
  modules: OcamlModule[];
  /** Tables over the bytes as stored in the file. */
  rawTables: OcamlFrametable[];
  /** Tables over the relocated bytes. */
  tables: OcamlFrametable[];
  /** Per table, per descriptor: the relocated return address. */
  returnAddresses: OcamlReturnAddress[][];
  /** The functions containing the safepoints, in first-seen order (section offsets in a .o). */
  functions: { name: string | undefined; address: number; sectionIndex: number | undefined }[];
  unwind: EhFrame | undefined;
  descriptors: FrameDescriptors;
  contentKey: string;
}

/**
 * Reads every `caml*__frametable` global of an ELF object, shared library or executable. Returns
 * undefined when there is none. In a `.o` every return address must carry its R_X86_64_64
 * relocation (against `.text` + offset); a linked file holds link-time addresses. Errors carry
 * the path.
 */
export function loadOcamlFromElf(bytes: Uint8Array, path: string): OcamlObject | undefined {
  try {
    const elf = ElfFile.parse(bytes);
    architectureOfMachine(elf.machine);
    const kind = elfObjectKind(elf);
    const labels = findDataSymbols(elf, (s) => ocamlModuleName(s.name) !== undefined);
    if (labels.length === 0) return undefined;
    requireX86_64(elf, "OCaml frame tables");
    const symbolValue = (name: string): number | undefined =>
      (
        elf.symbols().find((s) => s.name === name && s.definedSectionIndex !== undefined) ??
        elf.dynamicSymbols().find((s) => s.name === name && s.definedSectionIndex !== undefined)
      )?.value;

    const sections = new RelocatedSections(elf);
    const modules: OcamlModule[] = [];
    const rawTables: OcamlFrametable[] = [];
    const tables: OcamlFrametable[] = [];
    const returnAddresses: OcamlReturnAddress[][] = [];
    for (const label of labels) {
      const { section, relocated, offsetInSection } = sections.locate(label, "frametable");
      const raw = OcamlFrametable.parse(section.view(), offsetInSection);
      const table = OcamlFrametable.parse(new ByteView(relocated.bytes, section.offset), offsetInSection);
      const ras: OcamlReturnAddress[] = [];
      for (let d = 0; d < table.numDescriptors; d++) {
        const fieldOffset = table.returnAddressFieldOffset(d);
        const target = relocated.targets.get(offsetInSection + fieldOffset);
        if (kind === "relocatable" && target === undefined) {
          throw new MalformedInputError(
            `return address of frametable descriptor #${d}`,
            table.sectionOffset + fieldOffset,
            "no relocation",
            `an R_X86_64_64 relocation (.rela${section.name})`,
          );
        }
        ras.push({ address: table.returnAddress(d), sectionIndex: kind === "relocatable" ? target?.sectionIndex : undefined });
      }
      const name = ocamlModuleName(label.name)!;
      const prefix = `${OCAML_SYMBOL_PREFIX}${name}__`;
      modules.push({
        name,
        frametableSymbol: label.name,
        sectionIndex: section.index,
        offsetInSection,
        codeBegin: symbolValue(`${prefix}code_begin`),
        codeEnd: symbolValue(`${prefix}code_end`),
        dataBegin: symbolValue(`${prefix}data_begin`),
        dataEnd: symbolValue(`${prefix}data_end`),
      });
      rawTables.push(raw);
      tables.push(table);
      returnAddresses.push(ras);
    }

    const functions: OcamlObject["functions"] = [];
    const seen = new Set<string>();
    const functionAt = (address: number, sectionIndex: number | undefined): OcamlFunction | undefined => {
      const symbol = symbolAt(elf, kind === "relocatable" ? sectionIndex : undefined, address);
      if (symbol === undefined) return undefined;
      const key = `${sectionIndex ?? ""}:${symbol.value}`;
      if (!seen.has(key)) {
        seen.add(key);
        functions.push({ name: symbol.name, address: symbol.value, sectionIndex: kind === "relocatable" ? sectionIndex : undefined });
      }
      return { name: symbol.name, address: symbol.value };
    };
    const { unwind, unwindRowAt } = loadElfUnwind(elf, kind);
    const descriptors = buildOcamlDescriptors(tables, {
      resolveReturnAddress: (t, d) => returnAddresses[t]![d]!,
      functionAt,
      unwindRowAt,
    });
    const hash = createHash("sha256").update("ocaml\0");
    for (const table of tables) hash.update(table.view.bytes);
    const ehFrame = elf.section(".eh_frame");
    if (ehFrame?.hasFileBytes) hash.update(ehFrame.bytes());
    return {
      path,
      elf,
      kind,
      soname: elfSoname(elf),
      modules,
      rawTables,
      tables,
      returnAddresses,
      functions,
      unwind,
      descriptors,
      contentKey: hash.digest("hex"),
    };
  } catch (e) {
    if (e instanceof RootwalkError) throw withContext(e, path);
    throw e;
  }
}
