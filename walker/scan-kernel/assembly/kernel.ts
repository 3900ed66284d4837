import {
  CTX_BASE_LO,
  CTX_BOUNDARIES,
  CTX_BOUNDARY_COUNT,
  CTX_BOUNDARY_LO,
  CTX_INDEX,
  CTX_KEYS,
  CTX_LAST_INDEX,
  CTX_LOG,
  CTX_MASK,
  CTX_MAX_TAKEN,
  CTX_OUT_BASE_SLOTS,
  CTX_OUT_BASE_VALUES,
  CTX_OUT_CAPACITY,
  CTX_OUT_COUNT,
  CTX_OUT_DERIVED_SLOTS,
  CTX_OUT_FRAME_COUNT,
  CTX_OUT_FRAME_RECORDS,
  CTX_RA_HI,
  CTX_RA_LO,
  CTX_RECIPES,
  CTX_RECIPE_OF_CELL,
  CTX_REG_SLOTS,
  CTX_ROOM_NEEDED,
  CTX_SAVES,
  CTX_SHIFT,
  CTX_SLOTS,
  CTX_TOP_U32_INDEX,
  CTX_SP_U32_INDEX,
  CTX_STACK_BYTE,
  CTX_STACK_U32_COUNT,
  RA_SLOT_U32S,
} from "../kernel-layout";
import { RECIPE_BYTES, RECIPE_COUNTS, RECIPE_FRAME_BYTES, RECIPE_SAVE_START, RECIPE_SLOT_START } from "../../../src/safepoints/recipe-record";
export { measureStackMap, indexStackMap } from "./parse-stackmap";

/*
 * The scan kernel: takes the plain frames of one stack chunk (src/safepoints/fast-frame-rule.ts)
 * from the cursor in the context block at `ctx` (walker/scan-kernel/kernel-layout.ts), appending
 * their root pairs and frame records (walker/frame-roots.ts RootPairs) to the output columns and moving the callee-saved register slots, and stops
 * at the first frame it does not take; returns the frames taken. Addresses are u64: no float
 * arithmetic until a slot address is stored (as the f64 the JavaScript columns hold). Addresses
 * are below 2^53, so they convert as signed integers (one instruction; the unsigned conversion
 * is a sequence on x86-64); a base value may be any u64 and converts as unsigned, rounding as
 * JavaScript's hi * 2^32 + lo does.
 *
 * It stops, leaving the frame to the general unwinder, at: the chunk's stack top, the depth limit
 * (index maxDepth - 1), the chunk's boundary return address, an extra boundary, a return address
 * not in the table (0 is never a key: its probe ends at an empty cell, as does a boundary that is
 * no safepoint, which the caller then leaves out of CTX_BOUNDARY_LO), a NOT_FAST recipe, a frame reaching past the stack's u32s; and, with
 * CTX_ROOM_NEEDED set, when the frame's pairs do not fit in the output; and after CTX_MAX_TAKEN
 * frames (the frame log's capacity).
 */

@inline function ctxU32(ctx: u32, index: i32): u32 {
  return load<u32>(ctx + (<u32>index << 2));
}

export function scanFrames(ctx: u32): u32 {
  // Two instances of one loop: a collection's scan (no frame log, no chunk or extra boundary that
  // is a safepoint) gets one without those per-frame checks and the registers they hold; a logged
  // scan (the cross-check runs both) or one with such boundaries gets the other. With every
  // input live in one loop, TurboFan kept more of its values in stack slots, reloaded per frame
  // (bench/README.md, "Issue 19: where the 16-site walk and the native scan spend their time").
  const noBoundary = load<u64>(ctx + (<u32>CTX_BOUNDARY_LO << 2)) == 0 && ctxU32(ctx, CTX_BOUNDARY_COUNT) == 0;
  if (noBoundary && ctxU32(ctx, CTX_LOG) == 0 && ctxU32(ctx, CTX_MAX_TAKEN) == 0xffff_ffff && depthCannotStop(ctx)) return scanLoop(ctx, false);
  return scanLoop(ctx, true);
}

/**
 * Whether the walk from the cursor reaches the chunk's stack top before the depth limit: every
 * frame takes at least its return-address slot (RA_SLOT_U32S u32s), so at most ceil((top - spU32Index) / 2) frames
 * are left below the top; then the loop needs no depth test (a limit of 4,000,000 frames by default,
 * far above any stack of that size).
 */
@inline function depthCannotStop(ctx: u32): bool {
  const spU32Index = ctxU32(ctx, CTX_SP_U32_INDEX);
  const top = ctxU32(ctx, CTX_TOP_U32_INDEX);
  const index = ctxU32(ctx, CTX_INDEX);
  const last = ctxU32(ctx, CTX_LAST_INDEX);
  return index < last && (spU32Index >= top || (top - spU32Index + 1) >> 1 <= last - index);
}

/**
 * The frame loop of scanFrames. `logged` (a constant at each call, so each instance is compiled
 * for it) says whether the frame log, the frame limit CTX_MAX_TAKEN, the boundaries (the
 * chunk's, the extra ones) and the depth limit are in use; without them the loop tests the stack
 * top alone.
 */
@inline function scanLoop(ctx: u32, logged: bool): u32 {
  const stackByte = ctxU32(ctx, CTX_STACK_BYTE);
  const stackU32Count = ctxU32(ctx, CTX_STACK_U32_COUNT);
  const base = load<u64>(ctx + (<u32>CTX_BASE_LO << 2));
  const boundary = logged ? load<u64>(ctx + (<u32>CTX_BOUNDARY_LO << 2)) : 0;
  const topU32Index = ctxU32(ctx, CTX_TOP_U32_INDEX);
  const keys = ctxU32(ctx, CTX_KEYS);
  const mask = ctxU32(ctx, CTX_MASK);
  const shift = ctxU32(ctx, CTX_SHIFT);
  const recipeOfCell = ctxU32(ctx, CTX_RECIPE_OF_CELL);
  const recipes = ctxU32(ctx, CTX_RECIPES);
  const slots = ctxU32(ctx, CTX_SLOTS);
  const saves = ctxU32(ctx, CTX_SAVES);
  const baseSlots = ctxU32(ctx, CTX_OUT_BASE_SLOTS);
  const derivedSlots = ctxU32(ctx, CTX_OUT_DERIVED_SLOTS);
  const baseValues = ctxU32(ctx, CTX_OUT_BASE_VALUES);
  const capacity = ctxU32(ctx, CTX_OUT_CAPACITY);
  const regSlots = ctxU32(ctx, CTX_REG_SLOTS);
  const log = logged ? ctxU32(ctx, CTX_LOG) : 0;
  const boundaryList = logged ? ctxU32(ctx, CTX_BOUNDARIES) : 0;
  const boundaryCount = logged ? ctxU32(ctx, CTX_BOUNDARY_COUNT) : 0;
  const firstIndex = ctxU32(ctx, CTX_INDEX);
  const lastIndex = ctxU32(ctx, CTX_LAST_INDEX);
  // One bound for the depth limit and the frames per call: the loop stops at frame index `stop`.
  let stop = lastIndex;
  if (logged) {
    const maxTaken = ctxU32(ctx, CTX_MAX_TAKEN);
    if (firstIndex < lastIndex && lastIndex - firstIndex > maxTaken) stop = firstIndex + maxTaken;
  }
  let n = ctxU32(ctx, CTX_OUT_COUNT);
  let record = ctxU32(ctx, CTX_OUT_FRAME_RECORDS) + (ctxU32(ctx, CTX_OUT_FRAME_COUNT) << 3);
  let spU32Index = ctxU32(ctx, CTX_SP_U32_INDEX);
  let index = firstIndex;
  let ra = (<u64>ctxU32(ctx, CTX_RA_HI) << 32) | <u64>ctxU32(ctx, CTX_RA_LO);
  let roomNeeded: u32 = 0;
  while (spU32Index < topU32Index && (!logged || (index < stop && ra != boundary))) {
    // A return address not in the table ends at an empty cell: RECIPE_NOT_FOUND, below 0 too.
    const r = load<i32>(recipeOfCell + (probeEnd(keys, mask, shift, ra) << 2));
    if (r < 0) break;
    const recipe = recipes + <u32>r * RECIPE_BYTES;
    // The frame, then the return-address slot between it and the CFA.
    const cfaU32Index = spU32Index + (load<u32>(recipe + RECIPE_FRAME_BYTES) >> 2) + RA_SLOT_U32S;
    if (cfaU32Index > stackU32Count) break;
    if (logged && boundaryCount != 0 && isListed(boundaryList, boundaryCount, ra)) break;
    const counts = load<u32>(recipe + RECIPE_COUNTS);
    const pairs = counts & 0xffff;
    if (n + pairs > capacity) {
      roomNeeded = pairs;
      break;
    }
    const sp = base + (<u64>spU32Index << 2);
    const frameByte = stackByte + (spU32Index << 2);
    if (logged && log != 0) {
      const at = log + ((index - firstIndex) << 4);
      store<f64>(at, <f64>(<i64>sp));
      store<f64>(at + 8, <f64>ra);
    }
    if (pairs != 0) {
      // The frame's record: room is certain, as records never outnumber pairs.
      store<u32>(record, index);
      store<u32>(record + 4, n);
      record += 8;
    }
    let s = slots + (load<u32>(recipe + RECIPE_SLOT_START) << 3);
    // Four pairs per step while more than four are left, then the last one to four through a
    // fall-through switch: a frame of up to four pairs runs no pair loop (and no loop's stack check).
    let o = n << 3;
    let left = pairs;
    for (; left > 4; left -= 4) {
      appendPair(s, sp, frameByte, baseSlots + o, derivedSlots + o, baseValues + o, 0);
      appendPair(s, sp, frameByte, baseSlots + o, derivedSlots + o, baseValues + o, 8);
      appendPair(s, sp, frameByte, baseSlots + o, derivedSlots + o, baseValues + o, 16);
      appendPair(s, sp, frameByte, baseSlots + o, derivedSlots + o, baseValues + o, 24);
      s += 32;
      o += 32;
    }
    switch (left) {
      case 4:
        appendPair(s, sp, frameByte, baseSlots + o, derivedSlots + o, baseValues + o, 24);
      case 3:
        appendPair(s, sp, frameByte, baseSlots + o, derivedSlots + o, baseValues + o, 16);
      case 2:
        appendPair(s, sp, frameByte, baseSlots + o, derivedSlots + o, baseValues + o, 8);
      case 1:
        appendPair(s, sp, frameByte, baseSlots + o, derivedSlots + o, baseValues + o, 0);
    }
    n += pairs;
    const savedRegisters = counts >> 16;
    if (savedRegisters != 0) {
      const cfa = base + (<u64>cfaU32Index << 2);
      let v = saves + (load<u32>(recipe + RECIPE_SAVE_START) << 3);
      const savesEnd = v + (savedRegisters << 3);
      for (; v < savesEnd; v += 8) store<f64>(regSlots + (load<u32>(v) << 3), <f64>(<i64>(cfa + <u64>load<i32>(v + 4))));
    }
    ra = load<u64>(stackByte + (cfaU32Index << 2) - 8);
    spU32Index = cfaU32Index;
    index++;
  }
  store<u32>(ctx + (<u32>CTX_SP_U32_INDEX << 2), spU32Index);
  // The cursor's return address is the u64 below its SP (read again here, so that `ra` is not
  // live after the loop: TurboFan spilled it every frame for this store).
  if (index != firstIndex) store<u64>(ctx + (<u32>CTX_RA_LO << 2), load<u64>(stackByte + (spU32Index << 2) - 8));
  store<u32>(ctx + (<u32>CTX_INDEX << 2), index);
  store<u32>(ctx + (<u32>CTX_OUT_COUNT << 2), n);
  store<u32>(ctx + (<u32>CTX_OUT_FRAME_COUNT << 2), (record - ctxU32(ctx, CTX_OUT_FRAME_RECORDS)) >> 3);
  store<u32>(ctx + (<u32>CTX_ROOM_NEEDED << 2), roomNeeded);
  return index - firstIndex;
}

/**
 * Appends the pair at `s + j` (base, derived offsets from SP) of the frame at `sp` at byte `j` of
 * the columns `bs`, `ds`, `bv`. A plain root (derived offset = base offset, most roots) stores its
 * converted base slot twice: one u64 -> f64 conversion fewer per pair, the conversions being the
 * part of a pair's work C does not have (bench/HISTORY.md, issue 34).
 */
@inline function appendPair(s: u32, sp: u64, frameByte: u32, bs: u32, ds: u32, bv: u32, j: u32): void {
  const baseOffset = load<u32>(s + j);
  const derivedOffset = load<u32>(s + j + 4);
  const baseSlot = <f64>(<i64>(sp + <u64>baseOffset));
  store<f64>(bs + j, baseSlot);
  if (derivedOffset == baseOffset) store<f64>(ds + j, baseSlot);
  else store<f64>(ds + j, <f64>(<i64>(sp + <u64>derivedOffset)));
  store<f64>(bv + j, <f64>load<u64>(frameByte + baseOffset));
}

/** `ra` is one of the `count` u64 return addresses at `list`. */
function isListed(list: u32, count: u32, ra: u64): bool {
  for (let i: u32 = 0; i < count; i++) if (load<u64>(list + (i << 3)) == ra) return true;
  return false;
}

/**
 * THE table probe (the one scanFrames and findRecipes run): the cell holding the u64 key `ra` in
 * the table at `keys` (capacity mask + 1 cells of u64, 0 = empty; src/safepoints/scan-layout.ts),
 * or, when `ra` is not a key, the empty cell that ends its probe sequence. Either way the cell's
 * recipe (recipe of cell) is the answer: RECIPE_NOT_FOUND for an empty cell. SafepointTable's
 * hash and linear probing. The home cell is tested before the loop, so a hit there or a miss at an
 * empty home runs no loop (and no loop's stack check). 0 is never a key: its probe ends at the first
 * empty cell.
 */
@inline function probeEnd(keys: u32, mask: u32, shift: u32, ra: u64): u32 {
  let cell = ((<u32>ra ^ (<u32>(ra >> 32) * 0x85ebca6b)) * 0x9e3779b1) >>> shift;
  let key = load<u64>(keys + (cell << 3));
  if (key != ra) {
    while (key != 0) {
      cell = (cell + 1) & mask;
      key = load<u64>(keys + (cell << 3));
      if (key == ra) break;
    }
  }
  return cell;
}

/**
 * Looks up `count` u64 return addresses at `queries` in the table (probeEnd's arguments, the
 * recipe index per cell at `recipeOfCell`) and writes an i32 per address at `out`: its recipe
 * index, NOT_FAST (-1) for a safepoint the kernel leaves to the general unwinder, or
 * RECIPE_NOT_FOUND (-2) for an address that is no safepoint. The same probe and the same one load
 * to the recipe as a frame of scanFrames, without the walk around it.
 */
export function findRecipes(keys: u32, mask: u32, shift: u32, recipeOfCell: u32, queries: u32, count: u32, out: u32): void {
  for (let q: u32 = 0; q < count; q++) {
    store<i32>(out + (q << 2), load<i32>(recipeOfCell + (probeEnd(keys, mask, shift, load<u64>(queries + (q << 3))) << 2)));
  }
}
