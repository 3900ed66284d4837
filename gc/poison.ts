import { joinHalves } from "../src/bytes/word-codec.js";
import { BYTES_IN_BLOCK, BYTES_IN_LARGE_PAGE, LINE_IN_BLOCK_MASK, LINES_IN_BLOCK, LOG_BYTES_IN_LINE, LOG_LINES_IN_BLOCK } from "./heap-constants.js";
import { BLOCK_REUSABLE, BLOCK_UNALLOCATED, type HeapSpace } from "./heap-space.js";

/*
 * Poisoning (the collector's `poison` option, `rootwalk run --poison`, implied by stress):
 * after a collection has relocated every root it knows, the memory it no longer vouches for is
 * overwritten with a pattern, so that a mutator still holding a stale pointer reads garbage
 * (and a pointer read through it faults) instead of the intact old copy:
 *   - the old copy of every object evacuated by this collection (header and body);
 *   - every block the sweep freed, and every free line of the blocks it kept (the lines the
 *     allocators may hand out: not marked, and not right after a marked line, see
 *     HeapSpace.firstAvailableLine);
 *   - every large-object page the sweep freed.
 * Allocators zero holes, clean blocks and large pages when they hand them out, so poison never
 * reaches a new object. The verifier and the tracer recognise a poisoned header and the pattern
 * as a value, and name them.
 *
 * In stress mode the freed blocks are also quarantined (gc/quarantine.ts): held out of use,
 * protected when the memory allows, and their poison checked at the next collections.
 *
 * The pattern, in every 32-bit half: 0xdeadbeec. As a header word it is impossible (a pointer
 * slot count above 2^28, reserved bit 2 set, forwarding bit clear); as a pointer it is not a
 * canonical x86-64 address, so dereferencing it faults.
 */
export const POISON_HALF_WORD = 0xdeadbeec;
/** The pattern as a heap word reads (HeapSpace.readWord: low + high * 2^32, one rounding). */
export const POISON_WORD_VALUE = joinHalves(POISON_HALF_WORD, POISON_HALF_WORD);

/** Fills `[start, end)` (addresses, 8-aligned) with the pattern. */
export function poisonRange(space: HeapSpace, start: number, end: number): void {
  space.words.fill(POISON_HALF_WORD, (start - space.base) >>> 2, (end - space.base) >>> 2);
}

/** True when the 8-byte word at `address` (inside the heap, 8-aligned) holds the pattern. */
export function isPoisonedWord(space: HeapSpace, address: number): boolean {
  const i = (address - space.base) >>> 2;
  return space.words[i] === POISON_HALF_WORD && space.words[i + 1] === POISON_HALF_WORD;
}

/** describePoison's reason for a pointer whose object's header holds the pattern. */
export const POISONED_OBJECT_REASON = "in poisoned memory (an object an earlier collection evacuated or freed: a stale pointer)";

/** Why a pointer value relates to poison, for messages, or null. */
export function describePoison(space: HeapSpace, address: number, headerBytes: number): string | null {
  if (address === POISON_WORD_VALUE) return "the poison pattern 0xdeadbeecdeadbeec (a value read through a stale pointer from memory a collection poisoned)";
  const offset = address - space.base;
  return Number.isSafeInteger(address) && offset >= 0 && offset < space.sizeBytes && hasPoisonedHeader(space, offset, headerBytes)
    ? POISONED_OBJECT_REASON
    : null;
}

/**
 * True when an object at heap offset `offset` (an integer in [0, sizeBytes): a value equal to the
 * pattern is outside every heap) would be 8-aligned with a header word holding the pattern: what
 * describePoison calls poisoned memory. The verifier asks it per object it reaches.
 */
export function hasPoisonedHeader(space: HeapSpace, offset: number, headerBytes: number): boolean {
  if ((offset & 7) !== 0 || offset < headerBytes) return false;
  const i = (offset - headerBytes) >>> 2;
  return space.words[i] === POISON_HALF_WORD && space.words[i + 1] === POISON_HALF_WORD;
}

/**
 * After the sweep: poisons the blocks this sweep freed (in use before it, `wasInUse[b] !== 0`,
 * for b below `topBefore`) and the free lines of every reusable block. Returns the bytes poisoned.
 */
export function poisonSweptBlocks(space: HeapSpace, wasInUse: Uint8Array, topBefore: number): number {
  const state = space.blockState;
  const marks = space.lineMarks;
  const e = space.epoch;
  let bytes = 0;
  for (let b = 0; b < topBefore; b++) {
    const s = b < space.immixTopBlock ? state[b]! : BLOCK_UNALLOCATED;
    if (s === BLOCK_UNALLOCATED) {
      if (wasInUse[b] === 0) continue;
      const start = space.blockAddress(b);
      poisonRange(space, start, start + BYTES_IN_BLOCK);
      bytes += BYTES_IN_BLOCK;
      continue;
    }
    if (s !== BLOCK_REUSABLE) continue;
    const first = b << LOG_LINES_IN_BLOCK;
    let runStart = -1;
    for (let l = first; l <= first + LINES_IN_BLOCK; l++) {
      const available = l < first + LINES_IN_BLOCK && marks[l] !== e && ((l & LINE_IN_BLOCK_MASK) === 0 || marks[l - 1] !== e);
      if (available) {
        if (runStart < 0) runStart = l;
      } else if (runStart >= 0) {
        poisonRange(space, space.lineAddress(runStart), space.lineAddress(l));
        bytes += (l - runStart) << LOG_BYTES_IN_LINE;
        runStart = -1;
      }
    }
  }
  return bytes;
}

/** Poisons `pages` large-object pages from `firstPage` (a run the sweep freed). */
export function poisonLargePages(space: HeapSpace, firstPage: number, pages: number): number {
  const start = space.base + firstPage * BYTES_IN_LARGE_PAGE;
  poisonRange(space, start, start + pages * BYTES_IN_LARGE_PAGE);
  return pages * BYTES_IN_LARGE_PAGE;
}
