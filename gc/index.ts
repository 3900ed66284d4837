/** The Immix collector: heap, object model, allocators, collection, verification, statistics. */
export * from "./heap-constants.js";
export * from "./collector-error.js";
export * from "./object-model.js";
export * from "./heap-space.js";
export * from "./large-object-space.js";
export * from "./immix-allocator.js";
export * from "./immix-collector.js";
export * from "./root-scanning.js";
export * from "./global-roots.js";
export * from "./defrag.js";
export * from "./heap-verifier.js";
export * from "./gc-stats.js";
export * from "./heap-map-svg.js";
