import type { ScanRecipes } from "../src/safepoints/scan-recipes.js";
import type { NativeSamples } from "./native-refs.js";
import { ReferenceMismatchError } from "./walk-reference.js";

/*
 * The Parse cases' output check (issue 34): bench/native/parse-ref.cpp in mode `index` registers the
 * same section as rootwalk's `registerStackMapBytes` (the kernel index's checks, recipes and table,
 * and a copy of the section) and prints what it built: the safepoint count, the recipe count, the
 * slot words and a checksum of the recipe columns. This compares them with the registry's module,
 * every run; a difference stops the bench with exit 4, as the Walk cases' check does.
 */

/** parse-ref.cpp's recipeChecksum over rootwalk's columns: s = s * 31 + v (mod 2^64), in its order. */
export function recipeChecksum(recipes: ScanRecipes, safepoints: number): bigint {
  let sum = 0n;
  const fold = (value: bigint): void => {
    sum = BigInt.asUintN(64, sum * 31n + value);
  };
  for (let i = 0; i < safepoints; i++) fold(BigInt(recipes.recipe[i]!));
  for (let r = 0; r < recipes.frameBytes.length; r++) fold(BigInt(recipes.frameBytes[r]!) + BigInt(recipes.slotStart[r]!) + BigInt(recipes.pairCount[r]!));
  for (let w = 0; w < recipes.slots.length; w++) fold(BigInt(recipes.slots[w]!));
  return sum;
}

/** Throws ReferenceMismatchError naming the first count or checksum where the C registration differs from rootwalk's. */
export function checkRegistrationOutputs(caseName: string, safepoints: number, recipes: ScanRecipes, ref: NativeSamples): void {
  const ours: [string, string][] = [
    ["safepoints", String(safepoints)],
    ["recipes", String(recipes.frameBytes.length)],
    ["slotWords", String(recipes.slots.length)],
    ["recipeChecksum", String(recipeChecksum(recipes, safepoints))],
  ];
  for (const [field, value] of ours) {
    if (String(ref[field]) !== value) {
      throw new ReferenceMismatchError(`${caseName}: the C registration's ${field} is ${String(ref[field])}, rootwalk's ${value}`);
    }
  }
}
