import { checkRegistryArgument, type MapFormat, type SafepointRegistry } from "../safepoints/registry.js";
import { parseStackMapSection } from "../stackmap/llvm-stackmap.js";
import type { StatepointRecognition } from "../stackmap/statepoint.js";
import { buildLlvmDescriptors, type LlvmLoadOptions } from "./llvm-map-loader.js";
import { DeferredLlvmDescriptors, RECORD_BLOCK_SIZE } from "./deferred-llvm-descriptors.js";
import { X86_64 } from "../arch/x86-64.js";
import { indexStackMapInKernel } from "../safepoints/kernel-index.js";
import { InvalidArgumentError } from "../errors.js";
import { requireBytes } from "../bytes/byte-view.js";
import { STACK_MAP_FORMAT_NAMES, StackMapFormatError, loadStackMapFile } from "./stack-map-file.js";

export interface RegisterFileOptions {
  path: string;
  /** Where the file is loaded: 0 for a non-PIE executable or an object; the dladdr base for a library. */
  loadBias?: number;
  recognition?: StatepointRecognition;
  /** The format to register; needed only when the file holds more than one. */
  format?: MapFormat;
}

/**
 * Registers the stack maps of an ELF file (object, shared library, executable), whatever their
 * format (loader/stack-map-file.ts detects it, as `rootwalk dump` does), and returns the handle.
 * Throws StackMapFormatError when the file holds no stack maps, not the `format` asked for, or
 * several formats and no `format` says which.
 */
export function registerFile(registry: SafepointRegistry, bytes: Uint8Array, options: RegisterFileOptions): number {
  checkRegistryArgument(registry);
  const file = loadStackMapFile(bytes, options.path, {
    ...(options.format !== undefined ? { formats: [options.format] } : {}),
    ...(options.recognition ? { recognition: options.recognition } : {}),
  });
  if (file.formats.length !== 1) {
    const found = file.formats.length === 0 && options.format !== undefined ? loadStackMapFile(bytes, options.path).formats : file.formats;
    const expected =
      options.format !== undefined
        ? STACK_MAP_FORMAT_NAMES[options.format]
        : file.formats.length > 1
          ? `one format, or options.format naming which to register (${file.formats.join(" | ")})`
          : "stack maps: an LLVM stack map v3, a _GC_MAP_ v1 map or an OCaml frame table";
    throw new StackMapFormatError(options.path, found, expected);
  }
  const loaded = file.llvm ?? file.plimmix ?? file.ocaml!;
  return registry.register({
    name: options.path,
    format: file.formats[0]!,
    descriptors: loaded.descriptors,
    loadBias: options.loadBias ?? 0,
    contentKey: loaded.contentKey,
  });
}

/** registerFile for LLVM stack maps (`.llvm_stackmaps`); throws StackMapFormatError without them. */
export function registerObjectFile(registry: SafepointRegistry, bytes: Uint8Array, options: Omit<RegisterFileOptions, "format">): number {
  return registerFile(registry, bytes, { ...options, format: "llvm-v3" });
}

/** registerFile for `_GC_MAP_` v1 maps; throws StackMapFormatError without them. */
export function registerPlimmixFile(registry: SafepointRegistry, bytes: Uint8Array, options: { path: string; loadBias?: number }): number {
  return registerFile(registry, bytes, { ...options, format: "plimmix-v1" });
}

/** registerFile for OCaml frame tables; throws StackMapFormatError without them. */
export function registerOcamlFile(registry: SafepointRegistry, bytes: Uint8Array, options: { path: string; loadBias?: number }): number {
  return registerFile(registry, bytes, { ...options, format: "ocaml" });
}

/**
 * Registers a `.llvm_stackmaps` section given as bytes, e.g. read from process memory at the
 * address a program passed to `gc_init` (its function addresses are already absolute). Without
 * `unwindRowAt` the recorded stack sizes are all there is: call sites with pushed arguments are
 * then only right if the code was built with `-no-x86-call-frame-opt`. When the scan kernel
 * indexes the section, the registry keeps a copy of `bytes` to decode descriptors from on first
 * use: the caller may reuse its buffer afterwards. That registration's memory is handed back for
 * the next one to reuse by `registry.unregister(handle, { release: true })`.
 */
export function registerStackMapBytes(
  registry: SafepointRegistry,
  bytes: Uint8Array,
  options: { name: string; loadBias?: number } & Pick<LlvmLoadOptions, "unwindRowAt" | "recognition" | "architecture">,
): number {
  checkRegistryArgument(registry);
  requireBytes(bytes, "stack map bytes");
  if (bytes.byteLength === 0) throw new InvalidArgumentError("stack map bytes", "0 bytes", "a .llvm_stackmaps section");
  // No hash of the bytes (a SHA-256 was a quarter of registration time, 89 ns per record): the
  // registry compares the descriptors of maps with the same key, so the length is key enough.
  const contentKey = `llvm-v3 section, ${bytes.byteLength} bytes`;
  const loadBias = options.loadBias ?? 0;
  // A section alone does not say what it was compiled for (an ELF file's header does): the
  // caller says it, and x86-64 is assumed otherwise. The kernel index computes x86-64 recipes.
  const architecture = options.architecture ?? X86_64;
  // gc_init's path (the first map, no unwind rows, default statepoint IDs, no bias): the scan
  // kernel checks every record and builds the table and recipes; the descriptors are decoded
  // when the general unwinder or a report first needs them. Any section the kernel declines,
  // malformed ones included, takes the general path below, which decides and throws.
  const plain = options.unwindRowAt === undefined && options.recognition === undefined && loadBias === 0;
  if (plain && architecture === X86_64 && registry.snapshot().modules.size === 0) {
    const indexed = indexStackMapInKernel(bytes, loadBias);
    if (indexed !== undefined) {
      return registry.registerIndexed({
        name: options.name,
        format: "llvm-v3",
        architecture,
        contentKey,
        table: indexed.table,
        recipes: indexed.recipes,
        descriptors: new DeferredLlvmDescriptors(indexed.section, indexed.safepoints, loadBias, RECORD_BLOCK_SIZE, "adopt", indexed.lease),
        loadBias,
        lease: indexed.lease,
      });
    }
  }
  const blobs = parseStackMapSection(bytes);
  const descriptors = buildLlvmDescriptors(blobs, {
    ...(options.unwindRowAt ? { unwindRowAt: options.unwindRowAt } : {}),
    ...(options.recognition ? { recognition: options.recognition } : {}),
    architecture,
  });
  return registry.register({ name: options.name, format: "llvm-v3", descriptors, loadBias, contentKey });
}
