// The loop joins u32 halves inline (`hi * TWO_32 + lo`) on its own locals: src/bytes/word-codec.ts
// is the codec everywhere else.
import { TWO_32 } from "../src/bytes/word-codec.js";
import { type WordMemory, flatWords } from "../src/memory/memory.js";
import { CALLEE_SAVED_COUNT } from "../src/safepoints/frame-descriptors.js";
import { slotOfHalves } from "../src/safepoints/safepoint-table.js";
import { type RootPairs, collectFrameRoots } from "./frame-roots.js";
import type { ManagedChunk, Unwinder, WalkStart } from "./unwinder.js";

/*
 * The fast scan loop: the roots of a whole stack, for a collection.
 *
 * When the stack is one flat word memory (a simulated stack, a native stack's view), the common
 * frame (src/safepoints/fast-frame-rule.ts, compiled into src/safepoints/scan-recipes.ts) is taken by
 * one monomorphic loop: a table probe on the return address's two u32 halves, the frame's recipe,
 * one range check, root slots appended to the RootPairs typed arrays, the caller's return address
 * read straight from the Uint32Array. No allocation and no polymorphic call per frame.
 *
 * Every frame the loop does not take (a chunk's end, a frame-pointer climb, roots in callee-saved
 * registers or relative to rbp / the CFA, gc allocas, typed plimmix roots, split-stack crossings,
 * an unknown return address, the depth limit, memory that is not one flat range) is handed to the
 * general Unwinder with `resumeAt`, which stays the single source of truth for them: the frames,
 * pairs, stop reason and errors are exactly those of `for (u.init(); u.valid(); u.next())
 * collectFrameRoots(u, out)` (test/walker/fast-scan.test.ts, and every stack the tests scan or walk
 * with the `crossCheck` option, check it: walker/scan-cross-check.ts).
 *
 * Invariant kept while the loop runs: `loop.regSlots` holds where each callee-saved register lives
 * for the frame at (sp, lo/hi): copied from the unwinder when a chunk starts, moved by fast frames
 * that saved registers as Unwinder.next moves them, and handed back with `resumeAt`.
 *
 * The loop's state (FastLoop) belongs to the caller, who keeps one per thread and reuses it
 * (StackRootScanner): the Unwinder knows nothing of the fast loop.
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

/**
 * Walks `start` with `u` (its mode decides errors) and appends every root pair to `out`; returns
 * the number of frames. `loop` is the fast loop's reusable state (no allocation once made).
 * `log`, when given, gets every frame's (sp, ra).
 *
 * Inside the loop a frame's SP is `w`, its index in the flat Uint32Array of stack words (an int32:
 * the stack is under 4 GiB), so the range checks, the root slots and the caller's return address
 * are small-integer arithmetic; an address (a double above 2^31) is formed only where a slot is
 * appended. `w` stays even (SP 8-aligned) because the words start 8-aligned and every fast frame
 * size is a multiple of 8 (scan-recipes.ts); a chunk whose SP is not is handed over at once.
 */
export function scanStackRoots(u: Unwinder, start: WalkStart | readonly ManagedChunk[], out: RootPairs, loop: FastLoop, log?: FrameLog): number {
  let frames = 0;
  u.init(start);
  const flat = flatWords(u.memory);
  if (flat === undefined || flat.base % 8 !== 0) {
    for (; u.valid(); u.next()) {
      log?.push(u.sp, u.ra);
      collectFrameRoots(u, out);
      frames++;
    }
    return frames;
  }
  loop.bind(u, flat, out, log);
  try {
    return frames + scanChunks(u, out, log, loop);
  } finally {
    // Also on a strict-mode error: the loop keeps no reference to this stack or output.
    loop.unbind();
  }
}

/** The chunks of a bound walk: fast frames by runFastFrames, the others by the general unwinder. */
function scanChunks(u: Unwinder, out: RootPairs, log: FrameLog | undefined, loop: FastLoop): number {
  let frames = 0;
  const wordsBase = loop.wordsBase;
  const wordsEnd = wordsBase + loop.wordCount * 4;
  const cursor = loop.cursor;
  while (u.valid()) {
    const chunk = u.chunk;
    const firstIndex = u.index;
    const sp0 = u.sp;
    let taken = 0;
    if ((sp0 & 7) === 0 && sp0 >= wordsBase && sp0 < wordsEnd) {
      loop.enterChunk(chunk, ((sp0 - wordsBase) / 4) | 0, u.ra, firstIndex);
      u.copyRegSlots(loop.regSlots);
      for (;;) {
        const run = runFastFrames(loop);
        if (run !== 0) loop.advanced(firstIndex + taken + run);
        taken += run;
        if (loop.roomNeeded === 0) break;
        out.reserve(loop.roomNeeded);
        loop.roomNeeded = 0;
      }
    }
    if (taken !== 0) {
      frames += taken;
      u.resumeAt(wordsBase + cursor[CURSOR_W]! * 4, cursor[CURSOR_HI]! * TWO_32 + cursor[CURSOR_LO]!, firstIndex + taken, loop.regSlots);
    }
    if (!u.valid()) break;
    // The frame the loop could not take: the general unwinder's.
    log?.push(u.sp, u.ra);
    collectFrameRoots(u, out);
    frames++;
    u.next();
  }
  return frames;
}

const NO_WORDS: Uint32Array = new Uint32Array(0);

/** Where the frame loop stands (FastLoop.cursor): SP as a word index, the return address's halves. */
const CURSOR_W = 0;
const CURSOR_LO = 1;
const CURSOR_HI = 2;
const CURSOR_INDEX = 3;

/**
 * Everything the frame loop reads, bound once per scan (no allocation: the caller keeps one per
 * thread), the register slots it moves, and the cursor it leaves behind. The loop itself is `runFastFrames`, a function of its own whose code
 * after the loop is a bare `return`: V8 compiles a long first loop on the stack (OSR) before any
 * code after it has run, and code without type feedback deoptimises when it is first reached.
 */
export class FastLoop {
  readonly cursor = new Uint32Array(4);
  /** Set by the loop when the next frame's pairs do not fit in `out`: grow it and run again. */
  roomNeeded = 0;
  words: Uint32Array = new Uint32Array(0);
  wordsBase = 0;
  wordCount = 0;
  keys: Uint32Array = new Uint32Array(0);
  values: Uint32Array = new Uint32Array(0);
  mask = 0;
  shift = 0;
  firstSafepointBySlot: Int32Array = new Int32Array(0);
  recipeOf: Int32Array = new Int32Array(0);
  frameBytes: Int32Array = new Int32Array(0);
  slotStart: Uint32Array = new Uint32Array(0);
  pairCount: Uint16Array = new Uint16Array(0);
  slots: Int32Array = new Int32Array(0);
  saveStart: Uint32Array = new Uint32Array(0);
  saveCount: Uint8Array = new Uint8Array(0);
  saves: Int32Array = new Int32Array(0);
  maxDepth = 0;
  /** Where each callee-saved register lives for the frame at the cursor (see the header). */
  readonly regSlots = new Float64Array(CALLEE_SAVED_COUNT);
  out: RootPairs | undefined;
  log: FrameLog | undefined;
  /** Extra boundaries (UnwinderOptions.boundaries) that are also safepoints: checked per frame. */
  boundaries: ReadonlySet<number> | undefined;
  // The chunk being walked.
  topWord = 0;
  /**
   * The chunk's boundary return address as u32 halves; (0, 0) when it has none: a return address
   * of 0 ends the loop anyway, and any frame the loop stops at goes to the general unwinder,
   * which decides what it is.
   */
  boundaryLo = 0;
  boundaryHi = 0;

  bind(u: Unwinder, flat: WordMemory, out: RootPairs, log: FrameLog | undefined): void {
    const snapshot = u.snapshot;
    const table = snapshot.table;
    const scan = snapshot.scanRecipes;
    this.words = flat.words;
    this.wordsBase = flat.base;
    this.wordCount = flat.words.length;
    this.keys = table.keys;
    this.values = table.values;
    this.mask = table.capacity - 1;
    this.shift = table.hashShift;
    this.firstSafepointBySlot = snapshot.firstSafepointBySlot;
    this.recipeOf = scan.recipe;
    this.frameBytes = scan.frameBytes;
    this.slotStart = scan.slotStart;
    this.pairCount = scan.pairCount;
    this.slots = scan.slots;
    this.saveStart = scan.saveStart;
    this.saveCount = scan.saveCount;
    this.saves = scan.saves;
    this.maxDepth = u.maxDepth;
    this.out = out;
    this.log = log;
    // Extra boundaries only matter for return addresses that are also safepoints (the general
    // unwinder tests boundaries first); otherwise a table hit already means "not a boundary".
    this.boundaries = undefined;
    const boundaries = u.options.boundaries;
    if (boundaries !== undefined) for (const b of boundaries) if (table.find(b) >= 0) this.boundaries = boundaries;
  }

  enterChunk(chunk: ManagedChunk, w: number, ra: number, firstIndex: number): void {
    // Frames at or above the chunk's stack top are the general unwinder's ("stack-top").
    this.topWord =
      (chunk.stackTop === undefined ? this.wordCount : Math.min(this.wordCount, Math.max(0, Math.ceil((chunk.stackTop - this.wordsBase) / 4)))) | 0;
    const boundaryRa = chunk.boundaryRa ?? 0;
    this.boundaryLo = boundaryRa >>> 0;
    this.boundaryHi = (boundaryRa / TWO_32) >>> 0;
    this.cursor[CURSOR_INDEX] = firstIndex;
    this.cursor[CURSOR_W] = w;
    this.cursor[CURSOR_LO] = ra >>> 0;
    this.cursor[CURSOR_HI] = (ra / TWO_32) >>> 0;
  }

  /**
   * After the loop took frames: the return address of the frame at the cursor's SP is the word
   * pair just below it, and its index is `index`.
   */
  advanced(index: number): void {
    const w = this.cursor[CURSOR_W]!;
    this.cursor[CURSOR_LO] = this.words[w - 2]!;
    this.cursor[CURSOR_HI] = this.words[w - 1]!;
    this.cursor[CURSOR_INDEX] = index;
  }

  /** Drops the references to this scan's stack, table and output. */
  unbind(): void {
    this.words = NO_WORDS;
    this.out = undefined;
    this.log = undefined;
    this.boundaries = undefined;
  }
}

/**
 * Takes frames from `loop.cursor` while they are plain (see the header); returns how many. The
 * cursor and `out` are kept current at every frame, so nothing needs doing after the loop. When
 * the next frame's pairs would not fit in `out`'s columns it stops and sets `roomNeeded`: the
 * columns stay constants inside the loop (the JIT keeps their data pointers and lengths).
 */
function runFastFrames(loop: FastLoop): number {
  const cursor = loop.cursor;
  const words = loop.words;
  const wordsBase = loop.wordsBase;
  const wordCount = loop.wordCount;
  const keys = loop.keys;
  const values = loop.values;
  const mask = loop.mask;
  const shift = loop.shift;
  const firstSafepointBySlot = loop.firstSafepointBySlot;
  const recipeOf = loop.recipeOf;
  const frameBytes = loop.frameBytes;
  const slotStart = loop.slotStart;
  const pairCount = loop.pairCount;
  const slots = loop.slots;
  const saveStart = loop.saveStart;
  const saveCount = loop.saveCount;
  const saves = loop.saves;
  const regSlots = loop.regSlots;
  const out = loop.out!;
  const log = loop.log;
  const boundaries = loop.boundaries;
  const topWord = loop.topWord;
  const boundaryLo = loop.boundaryLo;
  const boundaryHi = loop.boundaryHi;
  const lastIndex = loop.maxDepth - 1;
  let index = cursor[CURSOR_INDEX]!;
  let taken = 0;
  let w = cursor[CURSOR_W]!;
  let lo = cursor[CURSOR_LO]!;
  let hi = cursor[CURSOR_HI]!;
  let n = out.count;
  const baseSlots = out.baseSlots;
  const derivedSlots = out.derivedSlots;
  const frameOf = out.frames;
  const baseValues = out.baseValues;
  const capacity = baseSlots.length;
  // One compare for the boundary, made on every frame: a test reached only at the boundary (the
  // last frame) had no type feedback there and deoptimised the loop at the end of each scan.
  while (w < topWord && index < lastIndex && ((lo ^ boundaryLo) | (hi ^ boundaryHi)) !== 0) {
    // The table probe (SafepointTable.findHalves, inlined). Every probe, hit or collision,
    // runs the same operations, so the JIT has type feedback for all of them after the first
    // frame and a first collision deep into a stack does not deoptimise the loop.
    let slot = (slotOfHalves(lo, hi, shift) - 1) & mask;
    // Initialised although the do-while assigns them first: the JIT then sees only booleans here.
    // eslint-disable-next-line no-useless-assignment -- see above
    let found = false;
    // eslint-disable-next-line no-useless-assignment -- see above
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
    // + 2 words: the return-address slot between the frame and the CFA (RA_CFA_OFFSET_BYTES = -8).
    const cfaWord = w + (frameBytes[r]! >> 2) + 2;
    if (cfaWord > wordCount) break;
    if (boundaries !== undefined && boundaries.has(hi * TWO_32 + lo)) break;
    const pairs = pairCount[r]!;
    if (n + pairs > capacity) {
      loop.roomNeeded = pairs;
      break;
    }
    const spAddress = wordsBase + w * 4;
    if (log !== undefined) log.push(spAddress, hi * TWO_32 + lo);
    for (let p = 0, s = slotStart[r]!; p < pairs; p++, s += 2) {
      const baseOffset = slots[s]!;
      const baseWord = w + (baseOffset >> 2);
      baseSlots[n] = spAddress + baseOffset;
      derivedSlots[n] = spAddress + slots[s + 1]!;
      frameOf[n] = index;
      baseValues[n] = words[baseWord + 1]! * TWO_32 + words[baseWord]!;
      n++;
    }
    out.count = n;
    const savedRegisters = saveCount[r]!;
    if (savedRegisters !== 0) {
      const cfa = wordsBase + cfaWord * 4;
      for (let k = 0, s = saveStart[r]!; k < savedRegisters; k++, s += 2) regSlots[saves[s]!] = cfa + saves[s + 1]!;
    }
    lo = words[cfaWord - 2]!;
    hi = words[cfaWord - 1]!;
    w = cfaWord;
    // Only SP is kept: the return address is the two words below it, the index first + taken.
    cursor[CURSOR_W] = w;
    index++;
    taken++;
  }
  return taken;
}
