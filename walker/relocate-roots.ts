import { hex } from "../src/errors.js";
import { WalkError } from "./unwinder.js";
import type { Memory } from "../src/memory/memory.js";
import type { RegisterContext } from "./register-context.js";
import type { RootPairs } from "./frame-roots.js";
import { readSlot, writeSlot } from "./slot.js";

/**
 * Rewrites every root pair after the collector moved objects: base' = forward(base),
 * derived' = base' + (derived - base).
 *
 * All old values are read before any is written: the same slot can be the base of a derived
 * pair and a pair of its own, or appear in two frames' descriptors (LLVM deduplicates pairs by
 * derived value only). Null bases stay null. Returns the number of slots written.
 */
export function relocateRootPairs(
  pairs: RootPairs,
  memory: Memory,
  contexts: readonly (RegisterContext | undefined)[],
  forward: (oldBase: number) => number,
  scratch: { bases: Float64Array; deriveds: Float64Array } = { bases: new Float64Array(pairs.count), deriveds: new Float64Array(pairs.count) },
): number {
  const n = pairs.count;
  const bases = scratch.bases.length >= n ? scratch.bases : new Float64Array(n);
  const deriveds = scratch.deriveds.length >= n ? scratch.deriveds : new Float64Array(n);
  for (let i = 0; i < n; i++) {
    bases[i] = readSlot(pairs.baseSlots[i]!, memory, contexts);
    deriveds[i] = readSlot(pairs.derivedSlots[i]!, memory, contexts);
  }
  let written = 0;
  for (let i = 0; i < n; i++) {
    const base = bases[i]!;
    if (base === 0) continue;
    const newBase = forward(base);
    if (!Number.isSafeInteger(newBase) || newBase < 0) {
      throw new WalkError(
        base,
        pairs.frameOf(i),
        `forwarding gave ${Number.isSafeInteger(newBase) ? hex(newBase) : String(newBase)} for base ${hex(base)}`,
        "a collector bug",
      );
    }
    if (newBase === base) continue;
    writeSlot(pairs.baseSlots[i]!, newBase, memory, contexts);
    writeSlot(pairs.derivedSlots[i]!, newBase + (deriveds[i]! - base), memory, contexts);
    written += pairs.baseSlots[i] === pairs.derivedSlots[i] ? 1 : 2;
  }
  return written;
}
