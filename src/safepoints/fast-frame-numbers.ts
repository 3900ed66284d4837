/*
 * The numbers of the fast-frame rule (src/safepoints/fast-frame-rule.ts states the rule) as plain
 * constants: the general path's rule (fast-frame-rule.ts, read by src/safepoints/scan-recipes.ts
 * and walker/frame-roots.ts) and the scan kernel's parse (walker/scan-kernel/assembly/
 * parse-stackmap.ts compileRecipe) both read them, so the two compilers cannot disagree on them.
 * A fast root is `Indirect [sp + off]` (stackmap-v3-layout.ts LOCATION_KIND_INDIRECT, the SP's DWARF
 * register: kernel-index-layout.ts JOB_SP_DWARF). Compiled by tsc and by asc: numbers only.
 */

/** A fast frame's static size (SP to the return-address slot) is a multiple of this: the caller's SP stays 8-aligned. */
export const FAST_FRAME_ALIGN_BYTES = 8;
/** The gc allocas of a fast frame: none (their Direct locations are not plain slots). */
export const FAST_FRAME_GC_ALLOCAS = 0;
/** A fast root's slot: this many bytes at an offset that is a multiple of it, inside [sp, cfa). Both alignments are powers of 2. */
export const FAST_ROOT_SLOT_BYTES = 8;
