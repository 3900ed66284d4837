import { scanKernelExports } from "../../src/memory/scan-kernel-module.js";

/*
 * The scan loop of the scan kernel's WebAssembly module (src/memory/scan-kernel-module.ts loads
 * the module, once per process, at the first scan or registration that needs it, or before it:
 * StackRootScanner.prepareScans, at gc_init in the native runtime).
 */

export { SCAN_KERNEL_FILE } from "../../src/memory/scan-kernel-module.js";

/** `scanFrames(ctx)`: the frames taken from the cursor in the context block at byte `ctx`. */
export type ScanFrames = (ctx: number) => number;
/** `findRecipes(keys, mask, shift, recipeOfCell, queries, count, out)`: see kernel.ts. */
export type FindRecipes = (keys: number, mask: number, shift: number, recipeOfCell: number, queries: number, count: number, out: number) => void;

export function scanKernel(): ScanFrames {
  return scanKernelExports()["scanFrames"] as ScanFrames;
}

/** The kernel's batch lookup (walker/scan-kernel/recipe-lookup.ts calls it). */
export function findRecipesKernel(): FindRecipes {
  return scanKernelExports()["findRecipes"] as FindRecipes;
}
