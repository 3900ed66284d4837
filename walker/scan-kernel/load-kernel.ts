import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { RootwalkError } from "../../src/errors.js";
import { scanMemory } from "../../src/memory/scan-memory.js";

/*
 * The scan kernel's WebAssembly module (built from walker/scan-kernel/assembly/kernel.ts by
 * `npm run build:kernel`, committed beside this file and copied next to its compiled form in
 * dist/ by `npm run build`), instantiated once per process on the scan memory, at the first scan or before it
 * (StackRootScanner.prepareScans, at gc_init in the native runtime).
 * It is found relative to this module, so the same code loads it from the sources (vitest) and
 * from dist/ (the installed package, which has no AssemblyScript).
 */

/** `scanFrames(ctx)`: the frames taken from the cursor in the context block at byte `ctx`. */
export type ScanFrames = (ctx: number) => number;

export const SCAN_KERNEL_FILE = fileURLToPath(new URL("./scan-kernel.wasm", import.meta.url));

let scanFrames: ScanFrames | undefined;

export function scanKernel(): ScanFrames {
  scanFrames ??= instantiate();
  return scanFrames;
}

function instantiate(): ScanFrames {
  let bytes: Buffer;
  try {
    bytes = readFileSync(SCAN_KERNEL_FILE);
  } catch (e) {
    throw new RootwalkError("TOOL", `scan kernel ${SCAN_KERNEL_FILE}: ${(e as Error).message}, expected the module \`npm run build\` makes`);
  }
  const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory: scanMemory().memory } });
  return instance.exports["scanFrames"] as ScanFrames;
}
