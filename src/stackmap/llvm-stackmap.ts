import Long from "long";
import { ByteView } from "../bytes/byte-view.js";
import { littleEndianWords } from "../bytes/little-endian-words.js";
import { uninitializedArray } from "../bytes/uninitialized-array.js";
import { InvalidArgumentError, MalformedInputError, TruncatedInputError, hex, requireArgument } from "../errors.js";
import { LocationKind, ROOT_TYPE_NONE, encodeLocationWord0 } from "../location/location-word.js";

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
 * each record starts and which function it belongs to (the blob's StackMapBlobIndex, as LLVM's
 * StackMapParser keeps it), so the accessors afterwards are O(1) reads with no further checks.
 * `indexStackMapSection` finds the same index from the counts alone, and
 * `StackMapBlob.parseRecords` then validates and decodes a range of records [first, end) of a
 * blob without touching the others (the deferred path: src/loader/deferred-llvm-descriptors.ts).
 *
 * The same single pass decodes every location into two Int32 words in the FrameDescriptors
 * encoding (src/safepoints/frame-descriptors.ts; root type none), all records of the blob back to
 * back (`locationWords`, record r's from word 2 * firstLocation(r)), so the loader copies them as
 * one block and never reads the location bytes again. A location reads as three u32 words:
 *
 *     +0  u32  kind | reserved8 << 8 | size << 16
 *     +4  u32  dwarfReg | reserved16 << 16
 *     +8  i32  offset, small constant or constant index
 *
 * A DWARF register above 255 does not fit word 0: the blob keeps the first record that has one
 * (`wideRegisterRecord`), and the loader refuses that record (the bytes are valid stack maps, a
 * register rootwalk does not know is unsupported, not malformed).
 */

import {
  CONSTANT_SIZE_BYTES,
  FUNCTION_ADDRESS,
  FUNCTION_RECORD_COUNT,
  FUNCTION_SIZE_BYTES,
  FUNCTION_STACK_SIZE,
  HEADER_NUM_CONSTANTS,
  HEADER_NUM_FUNCTIONS,
  HEADER_NUM_RECORDS,
  HEADER_RESERVED16,
  HEADER_RESERVED8,
  HEADER_SIZE_BYTES,
  HEADER_VERSION,
  LIVE_OUTS_ARRAY,
  LIVE_OUTS_COUNT,
  LIVE_OUTS_PADDING,
  LIVE_OUT_DWARF_REG,
  LIVE_OUT_RESERVED,
  LIVE_OUT_SIZE,
  LIVE_OUT_SIZE_BYTES,
  LOCATION_DWARF_REG,
  LOCATION_KIND,
  LOCATION_OFFSET_OR_CONSTANT,
  LOCATION_SIZE,
  LOCATION_SIZE_BYTES,
  MIN_RECORD_BYTES,
  RECORD_ID,
  RECORD_INSTRUCTION_OFFSET,
  RECORD_LOCATIONS,
  RECORD_NUM_LOCATIONS,
  RECORD_RESERVED,
  STACKMAP_VERSION,
} from "./stackmap-v3-layout.js";

// The format's offsets have one home, stackmap-v3-layout.ts (the scan kernel's parse reads them too).
export { CONSTANT_SIZE_BYTES, FUNCTION_SIZE_BYTES, HEADER_SIZE_BYTES, LIVE_OUT_SIZE_BYTES, LOCATION_SIZE_BYTES, STACKMAP_VERSION };

/** The one place that knows the 8-byte padding rule of the format. */
function padTo8(offset: number): number {
  return (offset + 7) & ~7;
}

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

/**
 * Where one blob's functions and records lie, found once per blob (by `StackMapBlob.parse` as it
 * validates, or by `indexStackMapSection` from the counts alone): record r starts at byte
 * recordOffsets[r] of the blob and belongs to function recordFunctions[r]; function f's records
 * are [functionFirstRecord[f], functionFirstRecord[f + 1]).
 */
export interface StackMapBlobIndex {
  /** Where the blob starts in its section, and its length. */
  readonly offset: number;
  readonly sizeBytes: number;
  readonly numFunctions: number;
  readonly numConstants: number;
  readonly numRecords: number;
  readonly recordOffsets: Uint32Array;
  readonly recordFunctions: Uint32Array;
  /** numFunctions + 1 entries. */
  readonly functionFirstRecord: Uint32Array;
}

export class StackMapBlob {
  readonly numFunctions: number;
  readonly numConstants: number;
  readonly numRecords: number;
  /** Byte offset of each record within `view`, and the function each record belongs to. */
  private readonly recordOffsets: Uint32Array;
  private readonly recordFunctions: Uint32Array;
  private readonly functionFirstRecord: Uint32Array;

  private constructor(
    /** The bytes of this blob only (a window of the section; offsets in errors are section offsets). */
    readonly view: ByteView,
    index: StackMapBlobIndex,
    /** The records whose locations were decoded: [firstDecodedRecord, endDecodedRecord) (all of them after `parse`). */
    readonly firstDecodedRecord: number,
    readonly endDecodedRecord: number,
    /** Index of decoded record r's first location in `locationWords`, at r - firstDecodedRecord (one entry more). */
    private readonly recordFirstLocation: Uint32Array,
    /** Every location of every decoded record, in order: two words each (see the header comment). */
    readonly locationWords: Int32Array,
    /** The first decoded record with a location whose DWARF register is above 255, or -1. */
    readonly wideRegisterRecord: number,
    /** That record's first such register (0 when there is none). */
    readonly wideRegister: number,
  ) {
    this.numFunctions = index.numFunctions;
    this.numConstants = index.numConstants;
    this.numRecords = index.numRecords;
    this.recordOffsets = index.recordOffsets;
    this.recordFunctions = index.recordFunctions;
    this.functionFirstRecord = index.functionFirstRecord;
  }

  /** Locations of the decoded records. */
  get totalLocations(): number {
    return this.recordFirstLocation[this.endDecodedRecord - this.firstDecodedRecord]!;
  }

  /**
   * The functions that own a decoded record, [firstDecodedFunction, endDecodedFunction): every
   * function (those without records too) when every record was decoded.
   */
  get firstDecodedFunction(): number {
    return this.firstDecodedRecord === 0 || this.firstDecodedRecord === this.endDecodedRecord ? 0 : this.recordFunctions[this.firstDecodedRecord]!;
  }
  get endDecodedFunction(): number {
    if (this.endDecodedRecord === this.numRecords && this.firstDecodedRecord === 0) return this.numFunctions;
    return this.firstDecodedRecord === this.endDecodedRecord ? 0 : this.recordFunctions[this.endDecodedRecord - 1]! + 1;
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
  static parse(section: ByteView, offset: number, sectionWords: Uint32Array = littleEndianWords(section.bytes)): StackMapBlob {
    // Record decoding reads whole words, counted from the section's start (see RecordDecoder).
    if ((offset & 3) !== 0 && section.has(offset, 0)) return StackMapBlob.parse(section.slice(offset, section.lengthBytes - offset), 0);
    checkHeader(section, offset);
    const { numFunctions, numConstants, numRecords, recordsAt, functionFirstRecord, recordFunctions } = blobHead(section, offset);
    const recordOffsets = uninitializedArray(Uint32Array, numRecords);
    const recordFirstLocation = uninitializedArray(Uint32Array, numRecords + 1);
    const decoder = new RecordDecoder(section, sectionWords, numConstants, initialLocationCapacity(section, recordsAt, numRecords));
    const cursor = decoder.decodeRecords(recordsAt, 0, numRecords, offset, recordOffsets, recordFirstLocation);
    recordFirstLocation[numRecords] = decoder.locationCount;
    const sizeBytes = cursor - offset;
    const index = { offset, sizeBytes, numFunctions, numConstants, numRecords, recordOffsets, recordFunctions, functionFirstRecord };
    return StackMapBlob.decoded(decoder, section.slice(offset, sizeBytes, "stack map blob"), index, 0, numRecords, recordFirstLocation);
  }

  /**
   * Validates and decodes records [first, end) of the blob `index` describes (from
   * `indexStackMapSection` over the same `section`, whose blobs start 4-aligned), as `parse`
   * decodes them, and returns a view of the blob with those records decoded: the other records'
   * locations are neither read nor checked, and their location accessors must not be used.
   */
  static parseRecords(
    section: ByteView,
    index: StackMapBlobIndex,
    first: number,
    end: number,
    sectionWords: Uint32Array = littleEndianWords(section.bytes),
  ): StackMapBlob {
    if (!(Number.isInteger(first) && Number.isInteger(end) && 0 <= first && first <= end && end <= index.numRecords)) {
      throw new InvalidArgumentError("record range", `[${first}, ${end})`, `a range of the blob's ${index.numRecords} records`);
    }
    if ((index.offset & 3) !== 0) throw new InvalidArgumentError("blob offset", String(index.offset), "a multiple of 4 (a blob of an indexed section)");
    checkHeader(section, index.offset);
    const startAt = first < index.numRecords ? index.recordOffsets[first]! : index.sizeBytes;
    const endAt = end < index.numRecords ? index.recordOffsets[end]! : index.sizeBytes;
    const recordFirstLocation = uninitializedArray(Uint32Array, end - first + 1);
    const decoder = new RecordDecoder(section, sectionWords, index.numConstants, Math.floor((endAt - startAt) / LOCATION_SIZE_BYTES));
    // The decoder notes each record's offset as it goes: the index's, the same values.
    decoder.decodeRecords(index.offset + startAt, first, end, index.offset, index.recordOffsets, recordFirstLocation);
    recordFirstLocation[end - first] = decoder.locationCount;
    return StackMapBlob.decoded(decoder, section.slice(index.offset, index.sizeBytes, "stack map blob"), index, first, end, recordFirstLocation);
  }

  /** The blob over `view` with records [first, end) decoded by `decoder`. */
  private static decoded(
    decoder: RecordDecoder,
    view: ByteView,
    index: StackMapBlobIndex,
    first: number,
    end: number,
    recordFirstLocation: Uint32Array,
  ): StackMapBlob {
    return new StackMapBlob(view, index, first, end, recordFirstLocation, decoder.finishLocationWords(), decoder.wideRegisterRecord, decoder.wideRegister);
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
  /** Low and high u32 halves of record r's ID. */
  recordIdLo(r: number): number {
    return this.view.u64Lo(this.recordOffsets[r]! + RECORD_ID);
  }
  recordIdHi(r: number): number {
    return this.view.u64Hi(this.recordOffsets[r]! + RECORD_ID);
  }
  recordIdBigInt(r: number): bigint {
    return this.view.u64BigInt(this.recordOffsets[r]! + RECORD_ID);
  }
  instructionOffset(r: number): number {
    return this.view.u32(this.recordOffsets[r]! + RECORD_INSTRUCTION_OFFSET);
  }
  /** Locations of decoded record r. */
  numLocations(r: number): number {
    const k = r - this.firstDecodedRecord;
    return this.recordFirstLocation[k + 1]! - this.recordFirstLocation[k]!;
  }
  /** Index in `locationWords` (in locations: two words each) of decoded record r's first location. */
  firstLocation(r: number): number {
    return this.recordFirstLocation[r - this.firstDecodedRecord]!;
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

/** Checks the version and reserved fields of the header of the blob at `offset`. */
function checkHeader(section: ByteView, offset: number): void {
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
}

/*
 * The loops over functions and records each end their function: V8 compiles a long first loop on
 * stack (OSR) and caches that code for later calls; code after the loop that had not run yet
 * would be compiled without type feedback and deoptimize on every later call.
 */

/**
 * The counts of the blob at `offset` (its header read, not checked: checkHeader), where its
 * records start and which function owns each (functionFirstRecord has numFunctions + 1 entries),
 * after checking that the function table, constant pool and the smallest records fit the bytes
 * and that the functions' RecordCounts add up to NumRecords.
 */
function blobHead(section: ByteView, offset: number) {
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
  const minRecordBytes = MIN_RECORD_BYTES;
  section.need(recordsAt, numRecords * minRecordBytes, `stack map records (${numRecords} records of at least ${minRecordBytes} bytes)`);
  // Every element of these is written below (uninitialized-array.ts).
  const functionFirstRecord = uninitializedArray(Uint32Array, numFunctions + 1);
  const recordFunctions = uninitializedArray(Uint32Array, numRecords);
  const recordsClaimed = claimRecords(section, functionsAt, numFunctions, numRecords, functionFirstRecord, recordFunctions);
  functionFirstRecord[numFunctions] = recordsClaimed;
  if (recordsClaimed !== numRecords) {
    throw new MalformedInputError(
      "sum of function record counts",
      section.baseOffset + offset + HEADER_NUM_RECORDS,
      recordsClaimed,
      `NumRecords = ${numRecords}`,
    );
  }
  return { numFunctions, numConstants, numRecords, recordsAt, functionFirstRecord, recordFunctions };
}

/**
 * Checks each function's RecordCount against what is left of NumRecords and notes the first
 * record of each function and the function of each record; returns the records claimed.
 */
function claimRecords(
  section: ByteView,
  functionsAt: number,
  numFunctions: number,
  numRecords: number,
  functionFirstRecord: Uint32Array,
  recordFunctions: Uint32Array,
): number {
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
    for (let r = recordsClaimed; r < recordsClaimed + count; r++) recordFunctions[r] = f;
    recordsClaimed += count;
  }
  return recordsClaimed;
}

/**
 * Locations to reserve for a blob whose records start at `recordsAt`: every record takes at
 * least 24 bytes besides its locations, so the rest of the section bounds the count; a blob of a
 * linked section is one of many, so the guess is also held to 12 per record (more grows it).
 */
function initialLocationCapacity(section: ByteView, recordsAt: number, numRecords: number): number {
  const minRecordBytes = MIN_RECORD_BYTES;
  const bound = Math.floor((section.lengthBytes - recordsAt - numRecords * minRecordBytes) / LOCATION_SIZE_BYTES);
  return Math.max(0, Math.min(bound, 12 * numRecords));
}

/**
 * Validates the records of one blob, in order, and decodes their locations into location words.
 * One instance per blob; no object is made per record or per location.
 *
 * Reads the section as little-endian u32 words (`sectionWords`, word i = bytes [4i, 4i + 4)):
 * every record starts 8-aligned from the section's start (headers, function entries and
 * constants are multiples of 8 bytes, so is every record), so every field below is a whole
 * word or a fixed part of one, and every padding is zero or one word:
 *
 *   record +12   reserved u16 | NumLocations << 16
 *   location     +0 kind | reserved8 << 8 | size << 16, +4 dwarfReg | reserved16 << 16, +8 value
 *   live-outs +0 padding u16 | NumLiveOuts << 16
 *   live-out     dwarfReg u16 | reserved u8 << 16 | size u8 << 24
 *
 * The checks and their messages are those of the format (each `need` spells its message only
 * when it fails).
 */
class RecordDecoder {
  private words: Int32Array;
  locationCount = 0;
  wideRegisterRecord = -1;
  wideRegister = 0;

  constructor(
    private readonly section: ByteView,
    private readonly sectionWords: Uint32Array,
    private readonly numConstants: number,
    capacityLocations: number,
  ) {
    // Written up to 2 * locationCount; finishLocationWords hands out only that.
    this.words = uninitializedArray(Int32Array, 2 * capacityLocations);
  }

  /**
   * Decodes records [first, end) of a blob, the first at `recordsAt`, noting where each starts
   * (recordOffsets[r], relative to `blobOffset`) and its first location (recordFirstLocation[r -
   * first]; one entry more, set by the caller); returns the offset just past the last record. One loop with the
   * decoder's state in locals (this is most of the time a registration takes); every failing
   * check leaves it through a function that builds the error.
   */
  decodeRecords(recordsAt: number, first: number, end: number, blobOffset: number, recordOffsets: Uint32Array, recordFirstLocation: Uint32Array): number {
    const section = this.section;
    const sectionWords = this.sectionWords;
    const lengthBytes = section.lengthBytes;
    let words = this.words;
    let count = this.locationCount;
    let at = recordsAt;
    // In locals: V8 reads an import's binding and checks the callee at every call, which cost a
    // sixth of this loop (once per location).
    const encodeWord0 = encodeLocationWord0;
    const untyped = ROOT_TYPE_NONE;
    for (let r = first; r < end; r++) {
      recordOffsets[r] = at - blobOffset;
      recordFirstLocation[r - first] = count;
      if (at + RECORD_LOCATIONS > lengthBytes) section.need(at, RECORD_LOCATIONS, `stack map record #${r}`);
      const countsWord = sectionWords[(at + RECORD_RESERVED) >>> 2]!;
      if ((countsWord & 0xffff) !== 0) {
        throw new MalformedInputError(`record #${r} reserved field`, section.baseOffset + at + RECORD_RESERVED, countsWord & 0xffff, "0");
      }
      const numLocations = countsWord >>> 16;
      const locationsEnd = at + RECORD_LOCATIONS + numLocations * LOCATION_SIZE_BYTES;
      if (locationsEnd > lengthBytes) {
        section.need(at + RECORD_LOCATIONS, numLocations * LOCATION_SIZE_BYTES, `locations of record #${r} (${numLocations})`);
      }
      if (words.length < 2 * (count + numLocations)) words = this.grow(count, count + numLocations);
      let w = 2 * count;
      for (let loc = at + RECORD_LOCATIONS; loc < locationsEnd; loc += LOCATION_SIZE_BYTES) {
        const head = sectionWords[loc >>> 2]!;
        const regWord = sectionWords[(loc + LOCATION_DWARF_REG) >>> 2]!;
        const value = sectionWords[(loc + LOCATION_OFFSET_OR_CONSTANT) >>> 2]! | 0;
        const kind = head & 0xff;
        // One test for the common case; the checks below, in the format's order, only when it fails.
        if (
          (kind - LocationKind.Register) >>> 0 > LocationKind.ConstantIndex - LocationKind.Register ||
          (head & 0xff00) !== 0 ||
          regWord > 0xff ||
          kind === LocationKind.ConstantIndex
        ) {
          this.checkUnusualLocation(loc, (loc - at - RECORD_LOCATIONS) / LOCATION_SIZE_BYTES, r, kind, head, regWord, value);
        }
        words[w++] = encodeWord0(kind, untyped, regWord & 0xff, head >>> 16);
        words[w++] = value;
      }
      count += numLocations;
      at = this.checkLiveOuts(at, locationsEnd, r);
    }
    this.words = words;
    this.locationCount = count;
    return at;
  }

  /**
   * Checks the padding and live-outs of record `index` at `at` (a section offset, 8-aligned)
   * whose locations end at `locationsEnd`; returns the offset just past the record.
   */
  private checkLiveOuts(at: number, locationsEnd: number, index: number): number {
    const section = this.section;
    const sectionWords = this.sectionWords;
    const liveOuts = at + padTo8(locationsEnd - at);
    if (!section.has(locationsEnd, liveOuts - locationsEnd + LIVE_OUTS_ARRAY)) {
      section.need(locationsEnd, liveOuts - locationsEnd + LIVE_OUTS_ARRAY, `live-out header of record #${index}`);
    }
    if (liveOuts > locationsEnd && sectionWords[locationsEnd >>> 2] !== 0) {
      requireZeros(section, locationsEnd, liveOuts, "padding after the locations of record #", index);
    }
    const liveOutsWord = sectionWords[liveOuts >>> 2]!;
    const pad = liveOutsWord & 0xffff;
    if (pad !== 0) throw new MalformedInputError(`live-out padding of record #${index}`, section.baseOffset + liveOuts, pad, "0");
    const numLiveOuts = liveOutsWord >>> 16;
    const liveOutsEnd = liveOuts + LIVE_OUTS_ARRAY + numLiveOuts * LIVE_OUT_SIZE_BYTES;
    const end = at + padTo8(liveOutsEnd - at);
    if (!section.has(liveOuts + LIVE_OUTS_ARRAY, end - liveOuts - LIVE_OUTS_ARRAY)) {
      section.need(liveOuts + LIVE_OUTS_ARRAY, end - liveOuts - LIVE_OUTS_ARRAY, `live-outs of record #${index} (${numLiveOuts})`);
    }
    for (let i = 0; i < numLiveOuts; i++) {
      const lo = liveOuts + LIVE_OUTS_ARRAY + i * LIVE_OUT_SIZE_BYTES;
      const reserved = (sectionWords[lo >>> 2]! >>> 16) & 0xff;
      if (reserved !== 0)
        throw new MalformedInputError(`reserved byte of live-out #${i + 1} of record #${index}`, section.baseOffset + lo + LIVE_OUT_RESERVED, reserved, "0");
    }
    if (end > liveOutsEnd && sectionWords[liveOutsEnd >>> 2] !== 0) {
      requireZeros(section, liveOutsEnd, end, "padding after the live-outs of record #", index);
    }
    return end;
  }

  /**
   * The checks of location `i` of record `index` at `loc` that the common case (kind 1..4, zero
   * reserved fields, a register below 256) skips: throws for a malformed one, notes the first
   * record with a register above 255.
   */
  private checkUnusualLocation(loc: number, i: number, index: number, kind: number, head: number, regWord: number, value: number): void {
    const section = this.section;
    if (kind < LocationKind.Register || kind > LocationKind.ConstantIndex) {
      throw new MalformedInputError(
        `kind of location #${i + 1} of record #${index}`,
        section.baseOffset + loc,
        kind,
        "1..5 (Register, Direct, Indirect, Constant, ConstantIndex)",
      );
    }
    if ((head & 0xff00) !== 0 || regWord >>> 16 !== 0) {
      throw new MalformedInputError(
        `reserved fields of location #${i + 1} of record #${index}`,
        section.baseOffset + loc,
        `${(head >>> 8) & 0xff}/${regWord >>> 16}`,
        "0/0",
      );
    }
    if (kind === LocationKind.ConstantIndex && value >>> 0 >= this.numConstants) {
      throw new MalformedInputError(
        `constant index of location #${i + 1} of record #${index}`,
        section.baseOffset + loc + LOCATION_OFFSET_OR_CONSTANT,
        value >>> 0,
        `below NumConstants = ${this.numConstants}`,
      );
    }
    if (regWord > 0xff && this.wideRegisterRecord < 0) {
      this.wideRegisterRecord = index;
      this.wideRegister = regWord;
    }
  }

  /** A larger copy of the location words (the first `count` locations kept), for at least `minLocations`. */
  private grow(count: number, minLocations: number): Int32Array {
    const grown = uninitializedArray(Int32Array, 2 * Math.max(minLocations, 2 * count, 64));
    grown.set(this.words.subarray(0, 2 * count));
    this.words = grown;
    return grown;
  }

  /** The decoded words, exactly `2 * locationCount` long (a view when little of the reserve is unused). */
  finishLocationWords(): Int32Array {
    const used = 2 * this.locationCount;
    return used * 4 >= this.words.length * 3 ? this.words.subarray(0, used) : this.words.slice(0, used);
  }
}

/** Throws unless [from, to) is all zero bytes; the message names `what` followed by the record index. */
function requireZeros(section: ByteView, from: number, to: number, what: string, recordIndex: number): void {
  for (let i = from; i < to; i++) {
    const b = section.u8(i);
    if (b !== 0) throw new MalformedInputError(`${what}${recordIndex}`, section.baseOffset + i, hex(b), "0x0");
  }
}

/**
 * Every blob of a `.llvm_stackmaps` section, in order. A linked file concatenates one blob per
 * object; after the last record of a blob comes either the end of the section or the next blob.
 * `sectionOffset` is where the section lies in its file, for error messages.
 */
export function parseStackMapSection(bytes: Uint8Array, sectionOffset = 0): StackMapBlob[] {
  const section = new ByteView(bytes, sectionOffset);
  const sectionWords = littleEndianWords(bytes);
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
    const blob = StackMapBlob.parse(section, offset, sectionWords);
    blobs.push(blob);
    offset += blob.sizeBytes;
  }
  return blobs;
}

/**
 * Where every blob of a `.llvm_stackmaps` section lies, and its functions and records
 * (StackMapBlobIndex), from the counts alone: the header's, each function's RecordCount, each
 * record's NumLocations and NumLiveOuts. Checks the bounds and the record counts as `parse` does
 * (with its messages) and nothing else: a section `parseStackMapSection` accepted, or the scan
 * kernel indexed, is what this is for; `StackMapBlob.parseRecords` checks the records it decodes.
 */
export function indexStackMapSection(bytes: Uint8Array, sectionOffset = 0): StackMapBlobIndex[] {
  const section = new ByteView(bytes, sectionOffset);
  const sectionWords = littleEndianWords(bytes);
  const blobs: StackMapBlobIndex[] = [];
  if (bytes.byteLength === 0) throw new TruncatedInputError("stack map section", sectionOffset, HEADER_SIZE_BYTES, 0);
  for (let offset = 0; offset < bytes.byteLength; offset += blobs[blobs.length - 1]!.sizeBytes) blobs.push(indexBlob(section, sectionWords, offset));
  return blobs;
}

/**
 * The StackMapBlobIndex of the blob at `offset` of `section` (see indexStackMapSection). Reads the
 * counts as whole words of `sectionWords` (records start 8-aligned from the section's start: see
 * RecordDecoder): NumLocations is the high half of record word +12, NumLiveOuts of live-out word +0.
 */
function indexBlob(section: ByteView, sectionWords: Uint32Array, offset: number): StackMapBlobIndex {
  checkHeader(section, offset);
  const { numFunctions, numConstants, numRecords, recordsAt, functionFirstRecord, recordFunctions } = blobHead(section, offset);
  const recordOffsets = uninitializedArray(Uint32Array, numRecords);
  const lengthBytes = section.lengthBytes;
  let at = recordsAt;
  // Each `need` (and its message) only when the bytes end too soon.
  for (let r = 0; r < numRecords; r++) {
    recordOffsets[r] = at - offset;
    if (at + RECORD_LOCATIONS > lengthBytes) section.need(at, RECORD_LOCATIONS, `stack map record #${r}`);
    const liveOuts = liveOutsOffset(at, sectionWords[(at + RECORD_RESERVED) >>> 2]! >>> 16);
    if (liveOuts + LIVE_OUTS_ARRAY > lengthBytes) section.need(liveOuts, LIVE_OUTS_ARRAY, `live-out header of record #${r}`);
    const numLiveOuts = sectionWords[(liveOuts + LIVE_OUTS_PADDING) >>> 2]! >>> 16;
    at = recordEndOffset(liveOuts, numLiveOuts);
    if (at > lengthBytes) section.need(liveOuts, at - liveOuts, `live-outs of record #${r} (${numLiveOuts})`);
  }
  return { offset, sizeBytes: at - offset, numFunctions, numConstants, numRecords, recordOffsets, recordFunctions, functionFirstRecord };
}

/**
 * The length in bytes of the StackMap v3 blob at `address` of live memory (the pointer passed to
 * `gc_init`), found from its counts as `StackMapBlob.parse` finds it, reading only the header and
 * each record's location and live-out counts, never at or past `address + maxLengthBytes`.
 * `readWord(a)` returns the little-endian u64 at the 8-aligned address `a` (for a `Memory`:
 * `(a) => memory.readWordBigInt(a)`); whatever it throws is passed on. Copy `length` bytes and
 * `parseStackMapSection` them for everything else (version, reserved fields, locations). Error
 * offsets are relative to `address`. The same job for `_GC_MAP_` blobs: plimmix-map.ts
 * `plimmixMapLength`.
 */
export function llvmStackMapLength(readWord: (address: number) => bigint, address: number, maxLengthBytes: number): number {
  requireArgument(typeof readWord === "function", "readWord", readWord, "a function reading the 64-bit word at an address (a bigint)");
  if (!Number.isSafeInteger(address) || address <= 0) throw new InvalidArgumentError("stack map address", hex(address), "a non-null address");
  if (!Number.isSafeInteger(maxLengthBytes) || maxLengthBytes < 0) {
    throw new InvalidArgumentError("maxLengthBytes", String(maxLengthBytes), "a non-negative safe integer");
  }
  const need = (rel: number, bytes: number, what: string): void => {
    if (rel + bytes > maxLengthBytes) throw new TruncatedInputError(what, rel, bytes, maxLengthBytes - rel);
  };
  // Whole words only, so that no word read reaches past the bound.
  const end = address + maxLengthBytes;
  let cachedAt = -1;
  let cachedWord = 0n;
  const u8At = (rel: number, what: string): number => {
    const a = address + rel;
    const wordAt = a - (a % 8);
    if (wordAt !== cachedAt) {
      if (wordAt + 8 > end) throw new TruncatedInputError(what, wordAt - address, 8, end - wordAt);
      cachedWord = readWord(wordAt);
      cachedAt = wordAt;
    }
    return Number((cachedWord >> BigInt((a % 8) * 8)) & 0xffn);
  };
  const u16At = (rel: number, what: string): number => {
    need(rel, 2, what);
    return u8At(rel, what) | (u8At(rel + 1, what) << 8);
  };
  const u32At = (rel: number, what: string): number => (u16At(rel, what) | (u16At(rel + 2, what) << 16)) >>> 0;

  const numFunctions = u32At(HEADER_NUM_FUNCTIONS, "stack map header");
  const numConstants = u32At(HEADER_NUM_CONSTANTS, "stack map header");
  const numRecords = u32At(HEADER_NUM_RECORDS, "stack map header");
  const recordsAt = HEADER_SIZE_BYTES + numFunctions * FUNCTION_SIZE_BYTES + numConstants * CONSTANT_SIZE_BYTES;
  need(HEADER_SIZE_BYTES, recordsAt - HEADER_SIZE_BYTES, `stack map functions and constants (${numFunctions} functions, ${numConstants} constants)`);
  let cursor = recordsAt;
  for (let r = 0; r < numRecords; r++) {
    const numLocations = u16At(cursor + RECORD_NUM_LOCATIONS, `stack map record #${r}`);
    const liveOuts = liveOutsOffset(cursor, numLocations);
    const numLiveOuts = u16At(liveOuts + LIVE_OUTS_COUNT, `live-out header of record #${r}`);
    cursor = recordEndOffset(liveOuts, numLiveOuts);
    need(liveOuts, cursor - liveOuts, `live-outs of record #${r} (${numLiveOuts})`);
  }
  return cursor;
}

/** Where the live-out header of the record at `recordAt` (8-aligned) with `numLocations` locations lies. */
export function liveOutsOffset(recordAt: number, numLocations: number): number {
  return recordAt + padTo8(RECORD_LOCATIONS + numLocations * LOCATION_SIZE_BYTES);
}

/** Where the record whose live-out header is at `liveOutsAt` (8-aligned) with `numLiveOuts` entries ends (the next record's start). */
export function recordEndOffset(liveOutsAt: number, numLiveOuts: number): number {
  return padTo8(liveOutsAt + LIVE_OUTS_ARRAY + numLiveOuts * LIVE_OUT_SIZE_BYTES);
}
