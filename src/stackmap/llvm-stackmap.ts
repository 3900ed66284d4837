import Long from "long";
import { ByteView } from "../bytes/byte-view.js";
import { MalformedInputError, TruncatedInputError, hex } from "../errors.js";

/*
 * LLVM StackMap section, version 3, as LLVM 14 emits it (little-endian; offsets from the start of
 * one blob; see ../shared/notes/llvm-stackmaps.md §2 and LLVM's StackMaps.html).
 *
 *   Header (16 bytes)
 *     +0  u8   Version            = 3
 *     +1  u8   Reserved           = 0
 *     +2  u16  Reserved           = 0
 *     +4  u32  NumFunctions  F
 *     +8  u32  NumConstants  C
 *     +12 u32  NumRecords    R
 *   StkSizeRecord[F] (24 bytes each)
 *     +0  u64  FunctionAddress    (0 + R_X86_64_64 relocation in a .o)
 *     +8  u64  StackSize          (UINT64_MAX: dynamic allocas or stack realignment)
 *     +16 u64  RecordCount        (records of this function, in order)
 *   u64 Constants[C]
 *   StkMapRecord[R], each starting 8-aligned
 *     +0  u64  PatchPoint ID
 *     +8  u32  Instruction offset (from the function start; for a call: its return address)
 *     +12 u16  Reserved (record flags) = 0
 *     +14 u16  NumLocations N
 *     +16 Location[N] (12 bytes each)
 *           +0 u8  Kind: 1 Register, 2 Direct, 3 Indirect, 4 Constant, 5 ConstantIndex
 *           +1 u8  Reserved = 0
 *           +2 u16 Size in bytes
 *           +4 u16 DWARF register number
 *           +6 u16 Reserved = 0
 *           +8 i32 Offset (Direct/Indirect), small constant (Constant), index (ConstantIndex)
 *     zero padding to 8
 *     +0  u16  Padding = 0
 *     +2  u16  NumLiveOuts L
 *     +4  LiveOut[L] (4 bytes each): u16 DWARF register, u8 reserved = 0, u8 size in bytes
 *     zero padding to 8
 *
 * Linking concatenates the blobs of several objects back to back in one section; each blob is a
 * multiple of 8 bytes, so the next one starts right after the last record of the previous one.
 *
 * Decoding is by view: `StackMapBlob.parse` validates everything once (every field below is in
 * bounds, every kind known, every index valid, the record counts consistent) and records where
 * each record starts, so the accessors afterwards are O(1) reads with no further checks.
 */

export const STACKMAP_VERSION = 3;

const HEADER_VERSION = 0;
const HEADER_RESERVED8 = HEADER_VERSION + 1;
const HEADER_RESERVED16 = HEADER_RESERVED8 + 1;
const HEADER_NUM_FUNCTIONS = HEADER_RESERVED16 + 2;
const HEADER_NUM_CONSTANTS = HEADER_NUM_FUNCTIONS + 4;
const HEADER_NUM_RECORDS = HEADER_NUM_CONSTANTS + 4;
export const HEADER_SIZE_BYTES = HEADER_NUM_RECORDS + 4;

const FUNCTION_ADDRESS = 0;
const FUNCTION_STACK_SIZE = FUNCTION_ADDRESS + 8;
const FUNCTION_RECORD_COUNT = FUNCTION_STACK_SIZE + 8;
export const FUNCTION_SIZE_BYTES = FUNCTION_RECORD_COUNT + 8;

export const CONSTANT_SIZE_BYTES = 8;

const RECORD_ID = 0;
const RECORD_INSTRUCTION_OFFSET = RECORD_ID + 8;
const RECORD_RESERVED = RECORD_INSTRUCTION_OFFSET + 4;
const RECORD_NUM_LOCATIONS = RECORD_RESERVED + 2;
const RECORD_LOCATIONS = RECORD_NUM_LOCATIONS + 2;

const LOCATION_KIND = 0;
const LOCATION_RESERVED8 = LOCATION_KIND + 1;
const LOCATION_SIZE = LOCATION_RESERVED8 + 1;
const LOCATION_DWARF_REG = LOCATION_SIZE + 2;
const LOCATION_RESERVED16 = LOCATION_DWARF_REG + 2;
const LOCATION_OFFSET_OR_CONSTANT = LOCATION_RESERVED16 + 2;
export const LOCATION_SIZE_BYTES = LOCATION_OFFSET_OR_CONSTANT + 4;

const LIVE_OUTS_PADDING = 0;
const LIVE_OUTS_COUNT = LIVE_OUTS_PADDING + 2;
const LIVE_OUTS_ARRAY = LIVE_OUTS_COUNT + 2;
const LIVE_OUT_DWARF_REG = 0;
const LIVE_OUT_RESERVED = LIVE_OUT_DWARF_REG + 2;
const LIVE_OUT_SIZE = LIVE_OUT_RESERVED + 1;
export const LIVE_OUT_SIZE_BYTES = LIVE_OUT_SIZE + 1;

/** The one place that knows the 8-byte padding rule of the format. */
function padTo8(offset: number): number {
  return (offset + 7) & ~7;
}

export const enum LocationKind {
  Register = 1,
  Direct = 2,
  Indirect = 3,
  Constant = 4,
  ConstantIndex = 5,
}

export const LOCATION_KIND_NAMES: Readonly<Record<number, string>> = {
  1: "Register",
  2: "Direct",
  3: "Indirect",
  4: "Constant",
  5: "ConstantIndex",
};

/** A record's location list, re-pointable (one instance can serve every record of a walk). */
export class LocationView {
  private view!: ByteView;
  private at = 0;

  reset(view: ByteView, offset: number): this {
    this.view = view;
    this.at = offset;
    return this;
  }
  get offset(): number {
    return this.at;
  }
  get kind(): LocationKind {
    return this.view.u8(this.at + LOCATION_KIND);
  }
  get sizeBytes(): number {
    return this.view.u16(this.at + LOCATION_SIZE);
  }
  get dwarfReg(): number {
    return this.view.u16(this.at + LOCATION_DWARF_REG);
  }
  /** Signed offset of a Direct or Indirect location. */
  get offsetBytes(): number {
    return this.view.i32(this.at + LOCATION_OFFSET_OR_CONSTANT);
  }
  /** A Constant location's value, sign-extended as LLVM intends (readobj prints it as u32). */
  get smallConstant(): number {
    return this.view.i32(this.at + LOCATION_OFFSET_OR_CONSTANT);
  }
  /** A ConstantIndex location's index into the blob's constant pool. */
  get constantIndex(): number {
    return this.view.u32(this.at + LOCATION_OFFSET_OR_CONSTANT);
  }
}

export class StackMapBlob {
  /** Byte offset of each record within `view`, and the function each record belongs to. */
  private readonly recordOffsets: Uint32Array;
  private readonly recordFunctions: Uint32Array;
  private readonly functionFirstRecord: Uint32Array;

  private constructor(
    /** The bytes of this blob only (a window of the section; offsets in errors are section offsets). */
    readonly view: ByteView,
    readonly numFunctions: number,
    readonly numConstants: number,
    readonly numRecords: number,
    recordOffsets: Uint32Array,
    recordFunctions: Uint32Array,
    functionFirstRecord: Uint32Array,
  ) {
    this.recordOffsets = recordOffsets;
    this.recordFunctions = recordFunctions;
    this.functionFirstRecord = functionFirstRecord;
  }

  /** Offset of this blob within the section it was read from. */
  get sectionOffset(): number {
    return this.view.baseOffset;
  }
  get sizeBytes(): number {
    return this.view.lengthBytes;
  }
  get version(): number {
    return this.view.u8(HEADER_VERSION);
  }

  /**
   * Validates the blob that starts at `offset` of `section` and returns a view of it. The blob's
   * end is found by walking its records, so `section` may hold more bytes (further blobs) after it.
   */
  static parse(section: ByteView, offset: number): StackMapBlob {
    const at = (rel: number) => section.baseOffset + offset + rel;
    section.need(offset, HEADER_SIZE_BYTES, "stack map header");
    const version = section.u8(offset + HEADER_VERSION);
    if (version !== STACKMAP_VERSION) {
      throw new MalformedInputError("stack map version", at(HEADER_VERSION), version, String(STACKMAP_VERSION));
    }
    const reserved8 = section.u8(offset + HEADER_RESERVED8);
    if (reserved8 !== 0) throw new MalformedInputError("stack map header reserved byte", at(HEADER_RESERVED8), reserved8, "0");
    const reserved16 = section.u16(offset + HEADER_RESERVED16);
    if (reserved16 !== 0) throw new MalformedInputError("stack map header reserved u16", at(HEADER_RESERVED16), reserved16, "0");
    const numFunctions = section.u32(offset + HEADER_NUM_FUNCTIONS);
    const numConstants = section.u32(offset + HEADER_NUM_CONSTANTS);
    const numRecords = section.u32(offset + HEADER_NUM_RECORDS);

    const functionsAt = offset + HEADER_SIZE_BYTES;
    const constantsAt = functionsAt + numFunctions * FUNCTION_SIZE_BYTES;
    const recordsAt = constantsAt + numConstants * CONSTANT_SIZE_BYTES;
    section.need(functionsAt, numFunctions * FUNCTION_SIZE_BYTES, `stack map function table (${numFunctions} entries)`);
    section.need(constantsAt, numConstants * CONSTANT_SIZE_BYTES, `stack map constant pool (${numConstants} entries)`);
    // Every record takes at least 24 bytes: a count beyond what the bytes can hold is caught here,
    // before any array is sized from it.
    const minRecordBytes = RECORD_LOCATIONS + LIVE_OUTS_ARRAY + 4;
    section.need(recordsAt, numRecords * minRecordBytes, `stack map records (${numRecords} records of at least ${minRecordBytes} bytes)`);

    const functionFirstRecord = new Uint32Array(numFunctions + 1);
    const recordFunctions = new Uint32Array(numRecords);
    let recordsClaimed = 0;
    for (let f = 0; f < numFunctions; f++) {
      const countAt = functionsAt + f * FUNCTION_SIZE_BYTES + FUNCTION_RECORD_COUNT;
      const hi = section.u64Hi(countAt);
      const count = section.u64Lo(countAt);
      if (hi !== 0 || recordsClaimed + count > numRecords) {
        throw new MalformedInputError(
          `record count of function #${f}`,
          section.baseOffset + countAt,
          section.u64BigInt(countAt),
          `at most ${numRecords - recordsClaimed} (NumRecords ${numRecords} less the ${recordsClaimed} records of earlier functions)`,
        );
      }
      functionFirstRecord[f] = recordsClaimed;
      recordFunctions.fill(f, recordsClaimed, recordsClaimed + count);
      recordsClaimed += count;
    }
    functionFirstRecord[numFunctions] = recordsClaimed;
    if (recordsClaimed !== numRecords) {
      throw new MalformedInputError(
        "sum of function record counts",
        at(HEADER_NUM_RECORDS),
        recordsClaimed,
        `NumRecords = ${numRecords}`,
      );
    }

    const recordOffsets = new Uint32Array(numRecords);
    let cursor = recordsAt;
    for (let r = 0; r < numRecords; r++) {
      recordOffsets[r] = cursor - offset;
      cursor = validateRecord(section, cursor, r, numConstants);
    }
    const blob = new StackMapBlob(
      section.slice(offset, cursor - offset, "stack map blob"),
      numFunctions,
      numConstants,
      numRecords,
      recordOffsets,
      recordFunctions,
      functionFirstRecord,
    );
    return blob;
  }

  // ---- functions -------------------------------------------------------------------------------

  private functionAt(f: number): number {
    return HEADER_SIZE_BYTES + f * FUNCTION_SIZE_BYTES;
  }
  /** Offset of the FunctionAddress field of function `f` within the blob (where relocations apply). */
  functionAddressFieldOffset(f: number): number {
    return this.functionAt(f) + FUNCTION_ADDRESS;
  }
  functionAddressLong(f: number): Long {
    return this.view.u64Long(this.functionAt(f) + FUNCTION_ADDRESS);
  }
  /** The raw address as stored (before any relocation); NaN above 2^53. */
  functionAddressRaw(f: number): number {
    return this.view.u64NumberOrNaN(this.functionAt(f) + FUNCTION_ADDRESS);
  }
  stackSizeLong(f: number): Long {
    return this.view.u64Long(this.functionAt(f) + FUNCTION_STACK_SIZE);
  }
  /** True when StackSize is UINT64_MAX (dynamic allocas or realignment: the frame has no fixed size). */
  hasDynamicFrame(f: number): boolean {
    return this.view.u64IsMax(this.functionAt(f) + FUNCTION_STACK_SIZE);
  }
  /** StackSize as a number; NaN when it does not fit (UINT64_MAX and other huge values). */
  stackSizeBytes(f: number): number {
    return this.view.u64NumberOrNaN(this.functionAt(f) + FUNCTION_STACK_SIZE);
  }
  recordCountLong(f: number): Long {
    return this.view.u64Long(this.functionAt(f) + FUNCTION_RECORD_COUNT);
  }
  firstRecordOf(f: number): number {
    return this.functionFirstRecord[f]!;
  }
  recordCountOf(f: number): number {
    return this.functionFirstRecord[f + 1]! - this.functionFirstRecord[f]!;
  }
  functionOfRecord(r: number): number {
    return this.recordFunctions[r]!;
  }

  // ---- constants -------------------------------------------------------------------------------

  private constantAt(c: number): number {
    return HEADER_SIZE_BYTES + this.numFunctions * FUNCTION_SIZE_BYTES + c * CONSTANT_SIZE_BYTES;
  }
  constantLong(c: number): Long {
    return this.view.u64Long(this.constantAt(c));
  }
  constantBigInt(c: number): bigint {
    return this.view.u64BigInt(this.constantAt(c));
  }

  // ---- records ---------------------------------------------------------------------------------

  recordOffset(r: number): number {
    return this.recordOffsets[r]!;
  }
  recordIdLong(r: number): Long {
    return this.view.u64Long(this.recordOffsets[r]! + RECORD_ID);
  }
  recordIdBigInt(r: number): bigint {
    return this.view.u64BigInt(this.recordOffsets[r]! + RECORD_ID);
  }
  instructionOffset(r: number): number {
    return this.view.u32(this.recordOffsets[r]! + RECORD_INSTRUCTION_OFFSET);
  }
  numLocations(r: number): number {
    return this.view.u16(this.recordOffsets[r]! + RECORD_NUM_LOCATIONS);
  }
  /** Points `into` at location `i` of record `r`. */
  location(r: number, i: number, into: LocationView = new LocationView()): LocationView {
    return into.reset(this.view, this.recordOffsets[r]! + RECORD_LOCATIONS + i * LOCATION_SIZE_BYTES);
  }
  private liveOutsAt(r: number): number {
    return padTo8(this.recordOffsets[r]! + RECORD_LOCATIONS + this.numLocations(r) * LOCATION_SIZE_BYTES);
  }
  numLiveOuts(r: number): number {
    return this.view.u16(this.liveOutsAt(r) + LIVE_OUTS_COUNT);
  }
  liveOutDwarfReg(r: number, i: number): number {
    return this.view.u16(this.liveOutsAt(r) + LIVE_OUTS_ARRAY + i * LIVE_OUT_SIZE_BYTES + LIVE_OUT_DWARF_REG);
  }
  liveOutSizeBytes(r: number, i: number): number {
    return this.view.u8(this.liveOutsAt(r) + LIVE_OUTS_ARRAY + i * LIVE_OUT_SIZE_BYTES + LIVE_OUT_SIZE);
  }
}

/** Checks one record at `at` (absolute in `section`) and returns the offset just past it. */
function validateRecord(section: ByteView, at: number, index: number, numConstants: number): number {
  const where = (rel: number) => section.baseOffset + at + rel;
  section.need(at, RECORD_LOCATIONS, `stack map record #${index}`);
  const flags = section.u16(at + RECORD_RESERVED);
  if (flags !== 0) throw new MalformedInputError(`record #${index} reserved field`, where(RECORD_RESERVED), flags, "0");
  const numLocations = section.u16(at + RECORD_NUM_LOCATIONS);
  section.need(at + RECORD_LOCATIONS, numLocations * LOCATION_SIZE_BYTES, `locations of record #${index} (${numLocations})`);
  for (let i = 0; i < numLocations; i++) {
    const loc = at + RECORD_LOCATIONS + i * LOCATION_SIZE_BYTES;
    const kind = section.u8(loc + LOCATION_KIND);
    if (kind < LocationKind.Register || kind > LocationKind.ConstantIndex) {
      throw new MalformedInputError(`kind of location #${i + 1} of record #${index}`, section.baseOffset + loc, kind, "1..5 (Register, Direct, Indirect, Constant, ConstantIndex)");
    }
    const r8 = section.u8(loc + LOCATION_RESERVED8);
    const r16 = section.u16(loc + LOCATION_RESERVED16);
    if (r8 !== 0 || r16 !== 0) {
      throw new MalformedInputError(`reserved fields of location #${i + 1} of record #${index}`, section.baseOffset + loc, `${r8}/${r16}`, "0/0");
    }
    if (kind === LocationKind.ConstantIndex) {
      const ci = section.u32(loc + LOCATION_OFFSET_OR_CONSTANT);
      if (ci >= numConstants) {
        throw new MalformedInputError(`constant index of location #${i + 1} of record #${index}`, section.baseOffset + loc + LOCATION_OFFSET_OR_CONSTANT, ci, `below NumConstants = ${numConstants}`);
      }
    }
  }
  const locationsEnd = at + RECORD_LOCATIONS + numLocations * LOCATION_SIZE_BYTES;
  const liveOuts = at + padTo8(RECORD_LOCATIONS + numLocations * LOCATION_SIZE_BYTES);
  section.need(locationsEnd, liveOuts - locationsEnd + LIVE_OUTS_ARRAY, `live-out header of record #${index}`);
  requireZeros(section, locationsEnd, liveOuts, `padding after the locations of record #${index}`);
  const pad = section.u16(liveOuts + LIVE_OUTS_PADDING);
  if (pad !== 0) throw new MalformedInputError(`live-out padding of record #${index}`, section.baseOffset + liveOuts, pad, "0");
  const numLiveOuts = section.u16(liveOuts + LIVE_OUTS_COUNT);
  const liveOutsEnd = liveOuts + LIVE_OUTS_ARRAY + numLiveOuts * LIVE_OUT_SIZE_BYTES;
  const end = at + padTo8(liveOutsEnd - at);
  section.need(liveOuts + LIVE_OUTS_ARRAY, end - liveOuts - LIVE_OUTS_ARRAY, `live-outs of record #${index} (${numLiveOuts})`);
  for (let i = 0; i < numLiveOuts; i++) {
    const lo = liveOuts + LIVE_OUTS_ARRAY + i * LIVE_OUT_SIZE_BYTES;
    const reserved = section.u8(lo + LIVE_OUT_RESERVED);
    if (reserved !== 0) throw new MalformedInputError(`reserved byte of live-out #${i + 1} of record #${index}`, section.baseOffset + lo + LIVE_OUT_RESERVED, reserved, "0");
  }
  requireZeros(section, liveOutsEnd, end, `padding after the live-outs of record #${index}`);
  return end;
}

function requireZeros(section: ByteView, from: number, to: number, what: string): void {
  for (let i = from; i < to; i++) {
    const b = section.u8(i);
    if (b !== 0) throw new MalformedInputError(what, section.baseOffset + i, hex(b), "0x0");
  }
}

/**
 * Every blob of a `.llvm_stackmaps` section, in order. A linked file concatenates one blob per
 * object; after the last record of a blob comes either the end of the section or the next blob.
 * `sectionOffset` is where the section lies in its file, for error messages.
 */
export function parseStackMapSection(bytes: Uint8Array, sectionOffset = 0): StackMapBlob[] {
  const section = new ByteView(bytes, sectionOffset);
  const blobs: StackMapBlob[] = [];
  let offset = 0;
  if (bytes.byteLength === 0) {
    throw new TruncatedInputError("stack map section", sectionOffset, HEADER_SIZE_BYTES, 0);
  }
  while (offset < bytes.byteLength) {
    if (blobs.length > 0) {
      const remaining = bytes.byteLength - offset;
      const version = section.u8(offset);
      if (remaining < HEADER_SIZE_BYTES || version !== STACKMAP_VERSION) {
        throw new MalformedInputError(
          `data after stack map blob #${blobs.length - 1}`,
          sectionOffset + offset,
          `${remaining} bytes starting with ${hex(version)}`,
          "the end of the section or another version 3 blob",
        );
      }
    }
    const blob = StackMapBlob.parse(section, offset);
    blobs.push(blob);
    offset += blob.sizeBytes;
  }
  return blobs;
}
