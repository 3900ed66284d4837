import { LOCATION_SHAPE_MASK, frameSpanBytes, isFastFrame, isFastRootLocation } from "./fast-frame-rule.js";
import type { FrameDescriptors } from "./frame-descriptors.js";
import { RecipeHashIndex } from "./recipe-hash-index.js";
import { NOT_FAST } from "./recipe-record.js";

/*
 * Scan recipes: each safepoint of a registered module compiled once, at registration, into what
 * the fast scan loop (walker/fast-scan.ts) needs and nothing else; a registry snapshot joins the
 * recipes of all its modules into one set (`concatScanRecipes`) so the loop reads columns that
 * do not depend on the module.
 *
 * Per safepoint i (indices as in the module's FrameDescriptors; in a joined set, the module's
 * first index + i):
 *   recipe[i]        the index of its recipe, or NOT_FAST when the fast loop must hand the frame
 *                    to the general unwinder: when it is not a fast frame with only fast root
 *                    locations (src/safepoints/fast-frame-rule.ts: frame-pointer climbs, dynamic
 *                    frames, gc allocas, roots in callee-saved registers, CFA- or rbp-relative
 *                    slots, typed plimmix roots, constants, Direct locations go to the unwinder)
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

export { NOT_FAST };

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

  static readonly EMPTY = new ScanRecipes(
    new Int32Array(0),
    new Int32Array(0),
    new Uint32Array(0),
    new Uint16Array(0),
    new Int32Array(0),
    new Uint32Array(0),
    new Uint8Array(0),
    new Int32Array(0),
  );

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
  const c = new RecipeCompiler(d.count);
  compileAll(d, c);
  return c.finish(d.count);
}

/** Per recipe in RecipeCompiler.perRecipe: frameBytes, slotStart, pairCount, saveStart, saveCount. */
const RECIPE_WORDS = 5;

/** The recipes compiled so far (registration only: amortised growth, nothing per safepoint). */
class RecipeCompiler {
  readonly recipe: Int32Array;
  readonly perRecipe = new IntList();
  readonly slots = new IntList();
  readonly saves = new IntList();
  /** A slot-list-and-saves hash -> the first recipe with it (a Map would box hashes above 2^30). */
  readonly firstByHash = new RecipeHashIndex();

  constructor(safepoints: number) {
    this.recipe = new Int32Array(safepoints);
  }

  finish(safepoints: number): ScanRecipes {
    const recipes = this.perRecipe.length / RECIPE_WORDS;
    const words = this.perRecipe.words;
    const frameBytes = new Int32Array(recipes);
    const slotStart = new Uint32Array(recipes);
    const pairCount = new Uint16Array(recipes);
    const saveStart = new Uint32Array(recipes);
    const saveCount = new Uint8Array(recipes);
    for (let r = 0; r < recipes; r++) {
      frameBytes[r] = words[r * RECIPE_WORDS]!;
      slotStart[r] = words[r * RECIPE_WORDS + 1]!;
      pairCount[r] = words[r * RECIPE_WORDS + 2]!;
      saveStart[r] = words[r * RECIPE_WORDS + 3]!;
      saveCount[r] = words[r * RECIPE_WORDS + 4]!;
    }
    return new ScanRecipes(
      this.recipe.subarray(0, safepoints),
      frameBytes,
      slotStart,
      pairCount,
      this.slots.toArray(),
      saveStart,
      saveCount,
      this.saves.toArray(),
    );
  }
}

/*
 * The loop over safepoints is the whole of its function: V8 compiles a long first loop on the
 * stack (OSR) and keeps that code for later calls; code after the loop, not yet run when it was
 * compiled, would have no type feedback and deoptimise on every later call.
 */
function compileAll(d: FrameDescriptors, c: RecipeCompiler): void {
  const n = d.count;
  const { recipe, perRecipe, slots, saves, firstByHash } = c;
  const { locations, savedRegOffsets, frameSizeBytes, pairCount, pairStart, allocaCount } = d;
  const pairLocations = d.pairs;
  const savedPerSafepoint = d.architecture.calleeSavedDwarf.length;
  // The recipe of the last fast safepoint: call sites of one function mostly share it.
  let previous = -1;
  for (let i = 0; i < n; i++) {
    const size = frameSizeBytes[i]!;
    const pairs = pairCount[i]!;
    // A multiple of 8: the fast loop keeps SP as an even word index (walker/fast-scan.ts).
    let fast = isFastFrame(size, allocaCount[i]!, d.architecture);
    const span = frameSpanBytes(size);
    const slotsAt = slots.length;
    const savesAt = saves.length;
    slots.reserve(2 * pairs);
    const firstPairWord = pairStart[i]! * 2;
    for (let w = 0; fast && w < 2 * pairs; w++) {
      const loc = pairLocations[firstPairWord + w]!;
      const off = locations[loc * 2 + 1]!;
      if (!isFastRootLocation(locations[loc * 2]! & LOCATION_SHAPE_MASK, off, span)) fast = false;
      slots.words[slots.length++] = off;
    }
    if (!fast) {
      slots.length = slotsAt;
      recipe[i] = NOT_FAST;
      continue;
    }
    saves.reserve(2 * savedPerSafepoint);
    for (let k = 0; k < savedPerSafepoint; k++) {
      const offset = savedRegOffsets[i * savedPerSafepoint + k]!;
      if (offset === 0) continue;
      saves.words[saves.length++] = k;
      saves.words[saves.length++] = offset;
    }
    const saveCount = (saves.length - savesAt) / 2;
    // The previous safepoint's recipe, when equal, is taken without hashing; it is the first of
    // its hash whenever the lookup below would have found it, since equal recipes are shared.
    if (previous >= 0 && sameRecipe(c, previous, size, slotsAt, savesAt)) {
      slots.length = slotsAt;
      saves.length = savesAt;
      recipe[i] = previous;
      continue;
    }
    // Share with the first recipe of the same hash when equal (no string keys: this runs once
    // per safepoint at registration, inside the parse + index budget).
    let key = Math.imul(size ^ pairs, 0x9e3779b1) ^ saveCount;
    for (let w = slotsAt; w < slots.length; w++) key = Math.imul(key ^ slots.words[w]!, 0x9e3779b1) >>> 0;
    for (let w = savesAt; w < saves.length; w++) key = Math.imul(key ^ saves.words[w]!, 0x85ebca6b) >>> 0;
    const existing = firstByHash.get(key);
    if (existing >= 0 && sameRecipe(c, existing, size, slotsAt, savesAt)) {
      slots.length = slotsAt;
      saves.length = savesAt;
      recipe[i] = existing;
      previous = existing;
      continue;
    }
    const index = perRecipe.length / RECIPE_WORDS;
    if (existing < 0) firstByHash.add(key, index);
    perRecipe.reserve(RECIPE_WORDS);
    const r = perRecipe.words;
    const at = perRecipe.length;
    r[at] = size;
    r[at + 1] = slotsAt;
    r[at + 2] = pairs;
    r[at + 3] = savesAt;
    r[at + 4] = saveCount;
    perRecipe.length += RECIPE_WORDS;
    recipe[i] = index;
    previous = index;
  }
}

/** Recipe `r` equals the candidate just written at the end of the slot and save lists. */
function sameRecipe(c: RecipeCompiler, r: number, size: number, slotsAt: number, savesAt: number): boolean {
  const words = c.perRecipe.words;
  const at = r * RECIPE_WORDS;
  return (
    words[at] === size &&
    sameWords(c.slots.words, words[at + 1]!, 2 * words[at + 2]!, slotsAt, c.slots.length - slotsAt) &&
    sameWords(c.saves.words, words[at + 3]!, 2 * words[at + 4]!, savesAt, c.saves.length - savesAt)
  );
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
