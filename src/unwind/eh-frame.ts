import type { Architecture } from "../arch/architecture.js";
import { X86_64 } from "../arch/x86-64.js";
import { ByteView, requireBytes } from "../bytes/byte-view.js";
import { InvalidArgumentError, MalformedInputError, UnsupportedInputError, hex, requireArgument } from "../errors.js";
import { DwarfCursor } from "./dwarf-cursor.js";
import {
  DW_EH_PE_ABSPTR,
  DW_EH_PE_OMIT,
  type EncodedPointer,
  checkPointerEncoding,
  isIndirect,
  readEncodedPointer,
  readEncodedValue,
} from "./pointer-encoding.js";

/*
 * `.eh_frame` layout (LSB 5.0 §10.6 "Exception Frames"; GCC unwind-dw2-fde.c, LLVM
 * DWARFDebugFrame.cpp). The section is a sequence of records; all offsets below are relative to
 * the record start and every multi-byte field is little-endian.
 *
 *   +0  u32 length           bytes after this field; 0 = terminator (processing ends),
 *                            0xffffffff = 64-bit DWARF (unsupported: no .eh_frame producer
 *                            emits it, and readers disagree on the width of the CIE pointer)
 *   +4  u32 id               0 in a CIE; in an FDE the CIE pointer: the distance from this
 *                            field back to the start of its CIE
 *
 * CIE (id = 0), from +8:
 *   u8      version                    1 or 3 (3 only widens the return address register)
 *   cstring augmentation               "", "z" or "z" + letters; see AUGMENTATION below
 *   uleb    code_alignment_factor      advance_loc deltas are multiplied by it (x86-64: 1)
 *   sleb    data_alignment_factor      offset(N) operands are multiplied by it (x86-64: -8)
 *   u8/uleb return_address_register    u8 in version 1, uleb in version 3 (x86-64: 16, AArch64: 30)
 *   if 'z': uleb augmentation_data_length, then one entry per letter after 'z', in order:
 *           'P' u8 personality encoding + the personality pointer in that encoding
 *           'L' u8 LSDA encoding (used by the FDEs of this CIE)
 *           'R' u8 FDE pointer encoding (pc_begin, pc_range, DW_CFA_set_loc; absptr when absent)
 *           'S' nothing: the frames are signal trampolines
 *           'B' nothing: AArch64 BTI-protected frames
 *           data beyond the entries is skipped using the length
 *   initial_instructions               call-frame instructions up to the end of the record
 *
 * FDE (id != 0), from +8:
 *   pc_begin      CIE 'R' encoding; pcrel is relative to this field's own address
 *   pc_range      same value format, never pcrel-adjusted
 *   if CIE has 'z': uleb augmentation_data_length, then the LSDA pointer ('L' encoding) when the
 *                   CIE has 'L' and that encoding is not DW_EH_PE_omit; the rest is skipped
 *   instructions  up to the end of the record
 *
 * AUGMENTATION: without 'z' nothing tells the size of unknown data, so only "" is accepted
 * (the pre-'z' "eh" form is unsupported). With 'z' we accept the letters P, L, R, S, B, each at
 * most once, which covers what GCC, LLVM and the glibc/libgcc runtime objects emit ("zR",
 * "zPLR", "zPR", "zLR", "zRS", "z", "zPLRB"...). Anything else is an UnsupportedInputError.
 *
 * Offsets in errors and in the returned records are offsets in the section.
 */

const LENGTH_SIZE_BYTES = 4;
const ID_OFFSET = LENGTH_SIZE_BYTES;
const DWARF64_ESCAPE = 0xffffffff;
const CIE_ID = 0;

const SUPPORTED_VERSIONS = "1 or 3";
const SUPPORTED_AUGMENTATIONS = `"" or "z" followed by distinct letters from P, L, R, S, B`;

export interface Cie {
  /** Offset of the CIE's length field in the section. */
  readonly offset: number;
  readonly version: number;
  readonly augmentation: string;
  readonly codeAlignmentFactor: number;
  readonly dataAlignmentFactor: number;
  readonly returnAddressRegister: number;
  /** DW_EH_PE_* of pc_begin/pc_range/set_loc in this CIE's FDEs (absptr without 'R'). */
  readonly fdePointerEncoding: number;
  /** DW_EH_PE_* of the FDEs' LSDA pointer; DW_EH_PE_omit without 'L'. */
  readonly lsdaEncoding: number;
  readonly personality: EncodedPointer | undefined;
  /** The 'S' augmentation: frames of this CIE are signal trampolines. */
  readonly isSignalFrame: boolean;
  /** True when the augmentation starts with 'z' (FDEs then carry augmentation data). */
  readonly hasAugmentationData: boolean;
  /** Whose CFI this is: decides the machine-specific opcodes (cfi.ts: 0x2d). */
  readonly architecture: Architecture;
  /** Initial call-frame instructions, a zero-copy window whose baseOffset is its section offset. */
  readonly initialInstructions: ByteView;
}

export interface Fde {
  /** Offset of the FDE's length field in the section. */
  readonly offset: number;
  readonly cie: Cie;
  /** First address covered (after pcrel application, or as returned by `resolvePcBegin`). */
  readonly pcBegin: number;
  readonly pcRange: number;
  /** The LSDA pointer when the CIE has 'L' and its encoding is not omit (unrelocated in `.o`s). */
  readonly lsda: EncodedPointer | undefined;
  /** Call-frame instructions, a zero-copy window whose baseOffset is its section offset. */
  readonly instructions: ByteView;
  /** Address of section offset 0, for pcrel DW_CFA_set_loc operands. */
  readonly sectionAddress: number;
}

export interface ParseEhFrameOptions {
  /** Address of the section's first byte: sh_addr in a linked file, 0 in a relocatable `.o`. */
  sectionAddress: number;
  /**
   * For relocatable objects: given the section offset of an FDE's pc_begin field and the value
   * decoded from the (unrelocated) bytes, returns the real pc_begin, e.g. after applying
   * `.rela.eh_frame` (R_X86_64_PC32 against a text section: S + A).
   */
  resolvePcBegin?: (fieldOffsetInSection: number, decodedValue: number) => number;
  /** Whose registers and CFI extensions the section uses (the ELF file's e_machine); default x86-64. */
  architecture?: Architecture;
}

/** A parsed `.eh_frame`: CIEs and FDEs in section order and an address index over the FDEs. */
export class EhFrame {
  /** FDEs with a non-empty range, sorted by pcBegin (then by offset). */
  private readonly sorted: Fde[];
  /** maxEnd[i] = max(pcBegin + pcRange) over sorted[0..i], so overlap scans can stop early. */
  private readonly maxEnd: Float64Array;
  private readonly ciesByOffset: Map<number, Cie>;

  constructor(
    readonly sectionAddress: number,
    readonly cies: readonly Cie[],
    readonly fdes: readonly Fde[],
    /** Offset of the zero terminator, or undefined when the section simply ends. */
    readonly terminatorOffset: number | undefined,
  ) {
    this.ciesByOffset = new Map(cies.map((cie) => [cie.offset, cie]));
    this.sorted = fdes.filter((fde) => fde.pcRange > 0).sort((a, b) => a.pcBegin - b.pcBegin || a.offset - b.offset);
    this.maxEnd = new Float64Array(this.sorted.length);
    let maxEnd = -Infinity;
    this.sorted.forEach((fde, i) => {
      maxEnd = Math.max(maxEnd, fde.pcBegin + fde.pcRange);
      this.maxEnd[i] = maxEnd;
    });
  }

  cieAt(offset: number): Cie | undefined {
    return this.ciesByOffset.get(offset);
  }

  /**
   * The FDE whose [pcBegin, pcBegin + pcRange) contains `address`, or undefined. When ranges
   * overlap (relocatable objects with several text sections, or FDEs of discarded sections left
   * at 0 by a linker) the one with the greatest pcBegin wins.
   */
  findFde(address: number): Fde | undefined {
    // Last index with pcBegin <= address.
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.sorted[mid]!.pcBegin <= address) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo - 1; i >= 0 && this.maxEnd[i]! > address; i--) {
      const fde = this.sorted[i]!;
      if (address < fde.pcBegin + fde.pcRange) return fde;
    }
    return undefined;
  }
}

export function parseEhFrame(bytes: Uint8Array, options: ParseEhFrameOptions): EhFrame {
  requireBytes(bytes, ".eh_frame bytes");
  requireArgument(typeof options === "object" && options !== null, "options", options, "{ sectionAddress, ... } (where the section is loaded)");
  const { sectionAddress, resolvePcBegin } = options;
  const architecture = options.architecture ?? X86_64;
  if (!Number.isSafeInteger(sectionAddress) || sectionAddress < 0) {
    throw new InvalidArgumentError("sectionAddress", String(sectionAddress), "a non-negative safe integer");
  }
  const section = new ByteView(bytes);
  const cies: Cie[] = [];
  const ciesByOffset = new Map<number, Cie>();
  const fdes: Fde[] = [];
  let terminatorOffset: number | undefined;

  // Each iteration consumes at least LENGTH_SIZE_BYTES, so the loop ends within bytes.length / 4.
  let offset = 0;
  while (offset < section.lengthBytes) {
    section.need(offset, LENGTH_SIZE_BYTES, "eh_frame record length");
    const length = section.u32(offset);
    if (length === 0) {
      terminatorOffset = offset;
      break;
    }
    if (length === DWARF64_ESCAPE) {
      throw new UnsupportedInputError("eh_frame record length", offset, hex(length), "32-bit DWARF lengths (below 0xfffffff0)");
    }
    if (length >= 0xfffffff0) {
      throw new MalformedInputError("eh_frame record length", offset, hex(length), "a length below 0xfffffff0 (reserved values)");
    }
    // The record window: everything after the length field. Reads past it are truncation errors.
    const record = section.slice(offset + LENGTH_SIZE_BYTES, length, "eh_frame record");
    const cursor = new DwarfCursor(record);
    const id = cursor.u32("eh_frame CIE id / CIE pointer");
    if (id === CIE_ID) {
      const cie = parseCie(offset, cursor, sectionAddress, architecture);
      cies.push(cie);
      ciesByOffset.set(offset, cie);
    } else {
      const idOffset = offset + ID_OFFSET;
      const cie = ciesByOffset.get(idOffset - id);
      if (cie === undefined) {
        throw new MalformedInputError("FDE CIE pointer", idOffset, hex(id), `the distance back to a CIE (CIE at ${hex(idOffset - id)} not found)`);
      }
      fdes.push(parseFde(offset, cursor, cie, sectionAddress, resolvePcBegin));
    }
    offset += LENGTH_SIZE_BYTES + length;
  }
  return new EhFrame(sectionAddress, cies, fdes, terminatorOffset);
}

function parseCie(offset: number, cursor: DwarfCursor, sectionAddress: number, architecture: Architecture): Cie {
  const versionOffset = cursor.absolutePos;
  const version = cursor.u8("CIE version");
  if (version !== 1 && version !== 3) throw new UnsupportedInputError("CIE version", versionOffset, version, SUPPORTED_VERSIONS);

  const augmentationOffset = cursor.absolutePos;
  const augmentation = cursor.view.cString(cursor.pos, "CIE augmentation string");
  cursor.pos += augmentation.length + 1;
  checkAugmentation(augmentation, augmentationOffset);

  const codeAlignmentFactor = cursor.uleb128("CIE code alignment factor");
  const dataAlignmentFactor = cursor.sleb128("CIE data alignment factor");
  const returnAddressRegister = version === 1 ? cursor.u8("CIE return address register") : cursor.uleb128("CIE return address register");

  let fdePointerEncoding = DW_EH_PE_ABSPTR;
  let lsdaEncoding = DW_EH_PE_OMIT;
  let personality: EncodedPointer | undefined;
  let isSignalFrame = false;
  const hasAugmentationData = augmentation.startsWith("z");
  if (hasAugmentationData) {
    const dataLengthOffset = cursor.absolutePos;
    const dataLength = cursor.uleb128("CIE augmentation data length");
    const dataStart = cursor.pos;
    cursor.view.need(dataStart, dataLength, "CIE augmentation data");
    for (const letter of augmentation.slice(1)) {
      const fieldOffset = cursor.absolutePos;
      switch (letter) {
        case "P": {
          const encoding = cursor.u8("CIE personality encoding");
          if (encoding === DW_EH_PE_OMIT) break;
          checkPointerEncoding(encoding, "CIE personality", fieldOffset);
          personality = readEncodedPointer(cursor, encoding, sectionAddress, "CIE personality");
          break;
        }
        case "L":
          lsdaEncoding = cursor.u8("CIE LSDA encoding");
          checkPointerEncoding(lsdaEncoding, "CIE LSDA", fieldOffset);
          break;
        case "R":
          fdePointerEncoding = cursor.u8("CIE FDE pointer encoding");
          checkPointerEncoding(fdePointerEncoding, "CIE FDE", fieldOffset);
          if (fdePointerEncoding === DW_EH_PE_OMIT || isIndirect(fdePointerEncoding)) {
            throw new MalformedInputError(
              "CIE FDE pointer encoding",
              fieldOffset,
              hex(fdePointerEncoding),
              "a direct encoding (pc_begin cannot be omitted or indirect)",
            );
          }
          break;
        default: // 'S', 'B': flags without data
          if (letter === "S") isSignalFrame = true;
          break;
      }
    }
    const consumed = cursor.pos - dataStart;
    if (consumed > dataLength) {
      throw new MalformedInputError(
        "CIE augmentation data length",
        dataLengthOffset,
        dataLength,
        `at least ${consumed} (the bytes the "${augmentation}" entries use)`,
      );
    }
    cursor.pos = dataStart + dataLength;
  }

  return {
    offset,
    version,
    augmentation,
    codeAlignmentFactor,
    dataAlignmentFactor,
    returnAddressRegister,
    fdePointerEncoding,
    lsdaEncoding,
    personality,
    isSignalFrame,
    hasAugmentationData,
    architecture,
    initialInstructions: cursor.view.slice(cursor.pos, cursor.view.lengthBytes - cursor.pos, "CIE initial instructions"),
  };
}

function checkAugmentation(augmentation: string, offset: number): void {
  if (augmentation === "") return;
  const ok =
    augmentation.startsWith("z") && [...augmentation.slice(1)].every((letter, i, letters) => "PLRSB".includes(letter) && letters.indexOf(letter) === i);
  if (!ok) throw new UnsupportedInputError("CIE augmentation", offset, JSON.stringify(augmentation), SUPPORTED_AUGMENTATIONS);
}

function parseFde(offset: number, cursor: DwarfCursor, cie: Cie, sectionAddress: number, resolvePcBegin: ParseEhFrameOptions["resolvePcBegin"]): Fde {
  const pcBeginOffset = cursor.absolutePos;
  const decoded = readEncodedPointer(cursor, cie.fdePointerEncoding, sectionAddress, "FDE pc_begin").address;
  let pcBegin = decoded;
  if (resolvePcBegin !== undefined) {
    pcBegin = resolvePcBegin(pcBeginOffset, decoded);
    if (!Number.isSafeInteger(pcBegin) || pcBegin < 0) {
      throw new InvalidArgumentError(`resolvePcBegin(${hex(pcBeginOffset)}, ${hex(decoded)})`, String(pcBegin), "a non-negative safe integer");
    }
  } else if (pcBegin < 0 || !Number.isSafeInteger(pcBegin)) {
    throw new MalformedInputError("FDE pc_begin", pcBeginOffset, hex(pcBegin), "an address in [0, 2^53)");
  }
  const pcRangeOffset = cursor.absolutePos;
  const pcRange = readEncodedValue(cursor, cie.fdePointerEncoding, "FDE pc_range");
  if (pcRange < 0 || !Number.isSafeInteger(pcBegin + pcRange)) {
    throw new MalformedInputError("FDE pc_range", pcRangeOffset, hex(pcRange), `a length with pc_begin (${hex(pcBegin)}) + length below 2^53`);
  }

  let lsda: EncodedPointer | undefined;
  if (cie.hasAugmentationData) {
    const dataLengthOffset = cursor.absolutePos;
    const dataLength = cursor.uleb128("FDE augmentation data length");
    const dataStart = cursor.pos;
    cursor.view.need(dataStart, dataLength, "FDE augmentation data");
    if (cie.lsdaEncoding !== DW_EH_PE_OMIT && cie.augmentation.includes("L")) {
      lsda = readEncodedPointer(cursor, cie.lsdaEncoding, sectionAddress, "FDE LSDA");
    }
    if (cursor.pos - dataStart > dataLength) {
      throw new MalformedInputError("FDE augmentation data length", dataLengthOffset, dataLength, `at least ${cursor.pos - dataStart} (the LSDA pointer)`);
    }
    cursor.pos = dataStart + dataLength;
  }

  return {
    offset,
    cie,
    pcBegin,
    pcRange,
    lsda,
    instructions: cursor.view.slice(cursor.pos, cursor.view.lengthBytes - cursor.pos, "FDE instructions"),
    sectionAddress,
  };
}

/**
 * Decodes the one FDE whose length field is at `offset` in the section (and its CIE, memoised
 * in `cies` by offset): the lazy path used with `.eh_frame_hdr`, which names FDEs by address so
 * a large library's whole `.eh_frame` is never parsed. Same checks as parseEhFrame.
 */
export function parseFdeAt(bytes: Uint8Array, offset: number, sectionAddress: number, cies: Map<number, Cie>, architecture: Architecture = X86_64): Fde {
  const section = new ByteView(bytes);
  const record = recordAt(section, offset);
  const cursor = new DwarfCursor(record);
  const id = cursor.u32("eh_frame CIE id / CIE pointer");
  if (id === CIE_ID) throw new MalformedInputError("eh_frame_hdr table entry", offset, "a CIE", "an FDE");
  const cieOffset = offset + ID_OFFSET - id;
  let cie = cies.get(cieOffset);
  if (cie === undefined) {
    const cieCursor = new DwarfCursor(recordAt(section, cieOffset));
    if (cieCursor.u32("eh_frame CIE id") !== CIE_ID) {
      throw new MalformedInputError("FDE CIE pointer", offset + ID_OFFSET, hex(id), `the distance back to a CIE (no CIE at ${hex(cieOffset)})`);
    }
    cie = parseCie(cieOffset, cieCursor, sectionAddress, architecture);
    cies.set(cieOffset, cie);
  }
  return parseFde(offset, cursor, cie, sectionAddress, undefined);
}

/** The window after the length field of the record at `offset` (a CIE or an FDE). */
function recordAt(section: ByteView, offset: number): ByteView {
  section.need(offset, LENGTH_SIZE_BYTES, "eh_frame record length");
  const length = section.u32(offset);
  if (length === 0 || length >= 0xfffffff0) {
    throw new MalformedInputError("eh_frame record length", offset, hex(length), "the length of a CIE or FDE (1 to 0xffffffef)");
  }
  return section.slice(offset + LENGTH_SIZE_BYTES, length, "eh_frame record");
}
