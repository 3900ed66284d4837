import { InvalidArgumentError, UnsupportedInputError } from "../errors.js";
import type { Architecture } from "../arch/architecture.js";
import { X86_64 } from "../arch/x86-64.js";

/*
 * The frame descriptors of one registered map: what the walker needs at each safepoint, in
 * struct-of-arrays form (typed arrays, no object per safepoint).
 *
 * Per safepoint i:
 *   returnAddress[i]    absolute return address (load bias applied): the table key
 *   frameSizeBytes[i]   CFA - SP - architecture.callPushBytes: on x86-64 the distance from SP at
 *                       the safepoint (just after the call returned) to the return-address slot
 *                       of this frame, on AArch64 CFA - SP; -1 when it is not static (dynamic
 *                       frame, or a frame-pointer frame at a call that may push arguments):
 *                       then the CFA rule below, with the frame-pointer register, gives it.
 *   stackSizeBytes[i]   what the map recorded (LLVM StackSize; plimmix words * 8); -1 = UINT64_MAX
 *   cfaRegister[i]      DWARF register of the CFA rule at the safepoint (7 rsp, 6 rbp; AArch64 31 sp, 29 x29), or
 *   cfaOffsetBytes[i]   NO_CFA_RULE when no unwind information covers it; CFA = reg + offset
 *                       (the caller's SP is the CFA; on x86-64 the return-address slot is CFA - 8)
 *   savedRegOffsets     one entry per callee-saved register of the descriptors' architecture per
 *                       safepoint, in its calleeSavedDwarf order (CALLEE_SAVED_COUNT entries, in
 *                       CALLEE_SAVED_DWARF order, on x86-64): the offset from the CFA of the slot
 *                       where this frame saved that register's caller value, or 0 when this frame
 *                       did not save it
 *   flags[i]            FLAG_* below
 *   functionIndex[i]    into `functions`
 *   blobIndex[i], recordIndex[i]   where it came from in the source map (for dumps and errors)
 *   locStart[i]         first location (index into `locations`) of this safepoint; for a
 *                       statepoint the three header constants are not included
 *   deoptCount[i]       deopt locations, at locStart
 *   pairStart[i], pairCount[i]     root pairs (indices into `pairs`, two location indices each:
 *                       base then derived; base === derived for a plain root)
 *   allocaCount[i]      Direct gc-alloca locations (statepoints only), at
 *                       locStart + deoptCount + 2 * pairCount
 *
 * A location is two Int32 words:
 *   word 0: kind (bits 0-3: LocationKind 1..5) | rootType (bits 4-7: ROOT_TYPE_*) |
 *           dwarfReg (bits 8-15) | sizeBytes (bits 16-31)
 *   word 1: signed offset (Direct, Indirect), the small constant (Constant), or the index into
 *           the blob's constant pool (ConstantIndex)
 */

// x86-64's callee-saved registers and frame rules (src/arch/x86-64.ts), for the parts that handle
// x86-64 only: the native runtime's thread record, the simulator, the plimmix and OCaml loaders.
// The walker sizes and names everything by the architecture of the descriptors it walks
// (FrameDescriptors.architecture, RegistrySnapshot.architecture), never by these.
export const CALLEE_SAVED_DWARF = X86_64.calleeSavedDwarf;
export const CALLEE_SAVED_COUNT = CALLEE_SAVED_DWARF.length;
export const CALLEE_SAVED_NAMES = X86_64.calleeSavedNames;
/** The frame pointer's index in CALLEE_SAVED_DWARF order. */
export const FRAME_POINTER_INDEX = X86_64.framePointerIndex;
/** Where a frame's return address lies relative to its CFA (x86-64: CFA - 8, pushed by `call`). */
export const RA_CFA_OFFSET_BYTES = X86_64.returnAddressCfaOffsetBytes;
export const DWARF_RSP = X86_64.dwarf.sp;
export const DWARF_RBP = X86_64.dwarf.fp;
export const NO_CFA_RULE = 255;
/**
 * A pseudo DWARF register for Indirect locations relative to the frame's CFA (the caller's SP
 * after the call returns). Formats whose root offsets are function-wide (plimmix `_GC_MAP_`,
 * OCaml frame tables) are loaded this way, so that outgoing arguments pushed at a call site,
 * which move SP but not the CFA, do not move the roots.
 */
export const DWARF_CFA = 254;

/** Per architecture: DWARF register -> index in its calleeSavedDwarf, or -1. Built once each. */
const CALLEE_SAVED_INDEX_TABLES = new Map<Architecture, Int8Array>();

function calleeSavedIndexTable(architecture: Architecture): Int8Array {
  let table = CALLEE_SAVED_INDEX_TABLES.get(architecture);
  if (table === undefined) {
    table = new Int8Array(256).fill(-1);
    for (const [k, reg] of architecture.calleeSavedDwarf.entries()) table[reg] = k;
    CALLEE_SAVED_INDEX_TABLES.set(architecture, table);
  }
  return table;
}
const X86_64_CALLEE_SAVED_INDEX = calleeSavedIndexTable(X86_64);

/** Index of a DWARF register in the architecture's calleeSavedDwarf (default CALLEE_SAVED_DWARF), or -1. */
export function calleeSavedIndex(dwarfReg: number, architecture: Architecture = X86_64): number {
  if (dwarfReg < 0 || dwarfReg >= 256) return -1;
  const table = architecture === X86_64 ? X86_64_CALLEE_SAVED_INDEX : calleeSavedIndexTable(architecture);
  return table[dwarfReg]!;
}

export const FLAG_DYNAMIC_FRAME = 1; // StackSize was UINT64_MAX (or plimmix -1)
export const FLAG_FRAME_SIZE_DIFFERS = 2; // effective frame size != recorded stack size (pushed arguments)
export const FLAG_NO_UNWIND_INFO = 4; // no FDE covers the return address: the recorded size is all we have
export const FLAG_STATEPOINT = 8; // the record has the statepoint shape
export const FLAG_FRAME_POINTER_CFA = 16; // CFA is frame-pointer based: the walker climbs by rbp (x29)
export const FLAG_RETURN_ADDRESS_SIGNED = 32; // AArch64: the saved return address is signed (pointer authentication)

export const ROOT_TYPE_NONE = 0; // LLVM locations: untyped (a heap pointer, or a deopt value)
export const ROOT_TYPE_ATOMIC = 1; // _GC_MAP_ type 0: no pointers
export const ROOT_TYPE_TRAIT = 2; // _GC_MAP_ type 1
export const ROOT_TYPE_COMPLEX = 3; // _GC_MAP_ type 2
export const ROOT_TYPE_POINTER = 4; // _GC_MAP_ type 3

export interface FunctionInfo {
  /** Symbol name, when known. */
  name: string | undefined;
  /** Address as in the source map after relocation, before the load bias. */
  address: number;
  /** Recorded stack size in bytes; -1 for dynamic. */
  stackSizeBytes: number;
}

export function encodeLocationWord0(kind: number, rootType: number, dwarfReg: number, sizeBytes: number): number {
  if (dwarfReg > 0xff) {
    throw new UnsupportedInputError("DWARF register of a location", 0, dwarfReg, "registers 0..255");
  }
  return (kind & 0xf) | ((rootType & 0xf) << 4) | ((dwarfReg & 0xff) << 8) | ((sizeBytes & 0xffff) << 16);
}
export function locationKind(word0: number): number {
  return word0 & 0xf;
}
export function locationRootType(word0: number): number {
  return (word0 >>> 4) & 0xf;
}
export function locationDwarfReg(word0: number): number {
  return (word0 >>> 8) & 0xff;
}
export function locationSizeBytes(word0: number): number {
  return word0 >>> 16;
}

/** One safepoint's fields, as `FrameDescriptorBuilder.addSafepoint` takes them (see the header comment). */
export interface SafepointFields {
  returnAddress: number;
  frameSizeBytes: number;
  stackSizeBytes: number;
  cfaRegister: number;
  cfaOffsetBytes: number;
  savedRegOffsets: ArrayLike<number>;
  flags: number;
  functionIndex: number;
  blobIndex: number;
  recordIndex: number;
  locStart: number;
  deoptCount: number;
  pairStart: number;
  pairCount: number;
  allocaCount: number;
}

/**
 * Growable typed-array columns; `finish()` freezes them into a FrameDescriptors. Loaders that
 * know their counts up front pass them as hints, so the columns are allocated once.
 */
export class FrameDescriptorBuilder {
  private n = 0;
  private cap: number;
  private returnAddress: Float64Array;
  private frameSizeBytes: Int32Array;
  private stackSizeBytes: Int32Array;
  private cfaRegister: Uint8Array;
  private cfaOffsetBytes: Int32Array;
  private savedRegOffsets: Int16Array;
  private flags: Uint8Array;
  private functionIndex: Uint32Array;
  private blobIndex: Uint32Array;
  private recordIndex: Uint32Array;
  private locStart: Uint32Array;
  private deoptCount: Uint16Array;
  private pairStart: Uint32Array;
  private pairCount: Uint16Array;
  private allocaCount: Uint16Array;
  private locations: Int32Array;
  private locCount = 0;
  private pairs: Uint32Array;
  private pairWords = 0;

  /** The architecture whose registers the descriptors name (default x86-64). */
  readonly architecture: Architecture;
  /** Entries per safepoint in savedRegOffsets: the architecture's callee-saved count. */
  private readonly savedPerSafepoint: number;

  constructor(hints: { safepoints?: number; locations?: number; pairs?: number; architecture?: Architecture } = {}) {
    const cap = Math.max(16, hints.safepoints ?? 0);
    this.cap = cap;
    this.architecture = hints.architecture ?? X86_64;
    this.savedPerSafepoint = this.architecture.calleeSavedDwarf.length;
    this.returnAddress = new Float64Array(cap);
    this.frameSizeBytes = new Int32Array(cap);
    this.stackSizeBytes = new Int32Array(cap);
    this.cfaRegister = new Uint8Array(cap);
    this.cfaOffsetBytes = new Int32Array(cap);
    this.savedRegOffsets = new Int16Array(cap * this.savedPerSafepoint);
    this.flags = new Uint8Array(cap);
    this.functionIndex = new Uint32Array(cap);
    this.blobIndex = new Uint32Array(cap);
    this.recordIndex = new Uint32Array(cap);
    this.locStart = new Uint32Array(cap);
    this.deoptCount = new Uint16Array(cap);
    this.pairStart = new Uint32Array(cap);
    this.pairCount = new Uint16Array(cap);
    this.allocaCount = new Uint16Array(cap);
    this.locations = new Int32Array(Math.max(64, 2 * (hints.locations ?? 0)));
    this.pairs = new Uint32Array(Math.max(64, 2 * (hints.pairs ?? 0)));
  }

  readonly functions: FunctionInfo[] = [];

  get count(): number {
    return this.n;
  }

  addFunction(info: FunctionInfo): number {
    this.functions.push(info);
    return this.functions.length - 1;
  }

  /**
   * Appends locations already in the two-word encoding (see the header comment); returns the
   * first's index. The first block added to an empty builder becomes its column as it is, without
   * a copy: `words` must not change afterwards (the builder copies before it adds to a column it
   * adopted, since an adopted column is full).
   */
  addLocationWords(words: Int32Array): number {
    const first = this.locCount;
    if (first === 0 && words.length >= this.locations.length) {
      this.locations = words;
      this.locCount = words.length >> 1;
      return 0;
    }
    const needed = first * 2 + words.length;
    if (needed > this.locations.length) this.locations = growInt32(this.locations, Math.max(needed, this.locations.length * 2));
    this.locations.set(words, first * 2);
    this.locCount += words.length >> 1;
    return first;
  }

  /** Appends a location and returns its index. */
  addLocation(word0: number, word1: number): number {
    if (this.locCount * 2 + 2 > this.locations.length) this.locations = growInt32(this.locations, this.locations.length * 2);
    this.locations[this.locCount * 2] = word0;
    this.locations[this.locCount * 2 + 1] = word1;
    return this.locCount++;
  }
  get nextLocationIndex(): number {
    return this.locCount;
  }
  addPair(baseLocation: number, derivedLocation: number): void {
    if (this.pairWords + 2 > this.pairs.length) this.pairs = growUint32(this.pairs, this.pairs.length * 2);
    this.pairs[this.pairWords++] = baseLocation;
    this.pairs[this.pairWords++] = derivedLocation;
  }
  get nextPairIndex(): number {
    return this.pairWords / 2;
  }

  /**
   * Adds a safepoint; its locations and pairs must have been added before (see fields). The
   * fields are copied: a loader may pass one object for every safepoint, refilled each time.
   */
  addSafepoint(s: SafepointFields): number {
    if (this.n === this.cap) this.growSafepoints();
    const i = this.n++;
    this.returnAddress[i] = s.returnAddress;
    this.frameSizeBytes[i] = s.frameSizeBytes;
    this.stackSizeBytes[i] = s.stackSizeBytes;
    this.cfaRegister[i] = s.cfaRegister;
    this.cfaOffsetBytes[i] = s.cfaOffsetBytes;
    const saved = s.savedRegOffsets;
    const savedColumn = this.savedRegOffsets;
    // The column is zero where nothing was written (fresh or grown, and each row is written
    // once), so only the registers this frame saved are stored.
    const perSafepoint = this.savedPerSafepoint;
    for (let k = 0; k < perSafepoint && k < saved.length; k++) {
      const offset = saved[k]!;
      if (offset !== 0) savedColumn[i * perSafepoint + k] = offset;
    }
    this.flags[i] = s.flags;
    this.functionIndex[i] = s.functionIndex;
    this.blobIndex[i] = s.blobIndex;
    this.recordIndex[i] = s.recordIndex;
    this.locStart[i] = s.locStart;
    checkU16("deopt count", s.deoptCount);
    checkU16("pair count", s.pairCount);
    checkU16("alloca count", s.allocaCount);
    this.deoptCount[i] = s.deoptCount;
    this.pairStart[i] = s.pairStart;
    this.pairCount[i] = s.pairCount;
    this.allocaCount[i] = s.allocaCount;
    return i;
  }

  private growSafepoints(): void {
    const cap = this.cap * 2;
    this.returnAddress = copyInto(new Float64Array(cap), this.returnAddress);
    this.frameSizeBytes = copyInto(new Int32Array(cap), this.frameSizeBytes);
    this.stackSizeBytes = copyInto(new Int32Array(cap), this.stackSizeBytes);
    this.cfaRegister = copyInto(new Uint8Array(cap), this.cfaRegister);
    this.cfaOffsetBytes = copyInto(new Int32Array(cap), this.cfaOffsetBytes);
    this.savedRegOffsets = copyInto(new Int16Array(cap * this.savedPerSafepoint), this.savedRegOffsets);
    this.flags = copyInto(new Uint8Array(cap), this.flags);
    this.functionIndex = copyInto(new Uint32Array(cap), this.functionIndex);
    this.blobIndex = copyInto(new Uint32Array(cap), this.blobIndex);
    this.recordIndex = copyInto(new Uint32Array(cap), this.recordIndex);
    this.locStart = copyInto(new Uint32Array(cap), this.locStart);
    this.deoptCount = copyInto(new Uint16Array(cap), this.deoptCount);
    this.pairStart = copyInto(new Uint32Array(cap), this.pairStart);
    this.pairCount = copyInto(new Uint16Array(cap), this.pairCount);
    this.allocaCount = copyInto(new Uint16Array(cap), this.allocaCount);
    this.cap = cap;
  }

  /**
   * The columns, each exactly as long as its content: a column the hints sized exactly is handed
   * over as it is (no copy), the others are copied. The builder must not be used afterwards.
   */
  finish(): FrameDescriptors {
    const n = this.n;
    return new FrameDescriptors(
      n,
      exactLength(this.returnAddress, n),
      exactLength(this.frameSizeBytes, n),
      exactLength(this.stackSizeBytes, n),
      exactLength(this.cfaRegister, n),
      exactLength(this.cfaOffsetBytes, n),
      exactLength(this.savedRegOffsets, n * this.savedPerSafepoint),
      exactLength(this.flags, n),
      exactLength(this.functionIndex, n),
      exactLength(this.blobIndex, n),
      exactLength(this.recordIndex, n),
      exactLength(this.locStart, n),
      exactLength(this.deoptCount, n),
      exactLength(this.pairStart, n),
      exactLength(this.pairCount, n),
      exactLength(this.allocaCount, n),
      exactLength(this.locations, this.locCount * 2),
      exactLength(this.pairs, this.pairWords),
      this.functions.slice(),
      this.architecture,
    );
  }
}

/** The frozen columns; read-only by convention (the typed arrays are shared with the walker). */
export class FrameDescriptors {
  constructor(
    readonly count: number,
    readonly returnAddress: Float64Array,
    readonly frameSizeBytes: Int32Array,
    readonly stackSizeBytes: Int32Array,
    readonly cfaRegister: Uint8Array,
    readonly cfaOffsetBytes: Int32Array,
    readonly savedRegOffsets: Int16Array,
    readonly flags: Uint8Array,
    readonly functionIndex: Uint32Array,
    readonly blobIndex: Uint32Array,
    readonly recordIndex: Uint32Array,
    readonly locStart: Uint32Array,
    readonly deoptCount: Uint16Array,
    readonly pairStart: Uint32Array,
    readonly pairCount: Uint16Array,
    readonly allocaCount: Uint16Array,
    /** Two words per location, see the header comment. */
    readonly locations: Int32Array,
    /** Two location indices per pair: base, derived. */
    readonly pairs: Uint32Array,
    readonly functions: readonly FunctionInfo[],
    /** Whose registers the locations, CFA rules and savedRegOffsets columns name. */
    readonly architecture: Architecture = X86_64,
  ) {}

  /** Bytes held by the columns (what a safepoint costs in memory). */
  get sizeBytes(): number {
    let total = this.locations.byteLength + this.pairs.byteLength;
    for (const column of [
      this.returnAddress,
      this.frameSizeBytes,
      this.stackSizeBytes,
      this.cfaRegister,
      this.cfaOffsetBytes,
      this.savedRegOffsets,
      this.flags,
      this.functionIndex,
      this.blobIndex,
      this.recordIndex,
      this.locStart,
      this.deoptCount,
      this.pairStart,
      this.pairCount,
      this.allocaCount,
    ]) {
      total += column.byteLength;
    }
    return total;
  }

  /** A copy with every return address shifted by `biasBytes` (registration at a load address). */
  withBias(biasBytes: number): FrameDescriptors {
    if (biasBytes === 0) return this;
    const ras = this.returnAddress.map((ra) => ra + biasBytes);
    for (const ra of ras) {
      if (!Number.isSafeInteger(ra) || ra <= 0) {
        throw new InvalidArgumentError("load bias", String(biasBytes), "a bias that keeps every return address in [1, 2^53)");
      }
    }
    return new FrameDescriptors(
      this.count,
      ras,
      this.frameSizeBytes,
      this.stackSizeBytes,
      this.cfaRegister,
      this.cfaOffsetBytes,
      this.savedRegOffsets,
      this.flags,
      this.functionIndex,
      this.blobIndex,
      this.recordIndex,
      this.locStart,
      this.deoptCount,
      this.pairStart,
      this.pairCount,
      this.allocaCount,
      this.locations,
      this.pairs,
      this.functions,
      this.architecture,
    );
  }
}

/** `column` itself when it holds exactly `length` elements, otherwise a copy of its first `length`. */
function exactLength<T extends { length: number; slice(start: number, end: number): T }>(column: T, length: number): T {
  return column.length === length ? column : column.slice(0, length);
}
function checkU16(what: string, value: number): void {
  if (value < 0 || value > 0xffff) throw new InvalidArgumentError(what, String(value), "0..65535");
}
function copyInto<T extends { set(a: ArrayLike<number>): void }>(dst: T, src: ArrayLike<number>): T {
  dst.set(src);
  return dst;
}
function growInt32(a: Int32Array, cap: number): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(cap);
  grown.set(a);
  return grown;
}
function growUint32(a: Uint32Array, cap: number): Uint32Array<ArrayBuffer> {
  const grown = new Uint32Array(cap);
  grown.set(a);
  return grown;
}
