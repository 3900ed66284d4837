/**
 * rootwalk's public API. This index (and the CLI) are the only places that wire the loaders,
 * the walker and the collector together.
 */
export * from "./errors.js";
export { ByteView } from "./bytes/byte-view.js";
export { parseStackMapSection, StackMapBlob, LocationView, LocationKind, LOCATION_KIND_NAMES } from "./stackmap/llvm-stackmap.js";
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
export { relocatedSection } from "./elf/relocate.js";
export { parseEhFrame, EhFrame } from "./unwind/eh-frame.js";
export { cfiRowAt, type CfiRow } from "./unwind/cfi.js";
export * from "./safepoints/frame-descriptors.js";
export { SafepointTable } from "./safepoints/safepoint-table.js";
export { SafepointRegistry, RegistrySnapshot, type MapToRegister, type RegisteredModule, type MapFormat } from "./safepoints/registry.js";
export { buildLlvmDescriptors, type LlvmLoadOptions, type UnwindRow, type ResolvedFunction } from "./loader/llvm-map-loader.js";
export { loadObjectStackMaps, type ObjectStackMaps } from "./loader/object-file.js";
export { registerObjectFile, registerStackMapBytes } from "./loader/register-maps.js";
export { describeLlvmMaps, type MapDescription, type SafepointDescription } from "./loader/describe-safepoints.js";
export { compileToObject, linkSharedLibrary, findLlvmTool } from "./toolchain/llvm-toolchain.js";
