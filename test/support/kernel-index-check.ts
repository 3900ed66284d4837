import { buildLlvmDescriptors } from "../../src/loader/llvm-map-loader.js";
import { indexStackMapInKernel } from "../../src/safepoints/kernel-index.js";
import { SafepointRegistry, type RegistrySnapshot } from "../../src/safepoints/registry.js";
import type { ScanRecipes } from "../../src/safepoints/scan-recipes.js";
import { parseStackMapSection } from "../../src/stackmap/llvm-stackmap.js";

/*
 * The scan kernel's stack map index (src/safepoints/kernel-index.ts) against the general path
 * (decoder, descriptors, SafepointRegistry.register) on one section: when the kernel indexes it,
 * the general path must accept it and make the same table (every cell) and recipes (every
 * column) when it registers the section alone. A difference throws a plain Error (the fuzzers count
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
  const differs = tableDifference(indexed.table, general.table) ?? recipesDifference(indexed.recipes, general.moduleBySlot[0]!.recipes);
  if (differs !== undefined) throw new Error(`the kernel's index differs from the general path: ${differs}`);
  return "indexed";
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
