/*
 * The LLVM StackMap v3 format and the statepoint shape as plain constants: byte offsets within a
 * blob's header, function entry, record, location and live-out (src/stackmap/llvm-stackmap.ts
 * documents the layout), the location kinds, and what makes a record a statepoint
 * (src/stackmap/statepoint.ts). Both decoders read them: the general one (llvm-stackmap.ts,
 * statepoint.ts) and the scan kernel's parse (walker/scan-kernel/assembly/parse-stackmap.ts),
 * so this file is compiled by tsc and by asc and holds numbers only.
 */

export const STACKMAP_VERSION = 3;

export const HEADER_VERSION = 0;
export const HEADER_RESERVED8 = HEADER_VERSION + 1;
export const HEADER_RESERVED16 = HEADER_RESERVED8 + 1;
export const HEADER_NUM_FUNCTIONS = HEADER_RESERVED16 + 2;
export const HEADER_NUM_CONSTANTS = HEADER_NUM_FUNCTIONS + 4;
export const HEADER_NUM_RECORDS = HEADER_NUM_CONSTANTS + 4;
export const HEADER_SIZE_BYTES = HEADER_NUM_RECORDS + 4;

export const FUNCTION_ADDRESS = 0;
export const FUNCTION_STACK_SIZE = FUNCTION_ADDRESS + 8;
export const FUNCTION_RECORD_COUNT = FUNCTION_STACK_SIZE + 8;
export const FUNCTION_SIZE_BYTES = FUNCTION_RECORD_COUNT + 8;

export const CONSTANT_SIZE_BYTES = 8;

export const RECORD_ID = 0;
export const RECORD_INSTRUCTION_OFFSET = RECORD_ID + 8;
export const RECORD_RESERVED = RECORD_INSTRUCTION_OFFSET + 4;
export const RECORD_NUM_LOCATIONS = RECORD_RESERVED + 2;
export const RECORD_LOCATIONS = RECORD_NUM_LOCATIONS + 2;

export const LOCATION_KIND = 0;
export const LOCATION_RESERVED8 = LOCATION_KIND + 1;
export const LOCATION_SIZE = LOCATION_RESERVED8 + 1;
export const LOCATION_DWARF_REG = LOCATION_SIZE + 2;
export const LOCATION_RESERVED16 = LOCATION_DWARF_REG + 2;
export const LOCATION_OFFSET_OR_CONSTANT = LOCATION_RESERVED16 + 2;
export const LOCATION_SIZE_BYTES = LOCATION_OFFSET_OR_CONSTANT + 4;

export const LIVE_OUTS_PADDING = 0;
export const LIVE_OUTS_COUNT = LIVE_OUTS_PADDING + 2;
export const LIVE_OUTS_ARRAY = LIVE_OUTS_COUNT + 2;
export const LIVE_OUT_DWARF_REG = 0;
export const LIVE_OUT_RESERVED = LIVE_OUT_DWARF_REG + 2;
export const LIVE_OUT_SIZE = LIVE_OUT_RESERVED + 1;
export const LIVE_OUT_SIZE_BYTES = LIVE_OUT_SIZE + 1;

/** The smallest record: its header and an empty live-out list. */
export const MIN_RECORD_BYTES = RECORD_LOCATIONS + LIVE_OUTS_ARRAY + 4;

/** Location kinds (llvm-stackmap.ts `LocationKind`). */
export const LOCATION_KIND_REGISTER = 1;
export const LOCATION_KIND_DIRECT = 2;
export const LOCATION_KIND_INDIRECT = 3;
export const LOCATION_KIND_CONSTANT = 4;
export const LOCATION_KIND_CONSTANT_INDEX = 5;

/** The IDs RewriteStatepointsForGC gives statepoints by default (both below 2^32). */
export const DEFAULT_STATEPOINT_ID_U32 = 0xabcdef00;
export const DEFAULT_DEOPT_STATEPOINT_ID_U32 = 0xabcdef0f;
export const STATEPOINT_FLAG_GC_TRANSITION = 1;
export const STATEPOINT_FLAG_DEOPT_LIVE_IN = 2;
/** LLVM calling convention numbers are small; 1023 is CallingConv::MaxID. */
export const MAX_CALLING_CONVENTION = 1023;
/** Deopt locations always start after the three header constants. */
export const STATEPOINT_DEOPT_START = 3;
