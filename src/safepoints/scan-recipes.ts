import { LocationKind } from "../stackmap/llvm-stackmap.js";
import { CALLEE_SAVED_COUNT, DWARF_RSP, type FrameDescriptors, ROOT_TYPE_NONE, ROOT_TYPE_POINTER } from "./frame-descriptors.js";

/*
 * Scan recipes: each safepoint of a registered module compiled once, at registration, into what
 * the fast scan loop (walker/fast-scan.ts) needs and nothing else; a registry snapshot joins the
 * recipes of all its modules into one set (`concatScanRecipes`) so the loop reads columns that
 * do not depend on the module.
 *
 * Per safepoint i (indices as in the module's FrameDescriptors; in a joined set, the module's
 * first index + i):
 *   recipe[i]        the index of its recipe, or NOT_FAST when the fast loop must hand the frame
 *                    to the general unwinder: no static size (frame-pointer climbs, dynamic
 *                    frames), a size that is not a multiple of 8 (the caller's SP would be
 *                    misaligned), gc allocas, or any root that is not an `Indirect [rsp + off]`
 *                    slot inside [sp, sp + size + 8) (callee-saved registers, CFA- or rbp-relative
 *                    slots, typed plimmix roots, constants, Direct locations)
 * Per recipe r (identical recipes are shared: the call sites of one function usually have one
 * frame size, spill the same slots and save the same registers):
 *   frameBytes[r]    distance from SP to the return-address slot (the static frame size, a
 *                    multiple of 8)
 *   pairCount[r] (base, derived) pairs at slotStart[r] in `slots`: two SP-relative byte offsets
 *                    each, 8-aligned, in the map's pair order
 *   saveCount[r] callee-saved registers the frame saved, at saveStart[r] in `saves`: (k, offset)
 *                    each, k in CALLEE_SAVED_DWARF order, offset from the CFA of the save slot
 *
 * Bytes on the scan path per safepoint: 4 (recipe) plus its share of the recipes.
 */

export const NOT_FAST = -1;

export class ScanRecipes {
  constructor(
    readonly recipe: Int32Array,
    readonly frameBytes: Int32Array,
    readonly slotStart: Uint32Array,
    readonly pairCount: Uint16Array,
    readonly slots: Int32Array,
    readonly saveStart: Uint32Array,
    readonly saveCount: Uint8Array,
    readonly saves: Int32Array,
  ) {}

  static readonly EMPTY = new ScanRecipes(new Int32Array(0), new Int32Array(0), new Uint32Array(0), new Uint16Array(0), new Int32Array(0), new Uint32Array(0), new Uint8Array(0), new Int32Array(0));

  /** Safepoints covered. */
  get count(): number {
    return this.recipe.length;
  }

  get sizeBytes(): number {
    return (
      this.recipe.byteLength +
      this.frameBytes.byteLength +
      this.slotStart.byteLength +
      this.pairCount.byteLength +
      this.slots.byteLength +
      this.saveStart.byteLength +
      this.saveCount.byteLength +
      this.saves.byteLength
    );
  }
}

/** A growable Int32 list (registration only: amortised doubling, no allocation per element). */
class IntList {
  words = new Int32Array(64);
  length = 0;
  reserve(extra: number): void {
    if (this.length + extra <= this.words.length) return;
    const grown = new Int32Array(Math.max(this.words.length * 2, this.length + extra));
    grown.set(this.words.subarray(0, this.length));
    this.words = grown;
  }
  push(value: number): void {
    this.reserve(1);
    this.words[this.length++] = value;
  }
  toArray(): Int32Array {
    return this.words.slice(0, this.length);
  }
}

/** Compiles every safepoint of `d` (one pass; no allocation per safepoint). */
export function compileScanRecipes(d: FrameDescriptors): ScanRecipes {
  const n = d.count;
  const spUntyped = LocationKind.Indirect | (ROOT_TYPE_NONE << 4) | (DWARF_RSP << 8);
  const spPointer = LocationKind.Indirect | (ROOT_TYPE_POINTER << 4) | (DWARF_RSP << 8);
  const recipe = new Int32Array(n);
  // Per recipe: frameBytes, slotStart, pairCount, saveStart, saveCount.
  const perRecipe = new IntList();
  const slots = new IntList();
  const saves = new IntList();
  const byKey = new Map<number, number>();
  const locations = d.locations;
  const savedRegOffsets = d.savedRegOffsets;
  for (let i = 0; i < n; i++) {
    const size = d.frameSizeBytes[i]!;
    const pairs = d.pairCount[i]!;
    // A multiple of 8: the fast loop keeps SP as an even word index (walker/fast-scan.ts).
    let fast = size >= 0 && (size & 7) === 0 && d.allocaCount[i] === 0;
    const slotsAt = slots.length;
    const savesAt = saves.length;
    slots.reserve(2 * pairs);
    for (let p = 0; fast && p < pairs; p++) {
      for (let k = 0; k < 2; k++) {
        const loc = d.pairs[(d.pairStart[i]! + p) * 2 + k]!;
        const shape = locations[loc * 2]! & 0xffff;
        const off = locations[loc * 2 + 1]!;
        if ((shape !== spUntyped && shape !== spPointer) || off < 0 || off + 8 > size + 8 || (off & 7) !== 0) fast = false;
        slots.words[slots.length++] = off;
      }
    }
    if (!fast) {
      slots.length = slotsAt;
      recipe[i] = NOT_FAST;
      continue;
    }
    for (let k = 0; k < CALLEE_SAVED_COUNT; k++) {
      const offset = savedRegOffsets[i * CALLEE_SAVED_COUNT + k]!;
      if (offset === 0) continue;
      saves.push(k);
      saves.push(offset);
    }
    const saveCount = (saves.length - savesAt) / 2;
    // Share with the first recipe of the same hash when equal (no string keys: this runs once
    // per safepoint at registration, inside the parse + index budget).
    let key = Math.imul(size ^ pairs, 0x9e3779b1) ^ saveCount;
    for (let w = slotsAt; w < slots.length; w++) key = Math.imul(key ^ slots.words[w]!, 0x9e3779b1) >>> 0;
    for (let w = savesAt; w < saves.length; w++) key = Math.imul(key ^ saves.words[w]!, 0x85ebca6b) >>> 0;
    const existing = byKey.get(key);
    if (existing !== undefined) {
      const at = existing * 5;
      const r = perRecipe.words;
      if (
        r[at] === size &&
        sameWords(slots.words, r[at + 1]!, 2 * r[at + 2]!, slotsAt, slots.length - slotsAt) &&
        sameWords(saves.words, r[at + 3]!, 2 * r[at + 4]!, savesAt, saves.length - savesAt)
      ) {
        slots.length = slotsAt;
        saves.length = savesAt;
        recipe[i] = existing;
        continue;
      }
    }
    const index = perRecipe.length / 5;
    if (existing === undefined) byKey.set(key, index);
    perRecipe.reserve(5);
    perRecipe.push(size);
    perRecipe.push(slotsAt);
    perRecipe.push(pairs);
    perRecipe.push(savesAt);
    perRecipe.push(saveCount);
    recipe[i] = index;
  }
  const recipes = perRecipe.length / 5;
  const frameBytes = new Int32Array(recipes);
  const slotStart = new Uint32Array(recipes);
  const pairCount = new Uint16Array(recipes);
  const saveStart = new Uint32Array(recipes);
  const saveCounts = new Uint8Array(recipes);
  for (let r = 0; r < recipes; r++) {
    frameBytes[r] = perRecipe.words[r * 5]!;
    slotStart[r] = perRecipe.words[r * 5 + 1]!;
    pairCount[r] = perRecipe.words[r * 5 + 2]!;
    saveStart[r] = perRecipe.words[r * 5 + 3]!;
    saveCounts[r] = perRecipe.words[r * 5 + 4]!;
  }
  return new ScanRecipes(recipe, frameBytes, slotStart, pairCount, slots.toArray(), saveStart, saveCounts, saves.toArray());
}

/**
 * The recipes of several modules as one set: module m's safepoint i is `firstSafepoint[m] + i`
 * (its recipe index, slot and save offsets shifted past the modules before it).
 */
export function concatScanRecipes(parts: readonly ScanRecipes[]): { recipes: ScanRecipes; firstSafepoint: Int32Array } {
  if (parts.length === 1) return { recipes: parts[0]!, firstSafepoint: new Int32Array(1) };
  const firstSafepoint = new Int32Array(parts.length);
  let safepoints = 0;
  let recipes = 0;
  let slotWords = 0;
  let saveWords = 0;
  parts.forEach((p, m) => {
    firstSafepoint[m] = safepoints;
    safepoints += p.count;
    recipes += p.frameBytes.length;
    slotWords += p.slots.length;
    saveWords += p.saves.length;
  });
  const out = new ScanRecipes(
    new Int32Array(safepoints),
    new Int32Array(recipes),
    new Uint32Array(recipes),
    new Uint16Array(recipes),
    new Int32Array(slotWords),
    new Uint32Array(recipes),
    new Uint8Array(recipes),
    new Int32Array(saveWords),
  );
  let recipeBase = 0;
  let slotBase = 0;
  let saveBase = 0;
  parts.forEach((p, m) => {
    const first = firstSafepoint[m]!;
    for (let i = 0; i < p.count; i++) {
      const r = p.recipe[i]!;
      out.recipe[first + i] = r === NOT_FAST ? NOT_FAST : r + recipeBase;
    }
    for (let r = 0; r < p.frameBytes.length; r++) {
      out.frameBytes[recipeBase + r] = p.frameBytes[r]!;
      out.slotStart[recipeBase + r] = p.slotStart[r]! + slotBase;
      out.pairCount[recipeBase + r] = p.pairCount[r]!;
      out.saveStart[recipeBase + r] = p.saveStart[r]! + saveBase;
      out.saveCount[recipeBase + r] = p.saveCount[r]!;
    }
    out.slots.set(p.slots, slotBase);
    out.saves.set(p.saves, saveBase);
    recipeBase += p.frameBytes.length;
    slotBase += p.slots.length;
    saveBase += p.saves.length;
  });
  return { recipes: out, firstSafepoint };
}

function sameWords(words: Int32Array, a: number, aWords: number, b: number, bWords: number): boolean {
  if (aWords !== bWords) return false;
  for (let w = 0; w < aWords; w++) if (words[a + w] !== words[b + w]) return false;
  return true;
}
