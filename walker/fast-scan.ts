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
 *
 * Inside the loop a frame's SP is `w`, its index in the flat Uint32Array of stack words (an int32:
 * the stack is under 4 GiB), so the range checks, the root slots and the caller's return address
 * are small-integer arithmetic; an address (a double above 2^31) is formed only where a slot is
 * appended. `w` stays even (SP 8-aligned) because the words start 8-aligned and every fast frame
 * size is a multiple of 8 (scan-recipes.ts); a chunk whose SP is not is handed over at once.
 */
export function scanStackRoots(u: Unwinder, start: WalkStart | readonly ManagedChunk[], out: RootPairs, log?: FrameLog): number {
  let frames = 0;
  u.init(start);
  const words = u.words;
  const wordsBase = u.wordsBase;
  if (words === undefined || wordsBase % 8 !== 0) {
    for (; u.valid(); u.next()) {
      log?.push(u.sp, u.ra);
      collectFrameRoots(u, out);
      frames++;
    }
    return frames;
  }
  const snapshot = u.snapshot;
  const table = snapshot.table;
  const keys = table.keys;
  const values = table.values;
  const mask = table.capacity - 1;
  const shift = table.hashShift;
  const firstSafepointBySlot = snapshot.firstSafepointBySlot;
  const scan = snapshot.scanRecipes;
  const recipeOf = scan.recipe;
  const frameBytes = scan.frameBytes;
  const slotStart = scan.slotStart;
  const pairCount = scan.pairCount;
  const slots = scan.slots;
  const saveStart = scan.saveStart;
  const saveCount = scan.saveCount;
  const saves = scan.saves;
  const wordCount = words.length;
  const maxDepth = u.maxDepth;
  const regSlots = u.regSlots;
  // Extra boundaries only matter for return addresses that are also safepoints (the general
  // unwinder tests boundaries first); otherwise a table hit already means "not a boundary".
  const boundaries = u.options.boundaries;
  let boundaryInTable = false;
  if (boundaries !== undefined) for (const b of boundaries) if (table.find(b) >= 0) boundaryInTable = true;

  while (u.valid()) {
    const chunk = u.chunk;
    const hasBoundaryRa = chunk.boundaryRa !== undefined;
    const boundaryLo = hasBoundaryRa ? chunk.boundaryRa! >>> 0 : 0;
    const boundaryHi = hasBoundaryRa ? (chunk.boundaryRa! / TWO_32) >>> 0 : 0;
    const firstIndex = u.index;
    let index = firstIndex;
    let lo = u.ra >>> 0;
    let hi = (u.ra / TWO_32) >>> 0;
    const sp0 = u.sp;
    let w = 0;
    if ((sp0 & 7) === 0 && sp0 >= wordsBase && sp0 < u.wordsEnd) {
      w = ((sp0 - wordsBase) / 4) | 0;
      // Frames at or above the chunk's stack top are the general unwinder's ("stack-top").
      const topWord = (chunk.stackTop === undefined ? wordCount : Math.min(wordCount, Math.max(0, Math.ceil((chunk.stackTop - wordsBase) / 4)))) | 0;
      let n = out.count;
      let baseSlots = out.baseSlots;
      let derivedSlots = out.derivedSlots;
      let frameOf = out.frames;
      let baseValues = out.baseValues;
      for (;;) {
        if (w >= topWord || index + 1 >= maxDepth) break;
        if (hasBoundaryRa && lo === boundaryLo && hi === boundaryHi) break;
        // The table probe (SafepointTable.findHalves, inlined). Every probe, hit or collision,
        // runs the same operations, so the JIT has type feedback for all of them after the first
        // frame and a first collision deep into a stack does not deoptimise the loop.
        let slot = (slotOfHalves(lo, hi, shift) - 1) & mask;
        let found = false;
        let empty = false;
        do {
          slot = (slot + 1) & mask;
          const kl = keys[2 * slot]!;
          const kh = keys[2 * slot + 1]!;
          found = ((kl ^ lo) | (kh ^ hi)) === 0;
          empty = (kl | kh) === 0;
        } while (!found && !empty);
        if (!found || (lo | hi) === 0) break;
        const r = recipeOf[firstSafepointBySlot[values[2 * slot]!]! + values[2 * slot + 1]!]!;
        if (r < 0) break;
        const cfaWord = w + (frameBytes[r]! >> 2) + 2;
        if (cfaWord > wordCount) break;
        if (boundaryInTable && boundaries!.has(hi * TWO_32 + lo)) break;
        const spAddress = wordsBase + w * 4;
        if (log !== undefined) log.push(spAddress, hi * TWO_32 + lo);
        const pairs = pairCount[r]!;
        if (n + pairs > baseSlots.length) {
          out.count = n;
          out.reserve(pairs);
          baseSlots = out.baseSlots;
          derivedSlots = out.derivedSlots;
          frameOf = out.frames;
          baseValues = out.baseValues;
        }
        for (let p = 0, s = slotStart[r]!; p < pairs; p++, s += 2) {
          const baseOffset = slots[s]!;
          const baseWord = w + (baseOffset >> 2);
          baseSlots[n] = spAddress + baseOffset;
          derivedSlots[n] = spAddress + slots[s + 1]!;
          frameOf[n] = index;
          baseValues[n] = words[baseWord + 1]! * TWO_32 + words[baseWord]!;
          n++;
        }
        const savedRegisters = saveCount[r]!;
        if (savedRegisters !== 0) {
          const cfa = wordsBase + cfaWord * 4;
          for (let k = 0, s = saveStart[r]!; k < savedRegisters; k++, s += 2) regSlots[saves[s]!] = cfa + saves[s + 1]!;
        }
        lo = words[cfaWord - 2]!;
        hi = words[cfaWord - 1]!;
        w = cfaWord;
        index++;
        frames++;
      }
      out.count = n;
    }
    if (index !== firstIndex) u.resumeAt(wordsBase + w * 4, hi * TWO_32 + lo, index);
    if (!u.valid()) break;
    // The frame the loop could not take: the general unwinder's.
    log?.push(u.sp, u.ra);
    collectFrameRoots(u, out);
    frames++;
    u.next();
  }
  return frames;
}
