import { hex } from "../src/errors.js";
import { LOG_BYTES_IN_WORD } from "./heap-constants.js";
import type { HeapSpace } from "./heap-space.js";
import type { VerifyFailure } from "./heap-verifier.js";
import type { ObjectModel } from "./object-model.js";
import type { RememberedSet } from "./remembered-set.js";

/*
 * The generational verifier (--generational --verify): the two checks a nursery collection adds,
 * after MMTk's StickyImmix sanity checks. Young = unmarked with its allocation bit set (allocated
 * since the last collection); old = marked (survived one).
 */

/** True when `value` is the address of a young object: in the heap, an object start, unmarked. */
function isYoung(space: HeapSpace, value: number): boolean {
  const offset = value - space.base;
  if (!(offset >= 0 && offset < space.sizeBytes) || (offset & 7) !== 0) return false;
  return space.allocationBits.isSet(offset) && !space.isMarked(value);
}

/**
 * Before a nursery collection traces (nothing moved or freed yet): every pointer from an old
 * object to a young one must come from an object the barrier logged since the last collection.
 * The old objects not logged are exactly those whose unlogged bit is set (remembered-set.ts), so
 * the check walks that bitmap a byte at a time. Failures (at most `max` kept in `out`) name the
 * old object, the field and the young object; returns how many fields failed.
 */
export function findMissingBarriers(space: HeapSpace, model: ObjectModel, remembered: RememberedSet, max: number, out: VerifyFailure[]): number {
  const bits = remembered.unlogged.bits;
  let failures = 0;
  for (let i = 0; i < bits.length; i++) {
    const byte = bits[i]!;
    if (byte === 0) continue;
    for (let k = 0; k < 8; k++) {
      if ((byte & (1 << k)) === 0) continue;
      const object = space.base + ((i * 8 + k) << LOG_BYTES_IN_WORD);
      const slots = model.pointerSlotCount(space, object);
      for (let s = 0; s < slots; s++) {
        const slot = model.pointerSlotAddress(space, object, s);
        const value = space.readWord(slot);
        if (value === 0 || !isYoung(space, value)) continue;
        failures++;
        if (out.length < max) out.push(missingBarrier(object, slot - object, value));
      }
    }
  }
  return failures;
}

function missingBarrier(object: number, offsetBytes: number, value: number): VerifyFailure {
  return {
    location: { kind: "field", object, offsetBytes },
    value,
    reason: `(a young object) in an old object not logged since the last collection: a store into ${hex(object)} had no gc_write_barrier(${hex(object)}) after it`,
    expected: "an old object, or a gc_write_barrier call after every store of a pointer into an object",
    phase: "before",
  };
}

/**
 * After a nursery collection's trace, before its sweep (the nursery sanity check): nothing
 * reachable from `roots` is left unmarked (a young object the trace missed would be freed).
 * Walks the whole reachable graph (old objects too: a missed young object may hang below one).
 */
export function findUnmarkedReachable(
  space: HeapSpace,
  model: ObjectModel,
  roots: readonly number[],
  max: number,
  out: VerifyFailure[],
  describeRoot: (index: number) => string | undefined = () => undefined,
): number {
  const seen = new Set<number>();
  const stack: number[] = [];
  let failures = 0;
  const visit = (value: number, from: VerifyFailure["location"]): void => {
    if (value === 0 || seen.has(value) || !space.contains(value) || !space.allocationBits.isSet(value - space.base)) return;
    seen.add(value);
    stack.push(value);
    if (space.isMarked(value)) return;
    failures++;
    if (out.length < max)
      out.push({
        location: from.kind === "root" ? { ...from, description: describeRoot(from.index) } : from,
        value,
        reason: "(reachable) unmarked after the nursery trace: it would be freed",
        expected: "a marked object",
        phase: "after",
      });
  };
  // A root's description walks its thread again: only for a root that fails.
  roots.forEach((root, index) => visit(root, { kind: "root", index, description: undefined }));
  while (stack.length > 0) {
    const object = stack.pop()!;
    const slots = model.pointerSlotCount(space, object);
    for (let s = 0; s < slots; s++) {
      const slot = model.pointerSlotAddress(space, object, s);
      visit(space.readWord(slot), { kind: "field", object, offsetBytes: slot - object });
    }
  }
  return failures;
}
