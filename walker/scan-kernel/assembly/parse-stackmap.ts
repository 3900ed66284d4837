import * as V3 from "../../../src/stackmap/stackmap-v3-layout";
import * as Job from "../../../src/safepoints/kernel-index-layout";
import { NOT_FAST } from "../../../src/safepoints/recipe-record";
import { FAST_FRAME_ALIGN_BYTES, FAST_FRAME_GC_ALLOCAS, FAST_ROOT_SLOT_BYTES } from "../../../src/safepoints/fast-frame-numbers";

/*
 * The stack map index: a `.llvm_stackmaps` section (StackMap v3, src/stackmap/llvm-stackmap.ts)
 * copied into the scan memory, turned into what `SafepointRegistry.register` makes of it for one
 * module without unwind rows (the runtime's `gc_init` path: `registerStackMapBytes` into an
 * empty registry): the safepoint table's columns
 * (src/safepoints/safepoint-table.ts) and the scan recipes (src/safepoints/scan-recipes.ts), the
 * same values in the same cells and order. src/safepoints/kernel-index.ts calls it and turns the
 * columns into those objects; the fuzzers compare both with the general path on every section.
 *
 * The general decoder stays the one source of record semantics and of every error message: this
 * parse DECLINES (and the caller runs the general path, which throws or decides) every section it
 * is not certain the general path accepts exactly as it computes it here: any bound, version or
 * reserved field out of place, a DWARF register above 255, a function
 * address or return address at or past 2^53, a stack size neither below 2^31 nor dynamic, a
 * default statepoint ID without the statepoint shape, a return address seen twice (a harmless
 * repeat or a DuplicateSafepointError: the registry decides), more than 2^26 records.
 */

const MAX_ADDRESS: u64 = 1 << 53;
const MAX_RECORDS: u64 = 1 << 26;
/** What the record and blob steps return instead of an offset when they decline. */
const DECLINED_AT: u32 = 0xffffffff;
const KNOWN_FLAGS: i32 = V3.STATEPOINT_FLAG_GC_TRANSITION | V3.STATEPOINT_FLAG_DEOPT_LIVE_IN;
const DEOPT_START: u32 = V3.STATEPOINT_DEOPT_START;

@inline function jobWord(job: u32, index: i32): u32 {
  return load<u32>(job + (<u32>index << 2));
}
@inline function setJobWord(job: u32, index: i32, value: u32): void {
  store<u32>(job + (<u32>index << 2), value);
}
@inline function padTo8(bytes: u64): u64 {
  return (bytes + 7) & ~(<u64>7);
}

/**
 * Walks every blob by its counts (the bounds the general decoder checks first) and writes the
 * total records and locations into the job; JOB_DECLINED when any count reaches past the section.
 */
export function measureStackMap(job: u32): u32 {
  const base = jobWord(job, Job.JOB_SECTION);
  const length = <u64>jobWord(job, Job.JOB_SECTION_BYTES);
  let offset: u64 = 0;
  let records: u64 = 0;
  let locations: u64 = 0;
  if (length == 0) return Job.JOB_DECLINED;
  while (offset < length) {
    if (offset + V3.HEADER_SIZE_BYTES > length) return Job.JOB_DECLINED;
    const header = base + <u32>offset;
    const numRecords = <u64>load<u32>(header + V3.HEADER_NUM_RECORDS);
    const recordsAt =
      offset +
      V3.HEADER_SIZE_BYTES +
      <u64>load<u32>(header + V3.HEADER_NUM_FUNCTIONS) * V3.FUNCTION_SIZE_BYTES +
      <u64>load<u32>(header + V3.HEADER_NUM_CONSTANTS) * V3.CONSTANT_SIZE_BYTES;
    if (recordsAt + numRecords * V3.MIN_RECORD_BYTES > length) return Job.JOB_DECLINED;
    let at = recordsAt;
    for (let r: u64 = 0; r < numRecords; r++) {
      if (at + V3.RECORD_LOCATIONS > length) return Job.JOB_DECLINED;
      const n = <u64>load<u16>(base + <u32>at + V3.RECORD_NUM_LOCATIONS);
      const liveOuts = at + padTo8(V3.RECORD_LOCATIONS + n * V3.LOCATION_SIZE_BYTES);
      if (liveOuts + V3.LIVE_OUTS_ARRAY > length) return Job.JOB_DECLINED;
      const liveOutCount = <u64>load<u16>(base + <u32>liveOuts + V3.LIVE_OUTS_COUNT);
      at = liveOuts + padTo8(V3.LIVE_OUTS_ARRAY + liveOutCount * V3.LIVE_OUT_SIZE_BYTES);
      if (at > length) return Job.JOB_DECLINED;
      locations += n;
    }
    records += numRecords;
    offset = at;
  }
  if (records > MAX_RECORDS) return Job.JOB_DECLINED;
  setJobWord(job, Job.JOB_RECORDS, <u32>records);
  setJobWord(job, Job.JOB_LOCATIONS, <u32>locations);
  return Job.JOB_INDEXED;
}

// The job's state while `indexStackMap` runs (set by startJob).
let section: u32 = 0;
let bias: u64 = 0;
let spDwarf: u32 = 0;
let raCfaOffset: i64 = 0;
let keys: u32 = 0;
let values: u32 = 0;
let addresses: u32 = 0;
let tableShift: u32 = 0;
let tableMask: u32 = 0;
let recipeOf: u32 = 0;
let frameBytes: u32 = 0;
let slotStart: u32 = 0;
let pairCounts: u32 = 0;
let slots: u32 = 0;
let hashIndex: u32 = 0;
let hashShift: u32 = 0;
let hashMask: u32 = 0;
/** What recipeOfRecord returns for a record the general path must decide (recipes are >= NOT_FAST). */
const DECLINED_RECIPE: i32 = -2;
// The last record whose locations were checked and compiled, in this blob (lastCount = -1: none).
let lastLocations: u32 = 0;
let lastCount: u32 = 0xffffffff;
let lastSize: i32 = 0;
let lastRecipe: i32 = 0;
let lastWasStatepoint: bool = false;
/** NumConstants of the blob at hand. */
let blobConstants: u32 = 0;
let safepoint: u32 = 0;
let recipeCount: u32 = 0;
let slotWords: u32 = 0;
/** The recipe of the last fast safepoint (call sites of one function mostly share it), or -1. */
let previous: i32 = -1;
// The statepoint shape of the record at hand (matchShape).
let shapePairsStart: u32 = 0;
let shapePairCount: u32 = 0;
let shapeAllocas: u32 = 0;

/**
 * Decodes and checks every record of the section measured into the job, compiles each safepoint's
 * recipe and inserts it into the table (descriptor index = record index over all blobs, module
 * slot 0); JOB_DECLINED as soon as anything is for the general path to decide.
 */
export function indexStackMap(job: u32): u32 {
  const length = jobWord(job, Job.JOB_SECTION_BYTES);
  startJob(job);
  let offset: u32 = 0;
  while (offset < length) {
    offset = indexBlob(offset);
    if (offset == DECLINED_AT) return Job.JOB_DECLINED;
  }
  setJobWord(job, Job.JOB_RECIPE_COUNT, recipeCount);
  setJobWord(job, Job.JOB_SLOT_WORDS, slotWords);
  return Job.JOB_INDEXED;
}

function startJob(job: u32): void {
  section = jobWord(job, Job.JOB_SECTION);
  bias = load<u64>(job + (<u32>Job.JOB_BIAS_LO << 2));
  spDwarf = jobWord(job, Job.JOB_SP_DWARF);
  raCfaOffset = <i64>(<i32>jobWord(job, Job.JOB_RA_CFA_OFFSET));
  const logCapacity = jobWord(job, Job.JOB_LOG_CAPACITY);
  const cells = <u32>1 << logCapacity;
  keys = jobWord(job, Job.JOB_TABLE_KEYS);
  values = jobWord(job, Job.JOB_TABLE_VALUES);
  addresses = jobWord(job, Job.JOB_TABLE_ADDRESSES);
  tableShift = 32 - logCapacity;
  tableMask = cells - 1;
  memory.fill(keys, 0, cells << 3);
  memory.fill(values, 0, cells << 3);
  memory.fill(addresses, 0, cells << 3);
  recipeOf = jobWord(job, Job.JOB_RECIPE_OF_SAFEPOINT);
  frameBytes = jobWord(job, Job.JOB_FRAME_BYTES);
  slotStart = jobWord(job, Job.JOB_SLOT_START);
  pairCounts = jobWord(job, Job.JOB_PAIR_COUNT);
  slots = jobWord(job, Job.JOB_SLOTS);
  hashIndex = jobWord(job, Job.JOB_HASH_INDEX);
  const hashLog = jobWord(job, Job.JOB_HASH_LOG_CAPACITY);
  hashShift = 32 - hashLog;
  hashMask = (<u32>1 << hashLog) - 1;
  // -1 in every recipe word marks an empty cell.
  memory.fill(hashIndex, 0xff, (<u32>1 << hashLog) << 3);
  safepoint = 0;
  recipeCount = 0;
  slotWords = 0;
  previous = -1;
}

/** Checks the blob at `offset` (header, function table) and indexes its records; returns its end. */
function indexBlob(offset: u32): u32 {
  const header = section + offset;
  if (load<u8>(header + V3.HEADER_VERSION) != V3.STACKMAP_VERSION) return DECLINED_AT;
  if (load<u8>(header + V3.HEADER_RESERVED8) != 0 || load<u16>(header + V3.HEADER_RESERVED16) != 0) return DECLINED_AT;
  const numFunctions = load<u32>(header + V3.HEADER_NUM_FUNCTIONS);
  const numRecords = <u64>load<u32>(header + V3.HEADER_NUM_RECORDS);
  const functions = header + V3.HEADER_SIZE_BYTES;
  let claimed: u64 = 0;
  for (let f: u32 = 0; f < numFunctions; f++) {
    const entry = functions + f * V3.FUNCTION_SIZE_BYTES;
    if (load<u32>(entry + V3.FUNCTION_RECORD_COUNT + 4) != 0) return DECLINED_AT;
    claimed += <u64>load<u32>(entry + V3.FUNCTION_RECORD_COUNT);
    if (claimed > numRecords || load<u64>(entry + V3.FUNCTION_ADDRESS) >= MAX_ADDRESS) return DECLINED_AT;
    const stackSize = load<u64>(entry + V3.FUNCTION_STACK_SIZE);
    if (stackSize != U64.MAX_VALUE && stackSize >= 0x80000000) return DECLINED_AT;
  }
  if (claimed != numRecords) return DECLINED_AT;
  blobConstants = load<u32>(header + V3.HEADER_NUM_CONSTANTS);
  lastCount = 0xffffffff;
  let at = offset + V3.HEADER_SIZE_BYTES + numFunctions * V3.FUNCTION_SIZE_BYTES + blobConstants * V3.CONSTANT_SIZE_BYTES;
  for (let f: u32 = 0; f < numFunctions; f++) {
    const entry = functions + f * V3.FUNCTION_SIZE_BYTES;
    const functionAddress = load<u64>(entry + V3.FUNCTION_ADDRESS);
    const stackSize = load<u64>(entry + V3.FUNCTION_STACK_SIZE);
    // The frame size without unwind rows: the recorded size, -1 for a dynamic frame.
    const size: i32 = stackSize == U64.MAX_VALUE ? -1 : <i32>stackSize;
    const count = load<u32>(entry + V3.FUNCTION_RECORD_COUNT);
    for (let k: u32 = 0; k < count; k++) {
      at = indexRecord(at, functionAddress, size);
      if (at == DECLINED_AT) return DECLINED_AT;
    }
  }
  return at;
}

/** Checks the record at `at` (a section offset), compiles its recipe, inserts it; returns its end. */
function indexRecord(at: u32, functionAddress: u64, size: i32): u32 {
  const record = section + at;
  const counts = load<u32>(record + V3.RECORD_RESERVED);
  if ((counts & 0xffff) != 0) return DECLINED_AT;
  const n = counts >>> 16;
  const end = recordEnd(at, at + V3.RECORD_LOCATIONS + n * V3.LOCATION_SIZE_BYTES);
  if (end == DECLINED_AT) return DECLINED_AT;
  const returnAddress = functionAddress + <u64>load<u32>(record + V3.RECORD_INSTRUCTION_OFFSET);
  const key = returnAddress + bias;
  if (returnAddress >= MAX_ADDRESS || key == 0 || key >= MAX_ADDRESS) return DECLINED_AT;
  const claimed = isDefaultStatepointId(load<u64>(record + V3.RECORD_ID));
  const locations = record + V3.RECORD_LOCATIONS;
  let recipe: i32;
  // The locations of the last record again, byte for byte, with the same frame size: the same
  // checks pass and the same recipe follows (compileAll would take it as its `previous`).
  if (n == lastCount && size == lastSize && (lastWasStatepoint || !claimed) && sameBytes(locations, lastLocations, n * V3.LOCATION_SIZE_BYTES)) {
    recipe = lastRecipe;
  } else {
    recipe = recipeOfRecord(locations, n, size, claimed);
    if (recipe == DECLINED_RECIPE) return DECLINED_AT;
    lastLocations = locations;
    lastCount = n;
    lastSize = size;
    lastRecipe = recipe;
  }
  store<i32>(recipeOf + (safepoint << 2), recipe);
  if (!insert(key, safepoint)) return DECLINED_AT;
  safepoint++;
  return end;
}

@inline function isDefaultStatepointId(id: u64): bool {
  return id == <u64>V3.DEFAULT_STATEPOINT_ID_U32 || id == <u64>V3.DEFAULT_DEOPT_STATEPOINT_ID_U32;
}

/** The recipe of a record's `n` locations after checking them, or DECLINED_RECIPE; sets lastWasStatepoint. */
function recipeOfRecord(locations: u32, n: u32, size: i32, claimed: bool): i32 {
  for (let i: u32 = 0; i < n; i++) {
    const location = locations + i * V3.LOCATION_SIZE_BYTES;
    const head = load<u32>(location + V3.LOCATION_KIND);
    // Kinds Register..ConstantIndex (an index below NumConstants), reserved byte 0, a register
    // below 256 with reserved u16 0.
    const kind = head & 0xff;
    if (kind - V3.LOCATION_KIND_REGISTER > <u32>(V3.LOCATION_KIND_CONSTANT_INDEX - V3.LOCATION_KIND_REGISTER)) return DECLINED_RECIPE;
    if ((head & 0xff00) != 0 || load<u32>(location + V3.LOCATION_DWARF_REG) > 0xff) return DECLINED_RECIPE;
    if (kind == V3.LOCATION_KIND_CONSTANT_INDEX && load<u32>(location + V3.LOCATION_OFFSET_OR_CONSTANT) >= blobConstants) return DECLINED_RECIPE;
  }
  lastWasStatepoint = matchShape(locations, n);
  if (lastWasStatepoint) return compileRecipe(locations, size, shapePairsStart, shapePairCount, 2, shapeAllocas);
  // A default statepoint ID without the shape is malformed: the general path says so.
  if (claimed) return DECLINED_RECIPE;
  // A plain record: each location is a root of its own (base = derived).
  return compileRecipe(locations, size, 0, n, 1, 0);
}

/** The `bytes` (a multiple of 4) at `a` and `b` are equal. */
function sameBytes(a: u32, b: u32, bytes: u32): bool {
  let i: u32 = 0;
  for (; i + 8 <= bytes; i += 8) if (load<u64>(a + i) != load<u64>(b + i)) return false;
  return i == bytes || load<u32>(a + i) == load<u32>(b + i);
}

/** Checks the padding and live-outs after the locations ending at `locationsEnd`; returns the record's end. */
function recordEnd(at: u32, locationsEnd: u32): u32 {
  const liveOuts = at + <u32>padTo8(locationsEnd - at);
  if (liveOuts > locationsEnd && load<u32>(section + locationsEnd) != 0) return DECLINED_AT;
  const word = load<u32>(section + liveOuts);
  if ((word & 0xffff) != 0) return DECLINED_AT;
  const count = word >>> 16;
  const list = liveOuts + V3.LIVE_OUTS_ARRAY;
  for (let i: u32 = 0; i < count; i++) {
    if (load<u8>(section + list + i * V3.LIVE_OUT_SIZE_BYTES + V3.LIVE_OUT_RESERVED) != 0) return DECLINED_AT;
  }
  const liveOutsEnd = list + count * V3.LIVE_OUT_SIZE_BYTES;
  const end = at + <u32>padTo8(liveOutsEnd - at);
  if (end > liveOutsEnd && load<u32>(section + liveOutsEnd) != 0) return DECLINED_AT;
  return end;
}

@inline function kindAt(locations: u32, i: u32): u32 {
  return load<u8>(locations + i * V3.LOCATION_SIZE_BYTES + V3.LOCATION_KIND);
}
@inline function valueAt(locations: u32, i: u32): i32 {
  return load<i32>(locations + i * V3.LOCATION_SIZE_BYTES + V3.LOCATION_OFFSET_OR_CONSTANT);
}

/** The statepoint shape (src/stackmap/statepoint.ts shapeProblem): true with shape* set, or false. */
function matchShape(locations: u32, n: u32): bool {
  if (n < DEOPT_START) return false;
  for (let i: u32 = 0; i < DEOPT_START; i++) if (kindAt(locations, i) != V3.LOCATION_KIND_CONSTANT) return false;
  const callingConvention = valueAt(locations, 0);
  const deoptCount = <i64>valueAt(locations, 2);
  if (callingConvention < 0 || callingConvention > V3.MAX_CALLING_CONVENTION) return false;
  if ((valueAt(locations, 1) & ~KNOWN_FLAGS) != 0) return false;
  if (deoptCount < 0 || <i64>DEOPT_START + deoptCount > <i64>n) return false;
  const liveStart = DEOPT_START + <u32>deoptCount;
  let allocasStart = n;
  while (allocasStart > liveStart && kindAt(locations, allocasStart - 1) == V3.LOCATION_KIND_DIRECT) allocasStart--;
  if (((allocasStart - liveStart) & 1) != 0) allocasStart++;
  if (allocasStart > n) return false;
  shapePairsStart = liveStart;
  shapePairCount = (allocasStart - liveStart) >> 1;
  shapeAllocas = n - allocasStart;
  return true;
}

/**
 * The recipe of a safepoint (src/safepoints/scan-recipes.ts compileAll, for a frame without saved
 * registers): NOT_FAST unless the frame and every pair location pass the fast-frame rule
 * (src/safepoints/fast-frame-rule.ts, its numbers from fast-frame-numbers.ts); else an equal earlier recipe or a new one. Pair p's base is
 * location `first + p * stride`, its derived location the next one when `stride` is 2.
 */
function compileRecipe(locations: u32, size: i32, first: u32, pairs: u32, stride: u32, allocas: u32): i32 {
  if (size < 0 || (size & (FAST_FRAME_ALIGN_BYTES - 1)) != 0 || allocas != FAST_FRAME_GC_ALLOCAS) return NOT_FAST;
  const span = <i64>size - raCfaOffset;
  const slotsAt = slotWords;
  for (let p: u32 = 0; p < pairs; p++) {
    const base = first + p * stride;
    for (let i = base; i < base + 2; i++) {
      const location = locations + (stride == 2 ? i : base) * V3.LOCATION_SIZE_BYTES;
      const offset = load<i32>(location + V3.LOCATION_OFFSET_OR_CONSTANT);
      const fast =
        load<u8>(location + V3.LOCATION_KIND) == V3.LOCATION_KIND_INDIRECT &&
        load<u32>(location + V3.LOCATION_DWARF_REG) == spDwarf &&
        offset >= 0 &&
        <i64>offset + FAST_ROOT_SLOT_BYTES <= span &&
        (offset & (FAST_ROOT_SLOT_BYTES - 1)) == 0;
      if (!fast) {
        slotWords = slotsAt;
        return NOT_FAST;
      }
      store<i32>(slots + (slotWords << 2), offset);
      slotWords++;
    }
  }
  return shareRecipe(size, pairs, slotsAt);
}

/** The recipe for the slot words from `slotsAt`: the previous or the first equal one, else a new one. */
function shareRecipe(size: i32, pairs: u32, slotsAt: u32): i32 {
  if (previous >= 0 && sameRecipe(previous, size, slotsAt)) {
    slotWords = slotsAt;
    return previous;
  }
  let hash: u32 = <u32>(size ^ <i32>pairs) * 0x9e3779b1;
  // scan-recipes.ts keeps this first product signed when no slot word follows, and a negative
  // number never equals the u32 its index stores: such a recipe is never found by hash.
  const neverFound = pairs == 0 && <i32>hash < 0;
  for (let w = slotsAt; w < slotWords; w++) hash = (hash ^ load<u32>(slots + (w << 2))) * 0x9e3779b1;
  const existing = neverFound ? -1 : hashGet(hash);
  if (existing >= 0 && sameRecipe(existing, size, slotsAt)) {
    slotWords = slotsAt;
    previous = existing;
    return existing;
  }
  const index = <i32>recipeCount;
  recipeCount++;
  if (existing < 0) hashAdd(hash, index);
  store<i32>(frameBytes + (<u32>index << 2), size);
  store<u32>(slotStart + (<u32>index << 2), slotsAt);
  store<u16>(pairCounts + (<u32>index << 1), <u16>pairs);
  previous = index;
  return index;
}

/** Recipe `r` has frame size `size` and the slot words from `slotsAt` to the end (no saves on this path). */
function sameRecipe(r: i32, size: i32, slotsAt: u32): bool {
  if (load<i32>(frameBytes + (<u32>r << 2)) != size) return false;
  const words = slotWords - slotsAt;
  if (<u32>load<u16>(pairCounts + (<u32>r << 1)) * 2 != words) return false;
  const from = load<u32>(slotStart + (<u32>r << 2));
  for (let w: u32 = 0; w < words; w++) if (load<i32>(slots + ((from + w) << 2)) != load<i32>(slots + ((slotsAt + w) << 2))) return false;
  return true;
}

/** The first recipe added with `hash`, or -1 (src/safepoints/recipe-hash-index.ts). */
function hashGet(hash: u32): i32 {
  let i = (hash * 0x9e3779b1) >>> hashShift;
  let recipe = load<i32>(hashIndex + (i << 3) + 4);
  while (recipe >= 0 && load<u32>(hashIndex + (i << 3)) != hash) {
    i = (i + 1) & hashMask;
    recipe = load<i32>(hashIndex + (i << 3) + 4);
  }
  return recipe;
}

function hashAdd(hash: u32, recipe: i32): void {
  let i = (hash * 0x9e3779b1) >>> hashShift;
  while (load<i32>(hashIndex + (i << 3) + 4) >= 0) i = (i + 1) & hashMask;
  store<u32>(hashIndex + (i << 3), hash);
  store<i32>(hashIndex + (i << 3) + 4, recipe);
}

/** Inserts `key` -> (module slot 0, `descriptor`) as SafepointTable.insert does; false when the key is already there. */
function insert(key: u64, descriptor: u32): bool {
  const lo = <u32>key;
  const hi = <u32>(key >> 32);
  let cell = ((lo ^ (hi * 0x85ebca6b)) * 0x9e3779b1) >>> tableShift;
  for (;;) {
    const existing = load<u64>(keys + (cell << 3));
    if (existing == 0) break;
    if (existing == key) return false;
    cell = (cell + 1) & tableMask;
  }
  store<u64>(keys + (cell << 3), key);
  store<u32>(values + (cell << 3) + 4, descriptor);
  store<f64>(addresses + (cell << 3), <f64>key);
  return true;
}
