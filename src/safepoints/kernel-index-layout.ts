/*
 * The job block of the scan kernel's stack map index (walker/scan-kernel/assembly/parse-stackmap.ts,
 * called by src/safepoints/kernel-index.ts): u32 words at these indices, byte offsets into the
 * scan memory unless said otherwise. Compiled by tsc and asc: plain constants only.
 *
 * `measureStackMap(job)` reads the inputs up to JOB_BIAS_HI and writes JOB_RECORDS and
 * JOB_LOCATIONS; `indexStackMap(job)` reads everything else the caller sized from them and writes
 * JOB_RECIPE_COUNT and JOB_SLOT_WORDS. Both return JOB_INDEXED, or JOB_DECLINED for any section the
 * general decoder must take (anything malformed, and what the kernel leaves to it).
 */

/** The section's bytes (8-aligned) and their length. */
export const JOB_SECTION = 0;
export const JOB_SECTION_BYTES = 1;
/** The load bias added to every return address: an i64 as (lo, hi). */
export const JOB_BIAS_LO = 2;
export const JOB_BIAS_HI = 3;
/** Out of measure: records (= safepoints) and locations of every blob. */
export const JOB_RECORDS = 4;
export const JOB_LOCATIONS = 5;
/** The fast-frame rule's parameters (src/safepoints/fast-frame-rule.ts): the SP's DWARF number, the return address's CFA offset (i32). */
export const JOB_SP_DWARF = 6;
export const JOB_RA_CFA_OFFSET = 7;
/** The table (SafepointTable's columns): log2 of its capacity; keys (u64 per cell), values (module slot, descriptor: u32 each), addresses (f64). */
export const JOB_LOG_CAPACITY = 8;
export const JOB_TABLE_KEYS = 9;
export const JOB_TABLE_VALUES = 10;
export const JOB_TABLE_ADDRESSES = 11;
/** The recipes (ScanRecipes' columns): recipe per safepoint (i32); per recipe frame bytes (i32), slot start (u32), pair count (u16); slot words (i32). */
export const JOB_RECIPE_OF_SAFEPOINT = 12;
export const JOB_FRAME_BYTES = 13;
export const JOB_SLOT_START = 14;
export const JOB_PAIR_COUNT = 15;
export const JOB_SLOTS = 16;
/** Scratch: the recipe hash index, (hash u32, recipe i32) per cell, 2^JOB_HASH_LOG_CAPACITY cells. */
export const JOB_HASH_INDEX = 17;
export const JOB_HASH_LOG_CAPACITY = 18;
/** Out of index: recipes and slot words written. */
export const JOB_RECIPE_COUNT = 19;
export const JOB_SLOT_WORDS = 20;
export const JOB_WORDS = 21;

export const JOB_INDEXED = 0;
export const JOB_DECLINED = 1;
