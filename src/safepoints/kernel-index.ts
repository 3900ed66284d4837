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
}

type JobCall = (job: number) => number;

const JOB_BLOCK_BYTES = align8(JOB_WORDS * 4);
const MIN_HASH_LOG_CAPACITY = 6;

let workspace: ScanRegion | undefined;

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
  // Column offsets from the section's end, each 8-aligned.
  const columns = [cells * 8, cells * 8, cells * 8, records * 4, records * 4, records * 4, records * 2, locations * 8, 2 ** hashLog * 8].map(align8);
  const total = columns.reduce((a, b) => a + b, 0);
  job = workspaceAt(JOB_BLOCK_BYTES + sectionBytes + total, JOB_BLOCK_BYTES + sectionBytes);
  if (job < 0) return undefined;
  const at = columnOffsets(job + JOB_BLOCK_BYTES + sectionBytes, columns);
  const j = job >>> 2;
  const biasBits = BigInt.asUintN(64, BigInt(loadBias));
  words[j + JOB_SECTION] = job + JOB_BLOCK_BYTES;
  words[j + JOB_SECTION_BYTES] = bytes.byteLength;
  words[j + JOB_BIAS_LO] = Number(biasBits & 0xffff_ffffn);
  words[j + JOB_BIAS_HI] = Number(biasBits >> 32n);
  words[j + JOB_SP_DWARF] = DWARF_RSP;
  words[j + JOB_RA_CFA_OFFSET] = RA_CFA_OFFSET_BYTES >>> 0;
  words[j + JOB_LOG_CAPACITY] = logCapacity;
  [
    JOB_TABLE_KEYS,
    JOB_TABLE_VALUES,
    JOB_TABLE_ADDRESSES,
    JOB_RECIPE_OF_SAFEPOINT,
    JOB_FRAME_BYTES,
    JOB_SLOT_START,
    JOB_PAIR_COUNT,
    JOB_SLOTS,
    JOB_HASH_INDEX,
  ].forEach((slot, k) => (words[j + slot] = at[k]!));
  words[j + JOB_HASH_LOG_CAPACITY] = hashLog;
  if ((kernel["indexStackMap"] as JobCall)(job) !== JOB_INDEXED) return undefined;
  return copyOut(at, cells, records, words[j + JOB_RECIPE_COUNT]!, words[j + JOB_SLOT_WORDS]!);
}

/** The table and recipes as ordinary typed arrays (the workspace is reused by the next registration). */
function copyOut(at: number[], cells: number, records: number, recipeCount: number, slotWords: number): KernelIndex {
  const buffer = scanMemory().buffer;
  const table = SafepointTable.fromColumns(
    new Uint32Array(buffer, at[0]!, 2 * cells).slice(),
    new Uint32Array(buffer, at[1]!, 2 * cells).slice(),
    new Float64Array(buffer, at[2]!, cells).slice(),
    records,
  );
  const recipes = new ScanRecipes(
    new Int32Array(buffer, at[3]!, records).slice(),
    new Int32Array(buffer, at[4]!, recipeCount).slice(),
    new Uint32Array(buffer, at[5]!, recipeCount).slice(),
    new Uint16Array(buffer, at[6]!, recipeCount).slice(),
    new Int32Array(buffer, at[7]!, slotWords).slice(),
    // No unwind rows on this path: no frame has saved registers.
    new Uint32Array(recipeCount),
    new Uint8Array(recipeCount),
    new Int32Array(0),
  );
  return { safepoints: records, table, recipes };
}

function columnOffsets(from: number, sizes: readonly number[]): number[] {
  let next = from;
  return sizes.map((size) => {
    const offset = next;
    next += size;
    return offset;
  });
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
