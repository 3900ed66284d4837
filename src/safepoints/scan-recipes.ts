import { LocationKind } from "../stackmap/llvm-stackmap.js";
import { CALLEE_SAVED_COUNT, DWARF_RSP, type FrameDescriptors, ROOT_TYPE_NONE, ROOT_TYPE_POINTER } from "./frame-descriptors.js";
import { RecipeHashIndex } from "./recipe-hash-index.js";

/*
 * Scan recipes: each safepoint of a registered module compiled once, at registration, into what
 * the fast scan loop (walker/fast-scan.ts) needs and nothing else.
 *
 * Per safepoint i:
 *   frameBytes[i]   distance from SP to the return-address slot (the static frame size), or
 *                   NOT_FAST when the fast loop must hand the frame to the general unwinder:
 *                   no static size (frame-pointer climbs, dynamic frames), gc allocas, or any
 *                   root that is not an `Indirect [rsp + off]` slot inside [sp, sp + size + 8)
 *                   (callee-saved registers, CFA- or rbp-relative slots, typed plimmix roots,
 *                   constants, Direct locations)
 *   recipe[i]       index of its root-slot list in `slotStart`/`pairCount` (identical lists are
 *                   shared: many call sites of one function spill the same slots)
 *   savesRegisters[i]   1 when the frame saved a callee-saved register (the fast loop then moves
 *                   the register slots like Unwinder.next does)
 * Per recipe r: pairCount[r] (base, derived) pairs at slotStart[r] in `slots`, each two SP-relative
 * byte offsets (base, derived), 8-aligned, in the map's pair order.
 */

export const NOT_FAST = -1;

export class ScanRecipes {
  constructor(
    readonly frameBytes: Int32Array,
    readonly recipe: Uint32Array,
    readonly savesRegisters: Uint8Array,
    readonly slotStart: Uint32Array,
    readonly pairCount: Uint16Array,
    readonly slots: Int32Array,
  ) {}

  get sizeBytes(): number {
    return this.frameBytes.byteLength + this.recipe.byteLength + this.savesRegisters.byteLength + this.slotStart.byteLength + this.pairCount.byteLength + this.slots.byteLength;
  }
}

/** Compiles every safepoint of `d` (one pass; no allocation per safepoint). */
export function compileScanRecipes(d: FrameDescriptors): ScanRecipes {
  const compiler = new RecipeCompiler(d);
  compiler.compileAll();
  return compiler.finish();
}

/*
 * Hot loops here and in the loaders end their function: V8 compiles a long first loop on stack
 * (OSR) and caches that code for the next call; code after the loop that had not run yet would
 * be compiled without type feedback and deoptimize on every later call.
 */

class RecipeCompiler {
  readonly frameBytes: Int32Array;
  readonly recipe: Uint32Array;
  readonly savesRegisters: Uint8Array;
  /** Per recipe; at most one recipe per safepoint, trimmed by `finish`. */
  private readonly slotStart: Uint32Array;
  private readonly pairCount: Uint16Array;
  /** Per recipe: 1 when it is the first with its hash (the one `firstByHash` finds). */
  private readonly indexed: Uint8Array;
  private recipes = 0;
  private slots = new Int32Array(64);
  private slotWords = 0;
  private readonly firstByHash = new RecipeHashIndex();

  constructor(private readonly d: FrameDescriptors) {
    this.frameBytes = new Int32Array(d.count);
    this.recipe = new Uint32Array(d.count);
    this.savesRegisters = new Uint8Array(d.count);
    this.slotStart = new Uint32Array(d.count);
    this.pairCount = new Uint16Array(d.count);
    this.indexed = new Uint8Array(d.count);
  }

  compileAll(): void {
    const d = this.d;
    const n = d.count;
    const spUntyped = LocationKind.Indirect | (ROOT_TYPE_NONE << 4) | (DWARF_RSP << 8);
    const spPointer = LocationKind.Indirect | (ROOT_TYPE_POINTER << 4) | (DWARF_RSP << 8);
    const { frameBytes, recipe, savesRegisters, slotStart, pairCount, indexed, firstByHash } = this;
    const { locations, pairs, savedRegOffsets, frameSizeBytes, pairStart, allocaCount } = d;
    const pairCounts = d.pairCount;
    let slots = this.slots;
    let slotWords = this.slotWords;
    let recipes = this.recipes;
    // The recipe of the last fast safepoint: call sites of one function mostly share it.
    let previous = -1;
    for (let i = 0; i < n; i++) {
      let saves = 0;
      for (let k = 0; k < CALLEE_SAVED_COUNT; k++) saves |= savedRegOffsets[i * CALLEE_SAVED_COUNT + k]!;
      savesRegisters[i] = saves !== 0 ? 1 : 0;
      const size = frameSizeBytes[i]!;
      const pairsHere = pairCounts[i]!;
      let fast = size >= 0 && allocaCount[i] === 0;
      const start = slotWords;
      if (slots.length < slotWords + 2 * pairsHere) {
        const grown = new Int32Array(Math.max(slots.length * 2, slotWords + 2 * pairsHere));
        grown.set(slots);
        slots = grown;
      }
      // The list is written after the kept ones; it stays only if it is new.
      const firstPairWord = pairStart[i]! * 2;
      for (let w = 0; fast && w < 2 * pairsHere; w++) {
        const loc = pairs[firstPairWord + w]!;
        const shape = locations[loc * 2]! & 0xffff;
        const off = locations[loc * 2 + 1]!;
        if ((shape !== spUntyped && shape !== spPointer) || off < 0 || off + 8 > size + 8 || (off & 7) !== 0) fast = false;
        slots[slotWords++] = off;
      }
      if (!fast) {
        slotWords = start;
        frameBytes[i] = NOT_FAST;
        continue;
      }
      frameBytes[i] = size;
      // The same list as the previous recipe, which is the first with its hash: the lookup below
      // would find it, so it is taken without hashing.
      if (previous >= 0 && indexed[previous] === 1 && sameSlots(slots, slotStart[previous]!, 2 * pairCount[previous]!, start, slotWords - start)) {
        slotWords = start;
        recipe[i] = previous;
        continue;
      }
      // Share with the first recipe of the same hash when the lists are equal (no string keys:
      // this runs once per safepoint at registration, inside the parse + index budget).
      let key = pairsHere;
      for (let w = start; w < slotWords; w++) key = Math.imul(key ^ slots[w]!, 0x9e3779b1) >>> 0;
      const existing = firstByHash.get(key);
      if (existing >= 0 && sameSlots(slots, slotStart[existing]!, 2 * pairCount[existing]!, start, slotWords - start)) {
        slotWords = start;
        recipe[i] = existing;
        previous = existing;
        continue;
      }
      const r = recipes++;
      if (existing < 0) {
        firstByHash.add(key, r);
        indexed[r] = 1;
      }
      previous = r;
      slotStart[r] = start;
      pairCount[r] = pairsHere;
      recipe[i] = r;
      // Saved here, not after the loop (see above): a safepoint that adds no recipe leaves
      // slotWords as it was, and a `slots` it grew is a copy with the same kept lists.
      this.slots = slots;
      this.slotWords = slotWords;
      this.recipes = recipes;
    }
  }

  finish(): ScanRecipes {
    return new ScanRecipes(
      this.frameBytes, this.recipe, this.savesRegisters,
      this.slotStart.slice(0, this.recipes), this.pairCount.slice(0, this.recipes), this.slots.slice(0, this.slotWords),
    );
  }
}

function sameSlots(slots: Int32Array, a: number, aWords: number, b: number, bWords: number): boolean {
  if (aWords !== bWords) return false;
  for (let w = 0; w < aWords; w++) if (slots[a + w] !== slots[b + w]) return false;
  return true;
}
