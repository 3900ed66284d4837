import type { Memory } from "../src/memory/memory.js";
import { CALLEE_SAVED_COUNT, CALLEE_SAVED_NAMES } from "../src/safepoints/frame-descriptors.js";
import type { RegisterContext } from "./register-context.js";

/*
 * A slot is where a value lives, as one number so the hot loops allocate nothing:
 *   slot >= 0                       a stack address (read and written through Memory)
 *   -1 - (chunk * CALLEE_SAVED_COUNT + k)
 *                                   callee-saved register k (CALLEE_SAVED_DWARF order) of the
 *                                   RegisterContext captured for managed chunk `chunk`
 *   UNKNOWN_SLOT                    not known (no frame saved the register, no context holds it)
 */
export const UNKNOWN_SLOT = Number.NEGATIVE_INFINITY;

export function contextSlot(chunk: number, k: number): number {
  return -1 - (chunk * CALLEE_SAVED_COUNT + k);
}
/** The CALLEE_SAVED_DWARF index k of a context register slot, or -1 (a stack slot, unknown). */
export function contextRegisterIndex(slot: number): number {
  return slot < 0 && slot !== UNKNOWN_SLOT ? (-1 - slot) % CALLEE_SAVED_COUNT : -1;
}
export function isMemorySlot(slot: number): boolean {
  return slot >= 0;
}

/** The value in a slot; NaN for an unknown register. */
export function readSlot(slot: number, memory: Memory, contexts: readonly (RegisterContext | undefined)[]): number {
  if (slot >= 0) return memory.readWord(slot);
  if (slot === UNKNOWN_SLOT) return Number.NaN;
  const n = -1 - slot;
  const context = contexts[Math.floor(n / CALLEE_SAVED_COUNT)];
  const k = n % CALLEE_SAVED_COUNT;
  return context?.isKnown(k) ? context.values[k]! : Number.NaN;
}

export function writeSlot(slot: number, value: number, memory: Memory, contexts: readonly (RegisterContext | undefined)[]): void {
  if (slot >= 0) {
    memory.writeWord(slot, value);
    return;
  }
  const n = -1 - slot;
  const context = contexts[Math.floor(n / CALLEE_SAVED_COUNT)];
  if (context !== undefined) context.set(n % CALLEE_SAVED_COUNT, value);
}

/** `[0x7ffd…]` for a stack slot, `rbx@chunk0` for a register of a captured context. */
export function describeSlot(slot: number): string {
  if (slot >= 0) return `0x${slot.toString(16)}`;
  if (slot === UNKNOWN_SLOT) return "unknown";
  const n = -1 - slot;
  return `${CALLEE_SAVED_NAMES[n % CALLEE_SAVED_COUNT]}@chunk${Math.floor(n / CALLEE_SAVED_COUNT)}`;
}
