import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { RootwalkError } from "../../src/errors.js";
import { scanMemory } from "../../src/memory/scan-memory.js";

/*
 * The scan kernel's WebAssembly module (built from walker/scan-kernel/assembly/kernel.ts by
 * `npm run build:kernel`, committed beside this file and copied next to its compiled form in
 * dist/ by `npm run build`), instantiated once per process on the scan memory, at the first scan.
 * It is found relative to this module, so the same code loads it from the sources (vitest) and
 * from dist/ (the installed package, which has no AssemblyScript).
 */

/** `scanFrames(ctx)`: the frames taken from the cursor in the context block at byte `ctx`. */
export type ScanFrames = (ctx: number) => number;
/** `findRecipes(keys, mask, shift, recipeOfCell, queries, count, out)`: see kernel.ts. */
export type FindRecipes = (keys: number, mask: number, shift: number, recipeOfCell: number, queries: number, count: number, out: number) => void;

interface KernelExports {
  scanFrames: ScanFrames;
  findRecipes: FindRecipes;
}

export const SCAN_KERNEL_FILE = fileURLToPath(new URL("./scan-kernel.wasm", import.meta.url));

let kernel: KernelExports | undefined;

export function scanKernel(): ScanFrames {
  kernel ??= instantiate();
  return kernel.scanFrames;
}

/** The kernel's batch lookup (walker/scan-kernel/recipe-lookup.ts calls it). */
export function findRecipesKernel(): FindRecipes {
  kernel ??= instantiate();
  return kernel.findRecipes;
}

function instantiate(): KernelExports {
  let bytes: Buffer;
  try {
    bytes = readFileSync(SCAN_KERNEL_FILE);
  } catch (e) {
    throw new RootwalkError("TOOL", `scan kernel ${SCAN_KERNEL_FILE}: ${(e as Error).message}, expected the module \`npm run build\` makes`);
  }
  const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory: scanMemory().memory } });
  return { scanFrames: instance.exports["scanFrames"] as ScanFrames, findRecipes: instance.exports["findRecipes"] as FindRecipes };
}
