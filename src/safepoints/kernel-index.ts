import { scanKernelExports } from "../memory/scan-kernel-module.js";
import { REGION_ALIGN_BYTES, type ScanRegion, scanMemory } from "../memory/scan-memory.js";
import { DWARF_RSP, RA_CFA_OFFSET_BYTES } from "./frame-descriptors.js";
import {
  JOB_BIAS_HI,
  JOB_BIAS_LO,
  JOB_FRAME_BYTES,
  JOB_HASH_INDEX,
  JOB_HASH_LOG_CAPACITY,
  JOB_INDEXED,
  JOB_LOCATIONS,
  JOB_LOG_CAPACITY,
  JOB_PAIR_COUNT,
  JOB_RA_CFA_OFFSET,
  JOB_RECIPE_COUNT,
  JOB_RECIPE_OF_SAFEPOINT,
  JOB_RECORDS,
  JOB_SECTION,
  JOB_SECTION_BYTES,
  JOB_SLOTS,
  JOB_SLOT_START,
  JOB_SLOT_WORDS,
  JOB_SP_DWARF,
  JOB_TABLE_ADDRESSES,
  JOB_TABLE_KEYS,
  JOB_TABLE_VALUES,
  JOB_WORDS,
} from "./kernel-index-layout.js";
import { SafepointTable } from "./safepoint-table.js";
import { ScanRecipes } from "./scan-recipes.js";
import { RegistrationLease, takeBuffer } from "./registration-pool.js";

/*
 * A `.llvm_stackmaps` section indexed by the scan kernel (walker/scan-kernel/assembly/
 * parse-stackmap.ts): the bytes are copied into a workspace in the scan memory, the kernel decodes
 * and checks every record and writes the safepoint table's columns and the scan recipes there, and
 * they are copied out as the SafepointTable and ScanRecipes that `SafepointRegistry.register`
 * makes for the same section registered alone, without unwind rows, as an x86-64 map (the
 * runtime's `gc_init` path). The kernel declines (undefined here) every section the general
 * decoder must decide, malformed ones included: that path stays the one source of record
 * semantics and of every error message.
 *
 * `registerStackMapBytes` (src/loader/register-maps.ts) registers through it into an empty
 * registry; the descriptors the general unwinder and reports read are then decoded a block of
 * safepoints at a time on first use (src/loader/deferred-llvm-descriptors.ts; bench/HISTORY.md, "Issue 19, item 4:
 * registration through the kernel index"). The section fuzzer compares the index, the deferred
 * descriptors and registration's errors with the general path on every mutation.
 *
 * The workspace (job block, section copy, columns, the recipe hash index) is one scan-memory
 * region kept for the process and grown on demand: a fresh region would be zero-filled on every
 * call; the kernel clears what it reads.
 */

export interface KernelIndex {
  readonly safepoints: number;
  readonly table: SafepointTable;
  readonly recipes: ScanRecipes;
  /** A copy of the section, in the same allocation as the columns (nobody else holds it). */
  readonly section: Uint8Array;
  /** The two buffers all of the above lie in, to hand back when the module is released (src/safepoints/registration-pool.ts). */
  readonly lease: RegistrationLease;
}

type JobCall = (job: number) => number;

const JOB_BLOCK_BYTES = align8(JOB_WORDS * 4);
const MIN_HASH_LOG_CAPACITY = 6;

let workspace: ScanRegion | undefined;

/**
 * The workspace's columns, in order: table keys, values, addresses (cells x 8 bytes each), recipe of
 * each safepoint (records x 4), frame bytes, slot start (records x 4 each), pair count (records x 2),
 * slots (locations x 8), the recipe hash index. The job slot of each, and its offset once sized
 * (scratch reused by every call: registration makes no array of its own for them).
 */
const COLUMN_SLOTS = [
  JOB_TABLE_KEYS,
  JOB_TABLE_VALUES,
  JOB_TABLE_ADDRESSES,
  JOB_RECIPE_OF_SAFEPOINT,
  JOB_FRAME_BYTES,
  JOB_SLOT_START,
  JOB_PAIR_COUNT,
  JOB_SLOTS,
  JOB_HASH_INDEX,
] as const;
const columnAt = new Float64Array(COLUMN_SLOTS.length);

/** The table and recipes of `bytes` as one module at `loadBias`, or undefined when the general path must decide. */
export function indexStackMapInKernel(bytes: Uint8Array, loadBias: number): KernelIndex | undefined {
  const kernel = scanKernelExports();
  const sectionBytes = align8(bytes.byteLength);
  let job = workspaceAt(JOB_BLOCK_BYTES + sectionBytes, 0);
  if (job < 0) return undefined;
  const memory = scanMemory();
  memory.bytes.set(bytes, job + JOB_BLOCK_BYTES);
  const words = memory.words;
  const w = job >>> 2;
  words[w + JOB_SECTION] = job + JOB_BLOCK_BYTES;
  words[w + JOB_SECTION_BYTES] = bytes.byteLength;
  if ((kernel["measureStackMap"] as JobCall)(job) !== JOB_INDEXED) return undefined;
  const records = words[w + JOB_RECORDS]!;
  const locations = words[w + JOB_LOCATIONS]!;
  const logCapacity = SafepointTable.logCapacityFor(records);
  const cells = 2 ** logCapacity;
  let hashLog = MIN_HASH_LOG_CAPACITY;
  while (2 ** hashLog < 2 * records) hashLog++;
  const firstColumn = job + JOB_BLOCK_BYTES + sectionBytes;
  const end = layOutColumns(firstColumn - job, cells, records, locations, hashLog);
  job = workspaceAt(end, JOB_BLOCK_BYTES + sectionBytes);
  if (job < 0) return undefined;
  const j = job >>> 2;
  words[j + JOB_SECTION] = job + JOB_BLOCK_BYTES;
  words[j + JOB_SECTION_BYTES] = bytes.byteLength;
  setBias(words, j, loadBias);
  words[j + JOB_SP_DWARF] = DWARF_RSP;
  words[j + JOB_RA_CFA_OFFSET] = RA_CFA_OFFSET_BYTES >>> 0;
  words[j + JOB_LOG_CAPACITY] = logCapacity;
  for (let k = 0; k < COLUMN_SLOTS.length; k++) words[j + COLUMN_SLOTS[k]!] = job + columnAt[k]!;
  words[j + JOB_HASH_LOG_CAPACITY] = hashLog;
  if ((kernel["indexStackMap"] as JobCall)(job) !== JOB_INDEXED) return undefined;
  return copyOut(bytes, job, cells, records, words[j + JOB_RECIPE_COUNT]!, words[j + JOB_SLOT_WORDS]!);
}

/** Sets columnAt (offsets from the job) from `from`, each column 8-aligned; returns the end. */
function layOutColumns(from: number, cells: number, records: number, locations: number, hashLog: number): number {
  let next = from;
  for (let k = 0; k < COLUMN_SLOTS.length; k++) {
    columnAt[k] = next;
    const bytes = k < 3 ? cells * 8 : k < 6 ? records * 4 : k === 6 ? records * 2 : k === 7 ? locations * 8 : 2 ** hashLog * 8;
    next += align8(bytes);
  }
  return next;
}

function setBias(words: Uint32Array, j: number, loadBias: number): void {
  if (loadBias === 0) {
    words[j + JOB_BIAS_LO] = 0;
    words[j + JOB_BIAS_HI] = 0;
    return;
  }
  const biasBits = BigInt.asUintN(64, BigInt(loadBias));
  words[j + JOB_BIAS_LO] = Number(biasBits & 0xffff_ffffn);
  words[j + JOB_BIAS_HI] = Number(biasBits >> 32n);
}

/**
 * The section, the table and the recipes as ordinary typed arrays (the workspace is reused by the
 * next registration), in TWO buffers, not zeroed (every byte exposed is written here): the
 * table [keys | values | addresses], and [section | recipe of each safepoint | frame bytes | slot
 * start | save start | slots | pair count | save count]. Two instead of ten: a fresh one is a
 * malloc (an mmap past glibc's threshold) whose pages fault when first written, freed only when
 * the garbage collector finds the registry dead (bench/HISTORY.md, issue 34), so both come from
 * the pool of released registrations when it has their size class (src/safepoints/registration-pool.ts).
 * The table has its own so that it is freed once a later registration replaces it with a joined
 * table, while the module still holds its recipes and section.
 */
function copyOut(bytes: Uint8Array, job: number, cells: number, records: number, recipeCount: number, slotWords: number): KernelIndex {
  const shared = scanMemory().buffer;
  const tableBuffer = new Uint8Array(takeBuffer(24 * cells), 0, 24 * cells);
  tableBuffer.set(new Uint8Array(shared, job + columnAt[0]!, 24 * cells));
  const t = tableBuffer.buffer;
  const table = SafepointTable.fromColumns(
    new Uint32Array(t, 0, 2 * cells),
    new Uint32Array(t, 8 * cells, 2 * cells),
    new Float64Array(t, 16 * cells, cells),
    records,
  );
  const sectionBytes = align8(bytes.byteLength);
  const ownBytes = sectionBytes + 4 * records + 12 * recipeCount + 4 * slotWords + 3 * recipeCount;
  const own = new Uint8Array(takeBuffer(ownBytes), 0, ownBytes);
  own.set(bytes, 0);
  const buffer = own.buffer;
  let at = sectionBytes;
  const recipeOf = copyColumn(Int32Array, shared, job + columnAt[3]!, records, buffer, at);
  const frameBytes = copyColumn(Int32Array, shared, job + columnAt[4]!, recipeCount, buffer, (at += 4 * records));
  const slotStart = copyColumn(Uint32Array, shared, job + columnAt[5]!, recipeCount, buffer, (at += 4 * recipeCount));
  // No unwind rows on this path: no frame has saved registers.
  const saveStart = new Uint32Array(buffer, (at += 4 * recipeCount), recipeCount).fill(0);
  const slots = copyColumn(Int32Array, shared, job + columnAt[7]!, slotWords, buffer, (at += 4 * recipeCount));
  const pairCount = copyColumn(Uint16Array, shared, job + columnAt[6]!, recipeCount, buffer, (at += 4 * slotWords));
  const saveCount = new Uint8Array(buffer, at + 2 * recipeCount, recipeCount).fill(0);
  const recipes = new ScanRecipes(recipeOf, frameBytes, slotStart, pairCount, slots, saveStart, saveCount, new Int32Array(0));
  const lease = new RegistrationLease([t, buffer]);
  return { safepoints: records, table, recipes, section: own.subarray(0, bytes.byteLength), lease };
}

type ColumnKind<T> = { new (buffer: ArrayBufferLike, byteOffset: number, length: number): T & { set(source: ArrayLike<number>): void } };

/** `length` elements at `from` in the scan memory, copied to `to` in `buffer`. */
function copyColumn<T>(kind: ColumnKind<T>, shared: SharedArrayBuffer, from: number, length: number, buffer: ArrayBuffer, to: number): T {
  const column = new kind(buffer, to, length);
  column.set(new kind(shared, from, length) as unknown as ArrayLike<number>);
  return column;
}

/**
 * The workspace's offset, at least `sizeBytes` long; a larger one keeps its first `keepBytes`.
 * -1 when the scan memory has no room for it (the stacks and heap come first): the general path
 * registers the section instead.
 */
function workspaceAt(sizeBytes: number, keepBytes: number): number {
  if (workspace !== undefined && workspace.sizeBytes >= sizeBytes) return workspace.offset;
  const old = workspace;
  const grown = Math.max(sizeBytes, 2 * (old?.sizeBytes ?? 0));
  // Rounding up to whole regions and aligning the start take at most two regions more.
  if (scanMemory().largestFreeBytes < grown + 2 * REGION_ALIGN_BYTES) return -1;
  workspace = scanMemory().allocate(grown, "stack map index workspace");
  if (old !== undefined) {
    scanMemory().bytes.copyWithin(workspace.offset, old.offset, old.offset + keepBytes);
    old.release();
  }
  return workspace.offset;
}

function align8(bytes: number): number {
  return Math.ceil(bytes / 8) * 8;
}
