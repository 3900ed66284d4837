/*
 * The scan kernel's view of the scan memory (src/memory/scan-memory.ts): what the AssemblyScript
 * kernel (walker/scan-kernel/assembly/kernel.ts) and its JavaScript caller
 * (walker/kernel-binding.ts) agree on. This file is compiled by both tsc and asc, so
 * it holds plain numeric constants only.
 *
 * Units: the kernel indexes the stack and this block in u32s (4 bytes; an 8-byte word, as
 * "word" means everywhere else in rootwalk, is two of them): names say `U32` where they count u32s
 * and `BYTE` where they are byte offsets.
 *
 * The context block (one per scanning thread, a region of its own): u32s at these indices,
 * byte offsets into the scan memory unless said otherwise. The caller fills the inputs before a
 * call; the kernel reads them and writes the cursor words back before it returns (JS reads them
 * through a Uint32Array: an i64 global would cost a BigInt per call).
 */

/** The stack: byte offset (in the scan memory) of its u32 at address `base`, and how many u32s it has. */
export const CTX_STACK_BYTE = 0;
export const CTX_STACK_U32_COUNT = 1;
/** The stack's first address, as two u32 halves (lo, hi): context indices 2 and 3, 8-aligned. */
export const CTX_BASE_LO = 2;
export const CTX_BASE_HI = 3;
/**
 * The chunk's boundary return address when it is a safepoint (0, 0 when none or not a safepoint:
 * the probe stops the kernel there anyway), its stack top as a u32 index, maxDepth - 1.
 */
export const CTX_BOUNDARY_LO = 4;
export const CTX_BOUNDARY_HI = 5;
export const CTX_TOP_U32_INDEX = 6;
export const CTX_LAST_INDEX = 7;
/** The table: key cells (u64 each), capacity - 1, hash shift, the recipe index per cell (i32). */
export const CTX_KEYS = 8;
export const CTX_MASK = 9;
export const CTX_SHIFT = 10;
export const CTX_RECIPE_OF_CELL = 11;
/** Recipe records (RECIPE_BYTES each), root slot pairs (two i32 each), save pairs (two i32 each). */
export const CTX_RECIPES = 12;
export const CTX_SLOTS = 13;
export const CTX_SAVES = 14;
/**
 * Output columns (RootPairs): base slot, derived slot, base value (f64 each) per pair; per frame
 * with pairs a record (frame index, first pair: i32 each), as many as there is room for pairs.
 */
export const CTX_OUT_BASE_SLOTS = 15;
export const CTX_OUT_DERIVED_SLOTS = 16;
export const CTX_OUT_BASE_VALUES = 17;
export const CTX_OUT_FRAME_RECORDS = 18;
export const CTX_OUT_CAPACITY = 19;
/** Pairs in the output: read at entry, written back. */
export const CTX_OUT_COUNT = 20;
/** Where each callee-saved register lives (f64 each, the Unwinder's regSlots). */
export const CTX_REG_SLOTS = 21;
/** When not 0: (sp, ra) of every frame taken, f64 each, from the start of the call. */
export const CTX_LOG = 22;
/** The most frames one call takes (the log's capacity; 2^32 - 1 without a log). */
export const CTX_MAX_TAKEN = 31;
/** Extra boundaries that are also safepoints: `count` u64 return addresses. */
export const CTX_BOUNDARIES = 23;
export const CTX_BOUNDARY_COUNT = 24;
/** The cursor: the next frame's SP (u32 index into the stack), return address (lo, hi), frame index. */
export const CTX_SP_U32_INDEX = 25;
export const CTX_RA_LO = 26;
export const CTX_RA_HI = 27;
export const CTX_INDEX = 28;
/** Set when the next frame's pairs do not fit in the output: that many more are needed. */
export const CTX_ROOM_NEEDED = 29;
/** Frame records in the output: read at entry, written back. */
export const CTX_OUT_FRAME_COUNT = 30;
/** The context block's size in u32s. */
export const CTX_U32_COUNT = 32;

/**
 * The return-address slot between a fast (x86-64) frame and its CFA, in u32s: 8 bytes, pushed by
 * `call` (src/arch/x86-64.ts returnAddressCfaOffsetBytes), so CFA = SP + frame bytes + 8.
 */
export const RA_SLOT_U32S = 2;
