import { InvalidArgumentError } from "../../src/errors.js";
import { scanMemory } from "../../src/memory/scan-memory.js";
import type { ScanLayout } from "../../src/safepoints/scan-layout.js";
import { findRecipesKernel } from "./load-kernel.js";

export { RECIPE_NOT_FOUND } from "../../src/safepoints/recipe-record.js";

/*
 * Many table lookups in one call of the scan kernel (walker/scan-kernel/assembly/kernel.ts
 * `findRecipes`): the probe a scan runs per frame, over a list of return addresses, each answered
 * with what the scan reads next, the recipe index of its cell. The single-address lookup of the
 * general unwinder and the registry stays SafepointTable.find in JavaScript: one call into the
 * kernel costs about as much as that whole probe (bench/HISTORY.md, "Issue 19, lookups: the kernel's probe").
 *
 * The addresses and the answers are read and written in place, so both must be views on the
 * scan memory: `addressWords` two u32 per address (lo, hi), `recipes` one i32 per address.
 */

/**
 * Writes to `recipes[i]` the recipe index of the safepoint at address i of `addressWords` in
 * `layout`'s table: >= 0, NOT_FAST (-1) for a safepoint the kernel leaves to the general
 * unwinder, RECIPE_NOT_FOUND (-2) for an address that is no safepoint (0 included).
 */
export function findRecipes(layout: ScanLayout, addressWords: Uint32Array, recipes: Int32Array): void {
  const buffer = scanMemory().buffer;
  if (addressWords.buffer !== buffer || recipes.buffer !== buffer) {
    throw new InvalidArgumentError("findRecipes", "a view outside the scan memory", "addresses and answers in the scan memory (src/memory/scan-memory.ts)");
  }
  if (addressWords.length !== 2 * recipes.length) {
    throw new InvalidArgumentError("findRecipes", `${addressWords.length} address words for ${recipes.length} answers`, "two u32 words (lo, hi) per answer");
  }
  findRecipesKernel()(layout.keysOffset, layout.mask, layout.shift, layout.recipeOfCellOffset, addressWords.byteOffset, recipes.length, recipes.byteOffset);
}
