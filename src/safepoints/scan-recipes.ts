import { LocationKind } from "../stackmap/llvm-stackmap.js";
import { CALLEE_SAVED_COUNT, DWARF_RSP, type FrameDescriptors, ROOT_TYPE_NONE, ROOT_TYPE_POINTER } from "./frame-descriptors.js";

/*
 * Scan recipes: each safepoint of a registered module compiled once, at registration, into what
 * the fast scan loop (walker/fast-scan.ts) needs and nothing else.
 *
 * Per safepoint i:
 *   frameBytes[i]   distance from SP to the return-address slot (the static frame size), or
 *                   NOT_FAST when the fast loop must hand the frame to the general unwinder:
 *                   no static size (frame-pointer climbs, dynamic frames), a size that is not a
 *                   multiple of 8 (the caller's SP would be misaligned), gc allocas, or any
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
  const n = d.count;
  const spUntyped = LocationKind.Indirect | (ROOT_TYPE_NONE << 4) | (DWARF_RSP << 8);
  const spPointer = LocationKind.Indirect | (ROOT_TYPE_POINTER << 4) | (DWARF_RSP << 8);
  const frameBytes = new Int32Array(n);
  const recipe = new Uint32Array(n);
  const savesRegisters = new Uint8Array(n);
  const slotStart: number[] = [];
  const pairCount: number[] = [];
  let slots = new Int32Array(64);
  let slotWords = 0;
  const byKey = new Map<number, number>();
  const locations = d.locations;
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < CALLEE_SAVED_COUNT; k++) if (d.savedRegOffsets[i * CALLEE_SAVED_COUNT + k] !== 0) savesRegisters[i] = 1;
    const size = d.frameSizeBytes[i]!;
    const pairs = d.pairCount[i]!;
    // A multiple of 8: the fast loop keeps SP as an even word index (walker/fast-scan.ts).
    let fast = size >= 0 && (size & 7) === 0 && d.allocaCount[i] === 0;
    const start = slotWords;
    if (slots.length < slotWords + 2 * pairs) {
      const grown = new Int32Array(Math.max(slots.length * 2, slotWords + 2 * pairs));
      grown.set(slots);
      slots = grown;
    }
    for (let p = 0; fast && p < pairs; p++) {
      for (let k = 0; k < 2; k++) {
        const loc = d.pairs[(d.pairStart[i]! + p) * 2 + k]!;
        const shape = locations[loc * 2]! & 0xffff;
        const off = locations[loc * 2 + 1]!;
        if ((shape !== spUntyped && shape !== spPointer) || off < 0 || off + 8 > size + 8 || (off & 7) !== 0) fast = false;
        slots[slotWords++] = off;
      }
    }
    if (!fast) {
      slotWords = start;
      frameBytes[i] = NOT_FAST;
      continue;
    }
    frameBytes[i] = size;
    // Share with the first recipe of the same hash when the lists are equal (no string keys:
    // this runs once per safepoint at registration, inside the parse + index budget).
    let key = pairs;
    for (let w = start; w < slotWords; w++) key = Math.imul(key ^ slots[w]!, 0x9e3779b1) >>> 0;
    const existing = byKey.get(key);
    if (existing !== undefined && sameSlots(slots, slotStart[existing]!, 2 * pairCount[existing]!, start, slotWords - start)) {
      slotWords = start;
      recipe[i] = existing;
      continue;
    }
    const r = slotStart.length;
    if (existing === undefined) byKey.set(key, r);
    slotStart.push(start);
    pairCount.push(pairs);
    recipe[i] = r;
  }
  return new ScanRecipes(frameBytes, recipe, savesRegisters, Uint32Array.from(slotStart), Uint16Array.from(pairCount), slots.slice(0, slotWords));
}

function sameSlots(slots: Int32Array, a: number, aWords: number, b: number, bWords: number): boolean {
  if (aWords !== bWords) return false;
  for (let w = 0; w < aWords; w++) if (slots[a + w] !== slots[b + w]) return false;
  return true;
}
