/*
 * A scan recipe as the scan kernel reads it (src/safepoints/scan-layout.ts writes them into the
 * scan memory, walker/scan-kernel/assembly/kernel.ts reads them): RECIPE_BYTES per recipe, u32
 * words at these byte offsets. Plain constants only: asc compiles this file too.
 *   frame bytes        SP to the return-address slot (ScanRecipes.frameBytes)
 *   slot start         its first (base, derived) offset pair in the slot column, in pairs
 *   counts             pair count | saved-register count << 16
 *   save start         its first (register, CFA offset) pair in the save column, in pairs
 * A safepoint's recipe index is NOT_FAST when the general unwinder takes its frames.
 */
export const RECIPE_BYTES = 16;
export const RECIPE_FRAME_BYTES = 0;
export const RECIPE_SLOT_START = 4;
export const RECIPE_COUNTS = 8;
export const RECIPE_SAVE_START = 12;
/**
 * The recipe index of an empty table cell (src/safepoints/scan-layout.ts): a probe ends at the
 * cell holding its key or at the empty cell ending its sequence, so the one load of the cell's
 * recipe also answers "not in the table". Recipes are >= 0; NOT_FAST is -1.
 */
export const RECIPE_NOT_FOUND = -2;

/** The recipe index of a safepoint whose frames the scan kernel leaves to the general unwinder. */
export const NOT_FAST = -1;
