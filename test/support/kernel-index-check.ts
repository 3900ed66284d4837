import { DeferredLlvmDescriptors, RECORD_BLOCK_SIZE } from "../../src/loader/deferred-llvm-descriptors.js";
import { buildLlvmDescriptors } from "../../src/loader/llvm-map-loader.js";
import { registerStackMapBytes } from "../../src/loader/register-maps.js";
import type { FrameDescriptors } from "../../src/safepoints/frame-descriptors.js";
import { indexStackMapInKernel } from "../../src/safepoints/kernel-index.js";
import { SafepointRegistry, type RegistrySnapshot } from "../../src/safepoints/registry.js";
import type { ScanRecipes } from "../../src/safepoints/scan-recipes.js";
import { parseStackMapSection } from "../../src/stackmap/llvm-stackmap.js";

/*
 * The scan kernel's stack map index (src/safepoints/kernel-index.ts) against the general path
 * (decoder, descriptors, SafepointRegistry.register) on one section: when the kernel indexes it,
 * the general path must accept it and make the same table (every cell) and recipes (every
 * column) when it registers the section alone, and the descriptors that registration then decodes
 * on demand (src/loader/deferred-llvm-descriptors.ts) must equal the general path's, each
 * safepoint in its block (blocks of several sizes) and all of them at once. A difference throws a plain Error (the fuzzers count
 * it as a failure, unlike the RootwalkError of a rejected section); a section the general path
 * rejects throws its RootwalkError.
 */
export function checkKernelIndex(bytes: Uint8Array, loadBias: number): "indexed" | "declined" {
  const indexed = indexStackMapInKernel(bytes, loadBias);
  let general: RegistrySnapshot;
  try {
    const registry = new SafepointRegistry();
    registry.register({ name: "general", format: "llvm-v3", descriptors: buildLlvmDescriptors(parseStackMapSection(bytes)), loadBias, contentKey: "general" });
    general = registry.snapshot();
  } catch (e) {
    if (indexed !== undefined) throw new Error(`the kernel indexed a section the general path rejects (${(e as Error).message})`, { cause: e });
    throw e;
  }
  if (indexed === undefined) return "declined";
  const module = general.moduleBySlot[0]!;
  const differs =
    tableDifference(indexed.table, general.table) ??
    recipesDifference(indexed.recipes, module.recipes) ??
    DEFERRED_BLOCK_SIZES.map((size) => deferredDifference(new DeferredLlvmDescriptors(bytes, indexed.safepoints, loadBias, size), module.descriptors)).find(
      (d) => d !== undefined,
    );
  if (differs !== undefined) throw new Error(`the kernel's index differs from the general path: ${differs}`);
  return "indexed";
}

/**
 * Block sizes the deferred descriptors are checked with: blocks of one and of three safepoints
 * (which cross functions and blobs in the fuzzers' small sections) and the default.
 */
const DEFERRED_BLOCK_SIZES = [1, 3, RECORD_BLOCK_SIZE];

/**
 * `registerStackMapBytes` (the scan kernel's index and deferred descriptors when the kernel takes
 * the section) against the general path into an empty registry: the same safepoints, or the same
 * error (class and message) at registration. Returns the safepoints; rethrows the general path's
 * RootwalkError; a difference throws a plain Error.
 */
export function checkRegistration(bytes: Uint8Array): number {
  const outcome = (register: (registry: SafepointRegistry) => void): { safepoints: number } | { error: Error } => {
    const registry = new SafepointRegistry();
    try {
      register(registry);
      return { safepoints: registry.snapshot().safepointCount };
    } catch (e) {
      return { error: e as Error };
    }
  };
  const general = outcome((r) => r.register({ name: "s", format: "llvm-v3", descriptors: buildLlvmDescriptors(parseStackMapSection(bytes)), contentKey: "s" }));
  const registered = outcome((r) => registerStackMapBytes(r, bytes, { name: "s" }));
  const spell = (o: typeof general): string => ("error" in o ? `${o.error.constructor.name}: ${o.error.message}` : `${o.safepoints} safepoints`);
  if (spell(general) !== spell(registered)) throw new Error(`registerStackMapBytes: ${spell(registered)}; the general path: ${spell(general)}`);
  if ("error" in general) throw general.error;
  return general.safepoints;
}

/** The deferred descriptors against `expected`: every safepoint in its block against its row, then all at once. */
export function deferredDifference(deferred: DeferredLlvmDescriptors, expected: FrameDescriptors): string | undefined {
  if (deferred.count !== expected.count) return `deferred count ${deferred.count}, expected ${expected.count}`;
  if (!sameFunctions(deferred.functions(), expected.functions)) return "deferred functions";
  for (let i = 0; i < expected.count; i++) {
    const differs = rowDifference(deferred.descriptorsOf(i), deferred.rowOf(i), expected, i);
    if (differs !== undefined) return `deferred safepoint ${i}: ${differs}`;
  }
  return deferred.all().sameAs(expected, 0) ? undefined : "deferred all() is not the general path's descriptors";
}

function sameFunctions(a: FrameDescriptors["functions"], b: FrameDescriptors["functions"]): boolean {
  return a.length === b.length && a.every((f, k) => f.name === b[k]!.name && f.address === b[k]!.address && f.stackSizeBytes === b[k]!.stackSizeBytes);
}

/** Row `i` of `a` against row `j` of `b`: every column, the locations and pairs by content. */
function rowDifference(a: FrameDescriptors, i: number, b: FrameDescriptors, j: number): string | undefined {
  const rows = [
    "returnAddress",
    "frameSizeBytes",
    "stackSizeBytes",
    "cfaRegister",
    "cfaOffsetBytes",
    "flags",
    "functionIndex",
    "blobIndex",
    "recordIndex",
    "deoptCount",
    "pairCount",
    "allocaCount",
  ] as const;
  for (const column of rows) if (a[column][i] !== b[column][j]) return `${column} ${a[column][i]} vs ${b[column][j]}`;
  const saved = a.architecture.calleeSavedDwarf.length;
  for (let k = 0; k < saved; k++) if (a.savedRegOffsets[i * saved + k] !== b.savedRegOffsets[j * saved + k]) return `savedRegOffsets[${k}]`;
  const locationWords = (d: FrameDescriptors, loc: number): string => `${d.locations[2 * loc]}/${d.locations[2 * loc + 1]}`;
  // The deopt values at locStart, the allocas after the pairs' locations (statepoints only).
  const allocasAt = (d: FrameDescriptors, r: number): number => d.locStart[r]! + d.deoptCount[r]! + 2 * d.pairCount[r]!;
  for (let k = 0; k < a.deoptCount[i]!; k++) {
    if (locationWords(a, a.locStart[i]! + k) !== locationWords(b, b.locStart[j]! + k)) return `deopt location ${k}`;
  }
  for (let k = 0; k < a.allocaCount[i]!; k++) {
    if (locationWords(a, allocasAt(a, i) + k) !== locationWords(b, allocasAt(b, j) + k)) return `alloca location ${k}`;
  }
  for (let p = 0; p < 2 * a.pairCount[i]!; p++) {
    if (locationWords(a, a.pairs[2 * a.pairStart[i]! + p]!) !== locationWords(b, b.pairs[2 * b.pairStart[j]! + p]!)) return `pair word ${p}`;
  }
  return undefined;
}

function tableDifference(a: RegistrySnapshot["table"], b: RegistrySnapshot["table"]): string | undefined {
  if (a.size !== b.size || a.capacity !== b.capacity || a.hashShift !== b.hashShift) {
    return `table size/capacity ${a.size}/${a.capacity}, expected ${b.size}/${b.capacity}`;
  }
  const cell = firstDifference(a.keys, b.keys) ?? firstDifference(a.values, b.values);
  if (cell !== undefined) return `table word ${cell}`;
  // The addresses column, through what reads it.
  for (const [address] of b.entriesInOrder()) if (a.find(address) !== b.find(address)) return `find(${address})`;
  return undefined;
}

function recipesDifference(a: ScanRecipes, b: ScanRecipes): string | undefined {
  const columns = ["recipe", "frameBytes", "slotStart", "pairCount", "slots", "saveStart", "saveCount", "saves"] as const;
  for (const column of columns) {
    const at = firstDifference(a[column], b[column]);
    if (at !== undefined) return `recipes.${column}[${at}] (${a[column][at]} vs ${b[column][at]}, lengths ${a[column].length} vs ${b[column].length})`;
  }
  return undefined;
}

function firstDifference(a: ArrayLike<number>, b: ArrayLike<number>): number | undefined {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return undefined;
}
