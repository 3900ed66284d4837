import { scanMemory } from "../../src/memory/scan-memory.js";
import { RECIPE_BYTES, RECIPE_COUNTS, RECIPE_FRAME_BYTES, RECIPE_SAVE_START, RECIPE_SLOT_START } from "../../src/safepoints/recipe-record.js";
import * as L from "./kernel-layout.js";
import { scanKernel } from "./load-kernel.js";

/*
 * The scan kernel run before the first collection, so that collections do not pay for V8's
 * tiers. V8 compiles a WebAssembly function at its first call with its baseline compiler
 * (Liftoff) and recompiles it with its optimising one (TurboFan), in the background, only after
 * it has executed a budget of code (`--wasm-tiering-budget`, ~1.8 MB of executed wasm); a call
 * that is running never switches (no on-stack replacement for wasm). Without a warm-up the first
 * deep scan ran entirely in baseline code: 3.9-5.0 ms for 10,002 frames against 1.6-2.4 with
 * `--no-wasm-dynamic-tiering` (bench/README.md), a flag a library cannot set.
 *
 * warmScanKernel runs the kernel, in the instance collections use (no frame log, no boundaries),
 * over a synthetic world of its own in a scratch region it releases: a two-cell table whose two
 * cells hold one return address (so every probe hits at once), one recipe (an 8-byte frame with
 * one root at sp + 0), and a stack of WARM_FRAMES such frames whose last return address is 0. No
 * registered map, stack or root pair is read or written.
 */

/**
 * Frames per call and calls: enough executed code for V8 to schedule the optimised tier (Node 20's
 * V8, `--trace-wasm-compilation-times`: 2,048 frames do, 1,024 do not; 4,096 for a margin).
 */
const WARM_FRAMES = 1024;
const WARM_CALLS = 4;
const RA = 0x1000;
const KEYS_BYTE = 256;
const RECIPE_OF_CELL_BYTE = KEYS_BYTE + 16;
const RECIPES_BYTE = RECIPE_OF_CELL_BYTE + 8;
const SLOTS_BYTE = RECIPES_BYTE + RECIPE_BYTES;
const REG_SLOTS_BYTE = SLOTS_BYTE + 16;
const STACK_BYTE = 4096;
const FRAME_BYTES = 16;

/** Runs the kernel WARM_CALLS times over WARM_FRAMES synthetic frames; returns the frames it took (for tests). */
export function warmScanKernel(): number {
  const memory = scanMemory();
  const outputByte = STACK_BYTE + WARM_FRAMES * FRAME_BYTES;
  const region = memory.allocate(outputByte + WARM_FRAMES * 32, "scan kernel warm-up");
  try {
    const at = region.offset;
    const words = memory.words;
    const word = (byte: number, value: number): void => {
      words[(at + byte) >>> 2] = value;
    };
    word(KEYS_BYTE, RA);
    word(KEYS_BYTE + 8, RA);
    word(RECIPE_OF_CELL_BYTE, 0);
    word(RECIPE_OF_CELL_BYTE + 4, 0);
    word(RECIPES_BYTE + RECIPE_FRAME_BYTES, FRAME_BYTES - 8);
    word(RECIPES_BYTE + RECIPE_SLOT_START, 0);
    word(RECIPES_BYTE + RECIPE_COUNTS, 1);
    word(RECIPES_BYTE + RECIPE_SAVE_START, 0);
    for (let f = 0; f < WARM_FRAMES; f++) {
      word(STACK_BYTE + f * FRAME_BYTES, f);
      word(STACK_BYTE + f * FRAME_BYTES + 8, f === WARM_FRAMES - 1 ? 0 : RA);
    }
    const ctx = (index: number, value: number): void => word(index * 4, value);
    ctx(L.CTX_STACK_BYTE, at + STACK_BYTE);
    ctx(L.CTX_STACK_U32_COUNT, (WARM_FRAMES * FRAME_BYTES) / 4);
    ctx(L.CTX_BASE_LO, 0x10_0000);
    ctx(L.CTX_TOP_U32_INDEX, (WARM_FRAMES * FRAME_BYTES) / 4);
    ctx(L.CTX_LAST_INDEX, WARM_FRAMES + 1);
    ctx(L.CTX_KEYS, at + KEYS_BYTE);
    ctx(L.CTX_MASK, 1);
    ctx(L.CTX_SHIFT, 31);
    ctx(L.CTX_RECIPE_OF_CELL, at + RECIPE_OF_CELL_BYTE);
    ctx(L.CTX_RECIPES, at + RECIPES_BYTE);
    ctx(L.CTX_SLOTS, at + SLOTS_BYTE);
    ctx(L.CTX_SAVES, at + SLOTS_BYTE);
    ctx(L.CTX_REG_SLOTS, at + REG_SLOTS_BYTE);
    ctx(L.CTX_MAX_TAKEN, 0xffff_ffff);
    ctx(L.CTX_OUT_BASE_SLOTS, at + outputByte);
    ctx(L.CTX_OUT_DERIVED_SLOTS, at + outputByte + WARM_FRAMES * 8);
    ctx(L.CTX_OUT_BASE_VALUES, at + outputByte + WARM_FRAMES * 16);
    ctx(L.CTX_OUT_FRAME_RECORDS, at + outputByte + WARM_FRAMES * 24);
    ctx(L.CTX_OUT_CAPACITY, WARM_FRAMES);
    const scanFrames = scanKernel();
    let taken = 0;
    for (let c = 0; c < WARM_CALLS; c++) {
      ctx(L.CTX_SP_U32_INDEX, 0);
      ctx(L.CTX_RA_LO, RA);
      ctx(L.CTX_RA_HI, 0);
      ctx(L.CTX_INDEX, 0);
      ctx(L.CTX_OUT_COUNT, 0);
      ctx(L.CTX_OUT_FRAME_COUNT, 0);
      taken += scanFrames(at);
    }
    return taken;
  } finally {
    region.release();
  }
}
