/*
 * The return barriers' layout (runtime.h rw_return_barrier, rw_thread_barriers, the array
 * rw_return_barriers with one element per thread record), as TypeScript and the core reader read
 * it. test/native-runtime/runtime-layout.test.ts compiles runtime.h with a _Static_assert for every
 * value here, for x86-64 and AArch64.
 *
 *   rw_thread_barriers (BARRIERS_BYTES per thread)
 *     offset 0   u32 armed          entries[0 .. armed-1] are armed; entries[armed-1] the innermost
 *     offset 4   u32 flags          bit 0 BARRIERS_LOST: an entry was stale, the next walk is full
 *     offset 8   u64 reserved
 *     offset 16  entries[BARRIERS_PER_THREAD], BARRIER_ENTRY_BYTES each:
 *                  +0  slot             the stack word whose return address was replaced
 *                  +8  return_address   what it held (where the frame resumes)
 *                  +16 frames_below     managed frames from the frame it returns into (inclusive)
 *                                       to the stack's end, when armed
 */
export const BARRIERS_PER_THREAD = 64;
export const BARRIERS_LOST = 1;
export const BARRIER_ENTRY_BYTES = 24;
export const BARRIERS_ARMED_OFFSET = 0;
export const BARRIERS_FLAGS_OFFSET = 4;
export const BARRIERS_ENTRIES_OFFSET = 16;
export const BARRIER_SLOT_OFFSET = 0;
export const BARRIER_RETURN_ADDRESS_OFFSET = 8;
export const BARRIER_FRAMES_BELOW_OFFSET = 16;
export const BARRIERS_BYTES = BARRIERS_ENTRIES_OFFSET + BARRIERS_PER_THREAD * BARRIER_ENTRY_BYTES;
/** The symbols a core reader looks up. */
export const BARRIERS_SYMBOL = "rw_return_barriers";
export const TRAMPOLINE_SYMBOL = "rw_return_barrier_trampoline";
