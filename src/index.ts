/**
 * rootwalk's public API. This index (and the CLI) are the only places that wire the loaders,
 * the walker and the collector together.
 */
export * from "./errors.js";
export { ByteView } from "./bytes/byte-view.js";
export { parseStackMapSection, StackMapBlob, LocationView } from "./stackmap/llvm-stackmap.js";
export { LocationKind, LOCATION_KIND_NAMES } from "./location/location-word.js";
export {
  decodeStatepoint,
  DEFAULT_STATEPOINT_ID,
  DEFAULT_DEOPT_STATEPOINT_ID,
  DEFAULT_STATEPOINT_RECOGNITION,
  type StatepointShape,
  type StatepointRecognition,
} from "./stackmap/statepoint.js";
export { formatBlobLikeReadobj } from "./stackmap/readobj-format.js";
export { ElfFile } from "./elf/elf-file.js";
export { X86_64 } from "./arch/x86-64.js";
export { AARCH64 } from "./arch/aarch64.js";
export type { Architecture } from "./arch/architecture.js";
export { relocatedSection } from "./elf/relocate.js";
export { parseEhFrame, EhFrame } from "./unwind/eh-frame.js";
export { cfiRowAt, type CfiRow } from "./unwind/cfi.js";
export * from "./safepoints/frame-descriptors.js";
export { SafepointTable } from "./safepoints/safepoint-table.js";
export { safepointAt, listSafepoints, type SafepointInfo, type RootLocation } from "./safepoints/safepoint-info.js";
export { SafepointRegistry, RegistrySnapshot, type MapToRegister, type RegisteredModule, type MapFormat } from "./safepoints/registry.js";
export { type RootSide } from "./safepoints/safepoint-fields.js";
export { buildLlvmDescriptors, type LlvmLoadOptions, type UnwindRow, type ResolvedFunction } from "./loader/llvm-map-loader.js";
export { loadObjectStackMaps, type ObjectStackMaps } from "./loader/object-file.js";
export {
  registerFile,
  registerObjectFile,
  registerPlimmixFile,
  registerOcamlFile,
  registerStackMapBytes,
  type RegisterFileOptions,
} from "./loader/register-maps.js";
export { loadStackMapFile, StackMapFormatError, STACK_MAP_FORMATS, type StackMapFile } from "./loader/stack-map-file.js";
export { describeLlvmMaps, type MapDescription, type SafepointDescription } from "./loader/describe-safepoints.js";
export { compileToObject, linkSharedLibrary, findLlvmTool } from "./toolchain/llvm-toolchain.js";
export { compileProgram, compileProgramTo, type CompileMode, type CompileProgramOptions } from "./toolchain/compile-program.js";
export { buildPlimmixPlugin, compilePlimmix } from "./toolchain/plimmix-plugin.js";
export { activeLlvm, selectLlvm, SUPPORTED_LLVM_MAJORS, LLVM_ENV_VARIABLE, type LlvmSelection } from "./toolchain/llvm-selection.js";
export { PlimmixMap, plimmixMapLength } from "./stackmap/plimmix-map.js";
export { OcamlFrametable } from "./stackmap/ocaml-frametable.js";
export { loadPlimmixFromElf, registerPlimmixBytes, buildPlimmixDescriptors } from "./loader/plimmix-loader.js";
export { loadOcamlFromElf, buildOcamlDescriptors } from "./loader/ocaml-loader.js";
export { type Memory, type MemoryRange, SimulatedMemory, RangedMemory } from "./memory/memory.js";

// The walker (walker/): it implements the collector's RootScanner.
export { Unwinder, WalkError, type WalkStart, type ManagedChunk, type UnwinderOptions, type StopReason } from "../walker/unwinder.js";
export { RegisterContext } from "../walker/register-context.js";
export { RootPairs, collectFrameRoots } from "../walker/frame-roots.js";
export { relocateRootPairs } from "../walker/relocate-roots.js";
export { StackRootScanner, type ThreadStack } from "../walker/stack-root-scanner.js";
export { walkStack, type WalkResult } from "../walker/walk-stack.js";
export { loadStackSnapshot, type LoadedSnapshot, type StackSnapshotJson, type WalkMethod } from "../walker/stack-snapshot.js";
export { loadStackSnapshotFile } from "../walker/stack-snapshot-file.js";
export { type SplitStacks, type Stacklet, type SplitStackRange } from "../walker/split-stacks.js";

// The collector (gc/).
export { ImmixCollector, type CollectorOptions, type ImmixCollectorConfig } from "../gc/immix-collector.js";
export { type RootScanner } from "../gc/root-scanning.js";
export { type ObjectModel, DEFAULT_OBJECT_MODEL } from "../gc/object-model.js";
export { type Mutator } from "../gc/immix-allocator.js";
export { GcStats, type CycleStats, formatCycle } from "../gc/gc-stats.js";
export { renderHeapMapSvg } from "../gc/heap-map-svg.js";
export { CollectorError } from "../gc/collector-error.js";
