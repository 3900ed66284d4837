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
  CTX_TOP_WORD,
  CTX_W,
  CTX_WORDS,
  CTX_WORD_COUNT,
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
 * of 0 or not in the table, a NOT_FAST recipe, a frame reaching past the stack words; and, with
 * CTX_ROOM_NEEDED set, when the frame's pairs do not fit in the output; and after CTX_MAX_TAKEN
 * frames (the frame log's capacity).
 */

@inline function word(ctx: u32, index: i32): u32 {
  return load<u32>(ctx + (<u32>index << 2));
}

export function scanFrames(ctx: u32): u32 {
  const words = word(ctx, CTX_WORDS);
  const wordCount = word(ctx, CTX_WORD_COUNT);
  const base = load<u64>(ctx + (<u32>CTX_BASE_LO << 2));
  const boundary = load<u64>(ctx + (<u32>CTX_BOUNDARY_LO << 2));
  const topWord = word(ctx, CTX_TOP_WORD);
  const lastIndex = word(ctx, CTX_LAST_INDEX);
  const keys = word(ctx, CTX_KEYS);
  const mask = word(ctx, CTX_MASK);
  const shift = word(ctx, CTX_SHIFT);
  const recipeOfCell = word(ctx, CTX_RECIPE_OF_CELL);
  const recipes = word(ctx, CTX_RECIPES);
  const slots = word(ctx, CTX_SLOTS);
  const saves = word(ctx, CTX_SAVES);
  const baseSlots = word(ctx, CTX_OUT_BASE_SLOTS);
  const derivedSlots = word(ctx, CTX_OUT_DERIVED_SLOTS);
  const baseValues = word(ctx, CTX_OUT_BASE_VALUES);
  const frameRecords = word(ctx, CTX_OUT_FRAME_RECORDS);
  const capacity = word(ctx, CTX_OUT_CAPACITY);
  const regSlots = word(ctx, CTX_REG_SLOTS);
  const log = word(ctx, CTX_LOG);
  const maxTaken = word(ctx, CTX_MAX_TAKEN);
  const boundaryList = word(ctx, CTX_BOUNDARIES);
  const boundaryCount = word(ctx, CTX_BOUNDARY_COUNT);
  let n = word(ctx, CTX_OUT_COUNT);
  let frameCount = word(ctx, CTX_OUT_FRAME_COUNT);
  let w = word(ctx, CTX_W);
  let index = word(ctx, CTX_INDEX);
  let ra = (<u64>word(ctx, CTX_RA_HI) << 32) | <u64>word(ctx, CTX_RA_LO);
  let taken: u32 = 0;
  let roomNeeded: u32 = 0;
  while (w < topWord && index < lastIndex && ra != boundary && ra != 0 && taken < maxTaken) {
    // The table probe (SafepointTable.findHalves on the u64 key).
    const lo = <u32>ra;
    const hi = <u32>(ra >> 32);
    let cell = ((lo ^ (hi * 0x85ebca6b)) * 0x9e3779b1) >>> shift;
    let key = load<u64>(keys + (cell << 3));
    while (key != ra && key != 0) {
      cell = (cell + 1) & mask;
      key = load<u64>(keys + (cell << 3));
    }
    if (key == 0) break;
    const r = load<i32>(recipeOfCell + (cell << 2));
    if (r < 0) break;
    const recipe = recipes + <u32>r * RECIPE_BYTES;
    // + 2 words: the return-address slot between the frame and the CFA.
    const cfaWord = w + (load<u32>(recipe + RECIPE_FRAME_BYTES) >> 2) + 2;
    if (cfaWord > wordCount) break;
    if (boundaryCount != 0 && isListed(boundaryList, boundaryCount, ra)) break;
    const counts = load<u32>(recipe + RECIPE_COUNTS);
    const pairs = counts & 0xffff;
    if (n + pairs > capacity) {
      roomNeeded = pairs;
      break;
    }
    const sp = base + (<u64>w << 2);
    const frameWords = words + (w << 2);
    if (log != 0) {
      store<f64>(log + (taken << 4), <f64>(<i64>sp));
      store<f64>(log + (taken << 4) + 8, <f64>ra);
    }
    if (pairs != 0) {
      // The frame's record: room is certain, as records never outnumber pairs.
      store<u32>(frameRecords + (frameCount << 3), index);
      store<u32>(frameRecords + (frameCount << 3) + 4, n);
      frameCount++;
    }
    let s = slots + (load<u32>(recipe + RECIPE_SLOT_START) << 3);
    const end = s + (pairs << 3);
    for (; s < end; s += 8) {
      const baseOffset = load<u32>(s);
      store<f64>(baseSlots + (n << 3), <f64>(<i64>(sp + <u64>baseOffset)));
      store<f64>(derivedSlots + (n << 3), <f64>(<i64>(sp + <u64>load<u32>(s + 4))));
      store<f64>(baseValues + (n << 3), <f64>load<u64>(frameWords + baseOffset));
      n++;
    }
    const savedRegisters = counts >> 16;
    if (savedRegisters != 0) {
      const cfa = base + (<u64>cfaWord << 2);
      let v = saves + (load<u32>(recipe + RECIPE_SAVE_START) << 3);
      const savesEnd = v + (savedRegisters << 3);
      for (; v < savesEnd; v += 8) store<f64>(regSlots + (load<u32>(v) << 3), <f64>(<i64>(cfa + <u64>load<i32>(v + 4))));
    }
    ra = load<u64>(words + (cfaWord << 2) - 8);
    w = cfaWord;
    index++;
    taken++;
  }
  store<u32>(ctx + (<u32>CTX_W << 2), w);
  store<u32>(ctx + (<u32>CTX_RA_LO << 2), <u32>ra);
  store<u32>(ctx + (<u32>CTX_RA_HI << 2), <u32>(ra >> 32));
  store<u32>(ctx + (<u32>CTX_INDEX << 2), index);
  store<u32>(ctx + (<u32>CTX_OUT_COUNT << 2), n);
  store<u32>(ctx + (<u32>CTX_OUT_FRAME_COUNT << 2), frameCount);
  store<u32>(ctx + (<u32>CTX_ROOM_NEEDED << 2), roomNeeded);
  return taken;
}

/** `ra` is one of the `count` u64 return addresses at `list`. */
function isListed(list: u32, count: u32, ra: u64): bool {
  for (let i: u32 = 0; i < count; i++) if (load<u64>(list + (i << 3)) == ra) return true;
  return false;
}
