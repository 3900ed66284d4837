import { hex } from "../errors.js";
import type { Memory } from "../memory/memory.js";

/*
 * The native runtime's return-barrier table as a core file holds it (runtime.h
 * rw_return_barriers). This is the layout's one home: src/native/return-barrier-layout.ts
 * re-exports it for the runtime's TypeScript, and test/native-runtime/runtime-layout.test.ts
 * compiles runtime.h with a _Static_assert for every value, for x86-64 and AArch64.
 *
 * After a --generational collection the runtime replaces the saved return address of some frames
 * (a stack word, the "slot") with the address of rw_return_barrier_trampoline and keeps the
 * original here, one table per thread record:
 *
 *   rw_thread_barriers (BARRIERS_BYTES, 1552), RETURN_BARRIER_THREADS of them, same index as rw_threads
 *     +0   u32 armed      entries[0 .. armed-1] are armed; entries[armed-1] is the innermost
 *     +4   u32 flags      bit 0: RW_BARRIERS_LOST
 *     +8   u64 reserved
 *     +16  rw_return_barrier entries[BARRIERS_PER_THREAD], 24 bytes each:
 *            +0 u64 slot            the stack word whose return address was replaced
 *            +8 u64 return_address  what it held (where the frame resumes)
 *            +16 u64 frames_below   managed frames from that frame to the stack's end
 *
 * A table read from a core is data from a crashed process: armed above BARRIERS_PER_THREAD
 * is a corrupt table, reported in one line and not used (never a guess at which entries hold).
 */

/** The symbols a core reader looks up (exported by librwruntime). */
export const BARRIERS_SYMBOL = "rw_return_barriers";
export const TRAMPOLINE_SYMBOL = "rw_return_barrier_trampoline";
/** runtime.h RW_MAX_THREADS: one table per thread record (checked in test/walker/core/return-barrier-core.test.ts). */
export const RETURN_BARRIER_THREADS = 1024;
/** runtime.h RW_RETURN_BARRIERS_PER_THREAD. */
export const BARRIERS_PER_THREAD = 64;
/** rw_thread_barriers.flags bit 0 (RW_BARRIERS_LOST): an entry was stale, the next walk is full. */
export const BARRIERS_LOST = 1;
export const BARRIER_ENTRY_BYTES = 24;
export const BARRIER_SLOT_OFFSET = 0;
export const BARRIER_RETURN_ADDRESS_OFFSET = 8;
export const BARRIER_FRAMES_BELOW_OFFSET = 16;
export const BARRIERS_ARMED_OFFSET = 0;
export const BARRIERS_FLAGS_OFFSET = 4;
export const BARRIERS_ENTRIES_OFFSET = 16;
export const BARRIERS_BYTES = BARRIERS_ENTRIES_OFFSET + BARRIERS_PER_THREAD * BARRIER_ENTRY_BYTES; // 1552

/** One armed barrier: the slot that holds the trampoline's address and what it held before. */
export interface ArmedBarrier {
  slot: number;
  returnAddress: number;
  framesBelow: number;
}

/** Every armed barrier of a process's table, by slot; or why the table cannot be used. */
export type ReturnBarrierTable = { slots: ReadonlyMap<number, ArmedBarrier>; problem?: undefined } | { slots?: undefined; problem: string };

/**
 * Reads the table at `tableAddress` from `memory`: the armed count of each thread's part, and the
 * entries of those with armed > 0 only. A count above BARRIERS_PER_THREAD, an unreadable
 * word or two entries naming one slot is a corrupt table: `problem` says which, in one line.
 */
export function readReturnBarrierTable(memory: Memory, tableAddress: number): ReturnBarrierTable {
  const slots = new Map<number, ArmedBarrier>();
  for (let t = 0; t < RETURN_BARRIER_THREADS; t++) {
    const base = tableAddress + t * BARRIERS_BYTES;
    if (!memory.contains(base, 8)) return { problem: `${BARRIERS_SYMBOL}[${t}] at ${hex(base)} is not in the core's memory` };
    // armed is the low half of the first word (little-endian); read exactly, flags above it.
    const armed = Number(BigInt.asUintN(32, memory.readWordBigInt(base + BARRIERS_ARMED_OFFSET)));
    if (armed === 0) continue;
    if (armed > BARRIERS_PER_THREAD)
      return { problem: `${BARRIERS_SYMBOL}[${t}].armed is ${armed}, expected at most ${BARRIERS_PER_THREAD} (a corrupt table)` };
    const problem = readThreadEntries(memory, t, base, armed, slots);
    if (problem !== undefined) return { problem };
  }
  return { slots };
}

/** Adds thread `t`'s `armed` entries to `slots`; a problem in one line, or undefined. */
function readThreadEntries(memory: Memory, t: number, base: number, armed: number, slots: Map<number, ArmedBarrier>): string | undefined {
  const entries = base + BARRIERS_ENTRIES_OFFSET;
  if (!memory.contains(entries, armed * BARRIER_ENTRY_BYTES))
    return `${BARRIERS_SYMBOL}[${t}]'s ${armed} entries at ${hex(entries)} are not in the core's memory`;
  for (let i = 0; i < armed; i++) {
    const at = entries + i * BARRIER_ENTRY_BYTES;
    const slot = memory.readWord(at + BARRIER_SLOT_OFFSET);
    const barrier = {
      slot,
      returnAddress: memory.readWord(at + BARRIER_RETURN_ADDRESS_OFFSET),
      framesBelow: memory.readWord(at + BARRIER_FRAMES_BELOW_OFFSET),
    };
    if (slot % 8 !== 0 || slots.has(slot))
      return `${BARRIERS_SYMBOL}[${t}].entries[${i}].slot is ${hex(slot)}, expected an 8-aligned stack address no other entry names (a corrupt table)`;
    slots.set(slot, barrier);
  }
  return undefined;
}
