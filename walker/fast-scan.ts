import { CALLEE_SAVED_COUNT } from "../src/safepoints/frame-descriptors.js";
import { slotOfHalves } from "../src/safepoints/safepoint-table.js";
import { type RootPairs, collectFrameRoots } from "./frame-roots.js";
import type { ManagedChunk, Unwinder, WalkStart } from "./unwinder.js";

/*
 * The fast scan loop: the roots of a whole stack, for a collection.
 *
 * When the stack is one flat word memory (a simulated stack, a native stack's view), the common
 * frame (static size, roots in `[rsp + off]` slots, see src/safepoints/scan-recipes.ts) is taken by
 * one monomorphic loop: a table probe on the return address's two u32 halves, the frame's recipe,
 * one range check, root slots appended to the RootPairs typed arrays, the caller's return address
 * read straight from the Uint32Array. No allocation and no polymorphic call per frame.
 *
 * Every frame the loop does not take (a chunk's end, a frame-pointer climb, roots in callee-saved
 * registers or relative to rbp / the CFA, gc allocas, typed plimmix roots, split-stack crossings,
 * an unknown return address, the depth limit, memory that is not one flat range) is handed to the
 * general Unwinder with `resumeAt`, which stays the single source of truth for them: the frames,
 * pairs, stop reason and errors are exactly those of `for (u.init(); u.valid(); u.next())
 * collectFrameRoots(u, out)` (test/walker/fast-scan.test.ts and every StackRootScanner use under
 * ROOTWALK_SCAN_CROSSCHECK check it).
 *
 * Invariant kept while the loop runs: `u.regSlots` holds where each callee-saved register lives
 * for the frame at (sp, lo/hi): fast frames that saved registers move them like Unwinder.next.
 */

/** Optional per-frame record (SP and return address of every frame, walk order): for checks. */
export class FrameLog {
  count = 0;
  sps = new Float64Array(64);
  ras = new Float64Array(64);
  clear(): void {
    this.count = 0;
  }
  push(sp: number, ra: number): void {
    if (this.count === this.sps.length) {
      const sps = new Float64Array(this.count * 2);
      const ras = new Float64Array(this.count * 2);
      sps.set(this.sps);
      ras.set(this.ras);
      this.sps = sps;
      this.ras = ras;
    }
    this.sps[this.count] = sp;
    this.ras[this.count] = ra;
    this.count++;
  }
}

const TWO_32 = 0x1_0000_0000;

/**
 * Walks `start` with `u` (its mode decides errors) and appends every root pair to `out`; returns
 * the number of frames. `log`, when given, gets every frame's (sp, ra).
 */
export function scanStackRoots(u: Unwinder, start: WalkStart | readonly ManagedChunk[], out: RootPairs, log?: FrameLog): number {
  let frames = 0;
  u.init(start);
  const words = u.words;
  if (words === undefined) {
    for (; u.valid(); u.next()) {
      log?.push(u.sp, u.ra);
      collectFrameRoots(u, out);
      frames++;
    }
    return frames;
  }
  const snapshot = u.snapshot;
  const table = snapshot.table;
  const keysLo = table.keysLo;
  const keysHi = table.keysHi;
  const moduleSlots = table.moduleSlots;
  const descriptorIndices = table.descriptorIndices;
  const mask = table.capacity - 1;
  const shift = table.hashShift;
  const recipesBySlot = snapshot.recipesBySlot;
  const wordsBase = u.wordsBase;
  const wordsEnd = u.wordsEnd;
  const maxDepth = u.maxDepth;
  const regSlots = u.regSlots;
  // Extra boundaries only matter for return addresses that are also safepoints (the general
  // unwinder tests boundaries first); otherwise a table hit already means "not a boundary".
  const boundaries = u.options.boundaries;
  let boundaryInTable = false;
  if (boundaries !== undefined) for (const b of boundaries) if (table.find(b) >= 0) boundaryInTable = true;

  while (u.valid()) {
    const chunk = u.chunk;
    const stackTop = chunk.stackTop ?? Number.POSITIVE_INFINITY;
    const hasBoundaryRa = chunk.boundaryRa !== undefined;
    const boundaryLo = hasBoundaryRa ? chunk.boundaryRa! >>> 0 : 0;
    const boundaryHi = hasBoundaryRa ? (chunk.boundaryRa! / TWO_32) >>> 0 : 0;
    const firstIndex = u.index;
    let sp = u.sp;
    let index = firstIndex;
    let lo = u.ra >>> 0;
    let hi = (u.ra / TWO_32) >>> 0;
    for (;;) {
      if (sp >= stackTop || (sp & 7) !== 0 || index + 1 >= maxDepth) break;
      if (hasBoundaryRa && lo === boundaryLo && hi === boundaryHi) break;
      // The table probe (SafepointTable.findHalves, inlined).
      let slot = slotOfHalves(lo, hi, shift);
      for (;;) {
        const kl = keysLo[slot]!;
        const kh = keysHi[slot]!;
        if (kl === lo && kh === hi) break;
        if ((kl | kh) === 0) {
          slot = -1;
          break;
        }
        slot = (slot + 1) & mask;
      }
      if (slot < 0 || (lo | hi) === 0) break;
      const recipes = recipesBySlot[moduleSlots[slot]!]!;
      const di = descriptorIndices[slot]!;
      const size = recipes.frameBytes[di]!;
      if (size < 0) break;
      const cfa = sp + size + 8;
      if (sp < wordsBase || cfa > wordsEnd) break;
      if (boundaryInTable && boundaries!.has(hi * TWO_32 + lo)) break;
      if (log !== undefined) log.push(sp, hi * TWO_32 + lo);
      const r = recipes.recipe[di]!;
      const slots = recipes.slots;
      const end = recipes.slotStart[r]! + 2 * recipes.pairCount[r]!;
      for (let s = recipes.slotStart[r]!; s < end; s += 2) out.push(sp + slots[s]!, sp + slots[s + 1]!, index);
      if (recipes.savesRegisters[di] !== 0) {
        const saved = snapshot.moduleBySlot[moduleSlots[slot]!]!.descriptors.savedRegOffsets;
        for (let k = 0; k < CALLEE_SAVED_COUNT; k++) {
          const offset = saved[di * CALLEE_SAVED_COUNT + k]!;
          if (offset !== 0) regSlots[k] = cfa + offset;
        }
      }
      const w = (cfa - 8 - wordsBase) >>> 2;
      lo = words[w]!;
      hi = words[w + 1]!;
      sp = cfa;
      index++;
      frames++;
    }
    if (index !== firstIndex) u.resumeAt(sp, hi * TWO_32 + lo, index);
    if (!u.valid()) break;
    // The frame the loop could not take: the general unwinder's.
    log?.push(u.sp, u.ra);
    collectFrameRoots(u, out);
    frames++;
    u.next();
  }
  return frames;
}

