import { hex } from "../src/errors.js";
import { BYTES_IN_BLOCK, BYTES_IN_LARGE_PAGE, LOG_BYTES_IN_BLOCK, LOG_BYTES_IN_LARGE_PAGE } from "./heap-constants.js";
import { BLOCK_UNALLOCATED, type HeapSpace } from "./heap-space.js";
import { PAGE_OBJECT_REST, PAGE_OBJECT_START } from "./large-object-space.js";
import type { ObjectModel } from "./object-model.js";
import { describePoison } from "./poison.js";

/*
 * "Is this value an object's address?", answered by the allocation bitmap (gc/allocation-bits.ts),
 * and when it is not, the words for why: the object it points into and where, or that it points
 * into none. Used for every root before a collection moves anything (ImmixCollector) and by the
 * verifier for every pointer it follows (heap-verifier.ts). Only the answer "no" costs more than
 * one bit test (a search of the bitmap backwards, on failures only).
 */

/** True when `address` lies in the heap's reservation but no object starts there (the bitmap's answer). */
export function isNonObjectStartInHeap(space: HeapSpace, address: number): boolean {
  const offset = address - space.base;
  return offset >= 0 && offset < space.sizeBytes && ((offset & 7) !== 0 || !space.allocationBits.isSet(offset));
}

/**
 * The object (live or not yet swept) that heap offset `offset` points into, past its address:
 * "not an object start: inside object 0x... (+0x10, which ends at 0x...)" (the end is where its
 * storage ends), or the header of the object right after it; null when it points into no object.
 * `offset` is an integer inside the heap that is no object's address.
 */
export function describeEnclosingObject(space: HeapSpace, model: ObjectModel, offset: number): string | null {
  const header = model.headerBytes;
  const bits = space.allocationBits;
  const aligned = offset - (offset & 7);
  let object = -1;
  if (offset < space.los.bottomPage * BYTES_IN_LARGE_PAGE) {
    const block = offset >>> LOG_BYTES_IN_BLOCK;
    if (block >= space.immixTopBlock || space.blockState[block] === BLOCK_UNALLOCATED) return null;
    object = bits.nearestAtOrBelow(aligned, block * BYTES_IN_BLOCK + header);
  } else {
    let page = offset >>> LOG_BYTES_IN_LARGE_PAGE;
    while (page > space.los.bottomPage && space.los.pageKind[page] === PAGE_OBJECT_REST) page--;
    const first = page * BYTES_IN_LARGE_PAGE + header;
    if (space.los.pageKind[page] === PAGE_OBJECT_START && bits.isSet(first) && first <= offset) object = first;
  }
  if (object >= 0) {
    const address = space.base + object;
    const end = address - header + model.sizeBytes(space, address);
    if (space.base + offset < end)
      return `not an object start: inside object ${hex(address)} (+0x${(offset - object).toString(16)}, which ends at ${hex(end)})`;
  }
  const next = aligned + header;
  if (next < space.sizeBytes && bits.isSet(next)) return `not an object start: in the header of object ${hex(space.base + next)}`;
  return null;
}

/**
 * Why a root's value `address` (inside the heap's reservation, no object's address by the
 * bitmap) is bad: the object it points into, else what the memory there is (quarantined or
 * poisoned by an earlier collection, a free block, free memory between objects).
 */
export function describeNonObjectStart(space: HeapSpace, model: ObjectModel, address: number): string {
  const offset = address - space.base;
  // First: a quarantined block may be protected memory, not to be read.
  if (space.quarantine?.holdsAddress(address)) return space.quarantine.describeHeld(address);
  const inside = describeEnclosingObject(space, model, offset);
  if (inside !== null) return inside;
  const poisoned = describePoison(space, address, model.headerBytes);
  if (poisoned !== null) return poisoned;
  if (offset < space.los.bottomPage * BYTES_IN_LARGE_PAGE) {
    const block = offset >>> LOG_BYTES_IN_BLOCK;
    if (block >= space.immixTopBlock || space.blockState[block] === BLOCK_UNALLOCATED) return `not an object start: in free block ${block}`;
    return `not an object start: in no object (free or dead memory of block ${block})`;
  }
  return "not an object start: in no object (free or dead pages of the large-object space)";
}
