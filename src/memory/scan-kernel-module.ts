import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { RootwalkError } from "../errors.js";
import { scanMemory } from "./scan-memory.js";

/*
 * The scan kernel's WebAssembly module (built from walker/scan-kernel/assembly/ by
 * `npm run build:kernel`, committed as walker/scan-kernel/scan-kernel.wasm and copied next to its
 * compiled form in dist/ by `npm run build`), instantiated once per process on the scan memory,
 * at first use. It is found relative to this module (src/memory/ -> walker/scan-kernel/, the same
 * in the sources and in dist/), so an installed package needs no AssemblyScript. Its users: the
 * scan loop (walker/scan-kernel/load-kernel.ts) and the stack map index
 * (src/safepoints/kernel-index.ts).
 */

export const SCAN_KERNEL_FILE = fileURLToPath(new URL("../../walker/scan-kernel/scan-kernel.wasm", import.meta.url));

let exports: WebAssembly.Exports | undefined;

/** The module's exports (functions of u32 byte offsets into the scan memory). */
export function scanKernelExports(): WebAssembly.Exports {
  exports ??= instantiate();
  return exports;
}

function instantiate(): WebAssembly.Exports {
  let bytes: Buffer;
  try {
    bytes = readFileSync(SCAN_KERNEL_FILE);
  } catch (e) {
    throw new RootwalkError("TOOL", `scan kernel ${SCAN_KERNEL_FILE}: ${(e as Error).message}, expected the module \`npm run build\` makes`);
  }
  return new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory: scanMemory().memory } }).exports;
}
