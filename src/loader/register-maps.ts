import { createHash } from "node:crypto";
import type { SafepointRegistry } from "../safepoints/registry.js";
import { parseStackMapSection } from "../stackmap/llvm-stackmap.js";
import type { StatepointRecognition } from "../stackmap/statepoint.js";
import { buildLlvmDescriptors, type LlvmLoadOptions } from "./llvm-map-loader.js";
import { loadObjectStackMaps } from "./object-file.js";
import { InvalidArgumentError } from "../errors.js";

/**
 * Registers the LLVM stack maps of an ELF file (object, shared library, executable) loaded at
 * `loadBias` (0 for a non-PIE executable; the dladdr base for a library). Returns the handle,
 * or undefined when the file has no `.llvm_stackmaps`.
 */
export function registerObjectFile(
  registry: SafepointRegistry,
  bytes: Uint8Array,
  options: { path: string; loadBias?: number; recognition?: StatepointRecognition },
): number | undefined {
  const loaded = loadObjectStackMaps(bytes, options.path, options.recognition ? { recognition: options.recognition } : {});
  if (loaded === undefined) return undefined;
  return registry.register({
    name: options.path, format: "llvm-v3", descriptors: loaded.descriptors, loadBias: options.loadBias ?? 0, contentKey: loaded.contentKey,
  });
}

/**
 * Registers a `.llvm_stackmaps` section given as bytes, e.g. read from process memory at the
 * address a program passed to `gc_init` (its function addresses are already absolute). Without
 * `unwindRowAt` the recorded stack sizes are all there is: call sites with pushed arguments are
 * then only right if the code was built with `-no-x86-call-frame-opt`.
 */
export function registerStackMapBytes(
  registry: SafepointRegistry,
  bytes: Uint8Array,
  options: { name: string; loadBias?: number } & Pick<LlvmLoadOptions, "unwindRowAt" | "recognition">,
): number {
  if (bytes.byteLength === 0) throw new InvalidArgumentError("stack map bytes", "0 bytes", "a .llvm_stackmaps section");
  const blobs = parseStackMapSection(bytes);
  const descriptors = buildLlvmDescriptors(blobs, {
    ...(options.unwindRowAt ? { unwindRowAt: options.unwindRowAt } : {}),
    ...(options.recognition ? { recognition: options.recognition } : {}),
  });
  const contentKey = createHash("sha256").update(bytes).digest("hex");
  return registry.register({ name: options.name, format: "llvm-v3", descriptors, loadBias: options.loadBias ?? 0, contentKey });
}
