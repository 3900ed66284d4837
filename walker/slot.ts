import type { Architecture } from "../src/arch/architecture.js";
import { MAX_CALLEE_SAVED_COUNT } from "../src/arch/elf-architecture.js";
import type { Memory } from "../src/memory/memory.js";
import type { RegisterContext } from "./register-context.js";

/*
 * A slot is where a value lives, as one number so the hot loops allocate nothing:
 *   slot >= 0                       a stack address (read and written through Memory)
 *   -1 - (chunk * MAX_CALLEE_SAVED_COUNT + k)
 *                                   callee-saved register k (the walk's architecture's
 *                                   calleeSavedDwarf order) of the RegisterContext captured for
 *                                   managed chunk `chunk`; the stride is the largest count of any
 *                                   architecture, so a slot means the same on every one
 *   UNKNOWN_SLOT                    not known (no frame saved the register, no context holds it)
 */
export const UNKNOWN_SLOT = Number.NEGATIVE_INFINITY;
const STRIDE = MAX_CALLEE_SAVED_COUNT;

export function contextSlot(chunk: number, k: number): number {
  return -1 - (chunk * STRIDE + k);
}
/** The calleeSavedDwarf index k of a context register slot, or -1 (a stack slot, unknown). */
export function contextRegisterIndex(slot: number): number {
  return slot < 0 && slot !== UNKNOWN_SLOT ? (-1 - slot) % STRIDE : -1;
}
export function isMemorySlot(slot: number): boolean {
  return slot >= 0;
}

/** The value in a slot; NaN for an unknown register. */
export function readSlot(slot: number, memory: Memory, contexts: readonly (RegisterContext | undefined)[]): number {
  if (slot >= 0) return memory.readWord(slot);
  if (slot === UNKNOWN_SLOT) return Number.NaN;
  const n = -1 - slot;
  const context = contexts[Math.floor(n / STRIDE)];
  const k = n % STRIDE;
  return context?.isKnown(k) ? context.values[k]! : Number.NaN;
}

/** The exact 64 bits in a slot (a register holds any value; a word above 2^53 is not a number); undefined for an unknown register. */
export function readSlotExact(slot: number, memory: Memory, contexts: readonly (RegisterContext | undefined)[]): bigint | undefined {
  if (slot >= 0) return memory.readWordBigInt(slot);
  if (slot === UNKNOWN_SLOT) return undefined;
  const n = -1 - slot;
  const context = contexts[Math.floor(n / STRIDE)];
  const k = n % STRIDE;
  return context?.isKnown(k) ? context.exact[k]! : undefined;
}

export function writeSlot(slot: number, value: number, memory: Memory, contexts: readonly (RegisterContext | undefined)[]): void {
  if (slot >= 0) {
    memory.writeWord(slot, value);
    return;
  }
  const n = -1 - slot;
  const context = contexts[Math.floor(n / STRIDE)];
  if (context !== undefined) context.set(n % STRIDE, value);
}

/** `[0x7ffd…]` for a stack slot, `rbx@chunk0` (`x20@chunk0`) for a register of a captured context. */
export function describeSlot(slot: number, architecture: Architecture): string {
  if (slot >= 0) return `0x${slot.toString(16)}`;
  if (slot === UNKNOWN_SLOT) return "unknown";
  const n = -1 - slot;
  return `${architecture.calleeSavedNames[n % STRIDE]}@chunk${Math.floor(n / STRIDE)}`;
}
