import { InvalidArgumentError } from "../errors.js";
import type { Architecture } from "../arch/architecture.js";
import { X86_64 } from "../arch/x86-64.js";
import { uninitializedArray } from "../bytes/uninitialized-array.js";

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
 *           dwarfReg (bits 8-15) | sizeBytes (bits 16-31): src/location/location-word.ts
 *   word 1: signed offset (Direct, Indirect), the small constant (Constant), or the index into
 *           the blob's constant pool (ConstantIndex)
 */

// x86-64's frame rules (src/arch/x86-64.ts) that the fast-frame rule and the x86-64-only loaders
// (plimmix, OCaml) name. Callee-saved registers are never defaulted to x86-64's: every part asks the
// architecture it handles (FrameDescriptors.architecture, RegistrySnapshot.architecture).
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

export interface FunctionInfo {
  /** Symbol name, when known. */
  name: string | undefined;
  /** Address as in the source map after relocation, before the load bias. */
  address: number;
  /** Recorded stack size in bytes; -1 for dynamic. */
  stackSizeBytes: number;
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

/** A SafepointFields of zeros over `savedRegOffsets`, for a loader to refill for every safepoint it adds. */
export function scratchSafepointFields(savedRegOffsets: Int16Array): SafepointFields {
  return {
    returnAddress: 0,
    frameSizeBytes: 0,
    stackSizeBytes: 0,
    cfaRegister: 0,
    cfaOffsetBytes: 0,
    savedRegOffsets,
    flags: 0,
    functionIndex: 0,
    blobIndex: 0,
    recordIndex: 0,
    locStart: 0,
    deoptCount: 0,
    pairStart: 0,
    pairCount: 0,
    allocaCount: 0,
  };
}

/**
 * The columns of a FrameDescriptors, in one table: each per-safepoint column's name and element
 * type (savedRegOffsets holds the architecture's callee-saved count of entries per safepoint,
 * every other column one), then the two shared ones (locations: two Int32 words each; pairs: two
 * location indices each). The builder's growth and `finish`, FrameDescriptors' fields, `sizeBytes`,
 * `sameAs` and `withBias` all go through this table, so a column added here is in every one of
 * them (`addSafepoint` fills a row field by field: SafepointFields names the same columns).
 */
/** A column's typed-array constructor, typed by the array it makes (over any buffer). */
function column<T>(kind: ColumnKind<T>): ColumnKind<T> {
  return kind;
}
type ElementsOf<K> = K extends ColumnKind<infer T> ? T : never;
const SAFEPOINT_COLUMNS = {
  returnAddress: column<Float64Array>(Float64Array),
  frameSizeBytes: column<Int32Array>(Int32Array),
  stackSizeBytes: column<Int32Array>(Int32Array),
  cfaRegister: column<Uint8Array>(Uint8Array),
  cfaOffsetBytes: column<Int32Array>(Int32Array),
  savedRegOffsets: column<Int16Array>(Int16Array),
  flags: column<Uint8Array>(Uint8Array),
  functionIndex: column<Uint32Array>(Uint32Array),
  blobIndex: column<Uint32Array>(Uint32Array),
  recordIndex: column<Uint32Array>(Uint32Array),
  locStart: column<Uint32Array>(Uint32Array),
  deoptCount: column<Uint16Array>(Uint16Array),
  pairStart: column<Uint32Array>(Uint32Array),
  pairCount: column<Uint16Array>(Uint16Array),
  allocaCount: column<Uint16Array>(Uint16Array),
} as const;
const SHARED_COLUMNS = { locations: column<Int32Array>(Int32Array), pairs: column<Uint32Array>(Uint32Array) } as const;

type SafepointColumnName = keyof typeof SAFEPOINT_COLUMNS;
type ColumnName = SafepointColumnName | keyof typeof SHARED_COLUMNS;
/** Every column of a FrameDescriptors, by name (see the table above). */
export type DescriptorColumns = { -readonly [K in SafepointColumnName]: ElementsOf<(typeof SAFEPOINT_COLUMNS)[K]> } & {
  -readonly [K in keyof typeof SHARED_COLUMNS]: ElementsOf<(typeof SHARED_COLUMNS)[K]>;
};
type Column = DescriptorColumns[ColumnName];

const SAFEPOINT_COLUMN_NAMES = Object.keys(SAFEPOINT_COLUMNS) as SafepointColumnName[];
const COLUMN_NAMES: readonly ColumnName[] = [...SAFEPOINT_COLUMN_NAMES, ...(Object.keys(SHARED_COLUMNS) as (keyof typeof SHARED_COLUMNS)[])];
/** Every column but the return addresses (which a load bias shifts): what `sameAs` compares element by element. */
const UNBIASED_COLUMN_NAMES = COLUMN_NAMES.filter((name) => name !== "returnAddress");

/** Entries per safepoint of column `name` for `architecture`. */
function entriesPerSafepoint(name: SafepointColumnName, architecture: Architecture): number {
  return name === "savedRegOffsets" ? architecture.calleeSavedDwarf.length : 1;
}

/**
 * Growable typed-array columns; `finish()` freezes them into a FrameDescriptors. Loaders that
 * know their counts up front pass them as hints, so the columns are allocated once. The columns
 * are not zeroed (src/bytes/uninitialized-array.ts): every row, location and pair is written
 * whole when it is added, and `finish()` keeps only those.
 */
export class FrameDescriptorBuilder {
  private n = 0;
  private cap: number;
  /** The per-safepoint columns (`cap` rows) and the shared ones, as the table lists them. */
  private readonly columns: DescriptorColumns;
  private locCount = 0;
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
    const columns: Partial<Record<ColumnName, Column>> = {};
    for (const name of SAFEPOINT_COLUMN_NAMES)
      columns[name] = uninitializedArray<Column>(SAFEPOINT_COLUMNS[name], cap * entriesPerSafepoint(name, this.architecture));
    columns.locations = uninitializedArray(Int32Array, Math.max(64, 2 * (hints.locations ?? 0)));
    columns.pairs = uninitializedArray(Uint32Array, Math.max(64, 2 * (hints.pairs ?? 0)));
    this.columns = columns as DescriptorColumns;
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
    const c = this.columns;
    const first = this.locCount;
    if (first === 0 && words.length >= c.locations.length) {
      c.locations = words;
      this.locCount = words.length >> 1;
      return 0;
    }
    const needed = first * 2 + words.length;
    if (needed > c.locations.length) c.locations = resized(Int32Array, c.locations, Math.max(needed, c.locations.length * 2), first * 2);
    c.locations.set(words, first * 2);
    this.locCount += words.length >> 1;
    return first;
  }

  /** Appends a location and returns its index. */
  addLocation(word0: number, word1: number): number {
    const c = this.columns;
    if (this.locCount * 2 + 2 > c.locations.length) c.locations = resized(Int32Array, c.locations, c.locations.length * 2, this.locCount * 2);
    c.locations[this.locCount * 2] = word0;
    c.locations[this.locCount * 2 + 1] = word1;
    return this.locCount++;
  }
  get nextLocationIndex(): number {
    return this.locCount;
  }
  addPair(baseLocation: number, derivedLocation: number): void {
    const c = this.columns;
    if (this.pairWords + 2 > c.pairs.length) c.pairs = resized(Uint32Array, c.pairs, c.pairs.length * 2, this.pairWords);
    c.pairs[this.pairWords++] = baseLocation;
    c.pairs[this.pairWords++] = derivedLocation;
  }
  get nextPairIndex(): number {
    return this.pairWords / 2;
  }

  /**
   * Adds a safepoint; its locations and pairs must have been added before (see fields). The
   * fields are copied: a loader may pass one object for every safepoint, refilled each time.
   */
  addSafepoint(s: SafepointFields): number {
    if (this.n === this.cap) this.resizeSafepoints(this.cap * 2);
    const i = this.n++;
    const c = this.columns;
    c.returnAddress[i] = s.returnAddress;
    c.frameSizeBytes[i] = s.frameSizeBytes;
    c.stackSizeBytes[i] = s.stackSizeBytes;
    c.cfaRegister[i] = s.cfaRegister;
    c.cfaOffsetBytes[i] = s.cfaOffsetBytes;
    const saved = s.savedRegOffsets;
    const savedColumn = c.savedRegOffsets;
    // The whole row: the column is not zeroed (0 = this frame did not save the register).
    const perSafepoint = this.savedPerSafepoint;
    for (let k = 0; k < perSafepoint; k++) savedColumn[i * perSafepoint + k] = k < saved.length ? saved[k]! : 0;
    c.flags[i] = s.flags;
    c.functionIndex[i] = s.functionIndex;
    c.blobIndex[i] = s.blobIndex;
    c.recordIndex[i] = s.recordIndex;
    c.locStart[i] = s.locStart;
    checkU16("deopt count", s.deoptCount);
    checkU16("pair count", s.pairCount);
    checkU16("alloca count", s.allocaCount);
    c.deoptCount[i] = s.deoptCount;
    c.pairStart[i] = s.pairStart;
    c.pairCount[i] = s.pairCount;
    c.allocaCount[i] = s.allocaCount;
    return i;
  }

  /** Columns of `cap` rows holding the first `n` rows of the current ones. */
  private resizeSafepoints(cap: number): void {
    const c = this.columns as Record<SafepointColumnName, Column>;
    for (const name of SAFEPOINT_COLUMN_NAMES) {
      const per = entriesPerSafepoint(name, this.architecture);
      c[name] = resized<Column>(SAFEPOINT_COLUMNS[name], c[name], cap * per, this.n * per);
    }
    this.cap = cap;
  }

  /**
   * The columns, each exactly as long as its content: a column the hints sized exactly is handed
   * over as it is (no copy), the others are copied. The builder must not be used afterwards.
   */
  finish(): FrameDescriptors {
    const n = this.n;
    const exact: Partial<Record<ColumnName, Column>> = {};
    for (const name of SAFEPOINT_COLUMN_NAMES) exact[name] = exactLength(this.columns[name], n * entriesPerSafepoint(name, this.architecture));
    exact.locations = exactLength(this.columns.locations, this.locCount * 2);
    exact.pairs = exactLength(this.columns.pairs, this.pairWords);
    return new FrameDescriptors(n, exact as DescriptorColumns, this.functions.slice(), this.architecture);
  }
}

/**
 * The frozen columns; read-only by convention (the typed arrays are shared with the walker). The
 * field declarations below mirror the column table for V8, which reserves room in the object for
 * the fields a class declares (columns set only by the constructor's loop would live in a
 * separate property array: one more load per column read on the walker's paths); `implements`
 * makes tsc refuse a column of the table that has no field here.
 */
export class FrameDescriptors implements Readonly<DescriptorColumns> {
  readonly returnAddress!: Float64Array;
  readonly frameSizeBytes!: Int32Array;
  readonly stackSizeBytes!: Int32Array;
  readonly cfaRegister!: Uint8Array;
  readonly cfaOffsetBytes!: Int32Array;
  readonly savedRegOffsets!: Int16Array;
  readonly flags!: Uint8Array;
  readonly functionIndex!: Uint32Array;
  readonly blobIndex!: Uint32Array;
  readonly recordIndex!: Uint32Array;
  readonly locStart!: Uint32Array;
  readonly deoptCount!: Uint16Array;
  readonly pairStart!: Uint32Array;
  readonly pairCount!: Uint16Array;
  readonly allocaCount!: Uint16Array;
  /** Two words per location, see the header comment. */
  readonly locations!: Int32Array;
  /** Two location indices per pair: base, derived. */
  readonly pairs!: Uint32Array;

  constructor(
    readonly count: number,
    /** Every column (the table above); each becomes a field of the same name, in the table's order. */
    columns: DescriptorColumns,
    readonly functions: readonly FunctionInfo[],
    /** Whose registers the locations, CFA rules and savedRegOffsets columns name. */
    readonly architecture: Architecture = X86_64,
  ) {
    const fields = this as unknown as Record<ColumnName, Column>;
    for (const name of COLUMN_NAMES) fields[name] = columns[name];
  }

  /** Every column by name (a new object holding the same arrays). */
  get columns(): DescriptorColumns {
    const columns: Partial<Record<ColumnName, Column>> = {};
    for (const name of COLUMN_NAMES) columns[name] = this[name];
    return columns as DescriptorColumns;
  }

  /** Bytes held by the columns (what a safepoint costs in memory). */
  get sizeBytes(): number {
    let total = 0;
    for (const name of COLUMN_NAMES) total += this[name].byteLength;
    return total;
  }

  /**
   * True when `other`, shifted by `biasBytes`, describes exactly these safepoints: every column
   * equal element by element, the return addresses `biasBytes` apart, the same functions and
   * architecture. (The registry's test that a map registered again is the one it holds.)
   */
  sameAs(other: FrameDescriptors, biasBytes: number): boolean {
    if (other.count !== this.count || other.architecture !== this.architecture || other.functions.length !== this.functions.length) return false;
    for (let i = 0; i < this.count; i++) if (this.returnAddress[i] !== other.returnAddress[i]! + biasBytes) return false;
    for (let f = 0; f < this.functions.length; f++) {
      const a = this.functions[f]!;
      const b = other.functions[f]!;
      if (a.name !== b.name || a.address !== b.address || a.stackSizeBytes !== b.stackSizeBytes) return false;
    }
    return UNBIASED_COLUMN_NAMES.every((name) => sameElements(this[name], other[name]));
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
    return new FrameDescriptors(this.count, { ...this.columns, returnAddress: ras }, this.functions, this.architecture);
  }
}

/** Two columns of the same length and the same elements. */
function sameElements(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** `column` itself when it holds exactly `length` elements, otherwise a copy of its first `length`. */
function exactLength<T extends { length: number; slice(start: number, end: number): T }>(column: T, length: number): T {
  return column.length === length ? column : column.slice(0, length);
}
function checkU16(what: string, value: number): void {
  if (value < 0 || value > 0xffff) throw new InvalidArgumentError(what, String(value), "0..65535");
}
type ColumnKind<T = Column> = { new (buffer: ArrayBuffer, byteOffset: number, length: number): T; readonly BYTES_PER_ELEMENT: number };
/** An uninitialized array of `length` elements holding the first `keep` of `from` (none when `from` is undefined). */
function resized<T extends Column>(kind: ColumnKind<T>, from: T | undefined, length: number, keep: number): T {
  const grown = uninitializedArray(kind, length);
  if (from !== undefined && keep > 0) grown.set(from.subarray(0, keep) as ArrayLike<number>);
  return grown;
}
