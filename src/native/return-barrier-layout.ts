/*
 * The return barriers' layout (runtime.h rw_return_barrier, rw_thread_barriers, the array
 * rw_return_barriers with one element per thread record), for the runtime's TypeScript. Its one
 * home is beside the core reader's decoder, src/core/return-barrier-table.ts (a leaf: the core
 * reader cannot import src/native/), which describes each field;
 * test/native-runtime/runtime-layout.test.ts compiles runtime.h with a _Static_assert for every
 * value, for x86-64 and AArch64.
 */
export {
  BARRIERS_PER_THREAD,
  BARRIERS_LOST,
  BARRIER_ENTRY_BYTES,
  BARRIERS_ARMED_OFFSET,
  BARRIERS_FLAGS_OFFSET,
  BARRIERS_ENTRIES_OFFSET,
  BARRIER_SLOT_OFFSET,
  BARRIER_RETURN_ADDRESS_OFFSET,
  BARRIER_FRAMES_BELOW_OFFSET,
  BARRIERS_BYTES,
  BARRIERS_SYMBOL,
  TRAMPOLINE_SYMBOL,
} from "../core/return-barrier-table.js";
