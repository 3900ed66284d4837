import { hex } from "../src/errors.js";
import { BYTES_IN_BLOCK, LOG_BYTES_IN_BLOCK, LOG_LINES_IN_BLOCK } from "./heap-constants.js";
import { BLOCK_REUSABLE, type FreedBlockHold, type HeapSpace, type MemoryProtection } from "./heap-space.js";

export type { MemoryProtection };
import type { CopyLog } from "./copy-log.js";
import type { VerifyFailure } from "./heap-verifier.js";
import { POISON_HALF_WORD } from "./poison.js";

/**
 * Page protection of heap memory, when the heap is native memory (the native runtime: mprotect).
 * `protect` makes `[address, address + bytes)` (whole 32 KiB blocks) fault on any access;
 * `unprotect` makes it readable and writable again.
 */

/** Most poison writes one check reports in full (the count covers all of them). */
const MAX_WRITES_REPORTED = 10;

/*
 * The stress quarantine (the collector's `quarantineCollections` option, on with stress): memory
 * a collection freed is not handed out again for a number of collections, so that a pointer the
 * mutator kept across a collection without a root finds poison (gc/poison.ts), not a new object
 * the allocators put where the old one was.
 *
 *   - A block the sweep of collection c freed (every object in it evacuated or dead: under stress
 *     that is every block without a pinned object) is held until collection c + hold starts: not
 *     in the free list, not given back to the large-object space. It is poisoned, then (with a
 *     MemoryProtection) protected, so that any read or write through a stale pointer faults.
 *   - A block the sweep kept (it holds a pinned object, or objects marked in place) is not queued
 *     for the allocators while quarantining: its free lines stay poisoned until the next sweep.
 *   - At the start of each collection, before anything is released, the poison of every
 *     quarantined block that is not protected and of every kept block's free lines is checked: a
 *     word that is not the pattern is a write through a stale pointer, reported (as a
 *     verification failure) with its address, the object that used to live there (its old
 *     address, size and where it moved) and the collection that freed the memory.
 *   - When the allocators or the copy find no clean block, the oldest quarantined block is
 *     released early (`releasedEarly` counts them): quarantine never makes the heap run out.
 *
 * Costs: up to `hold` collections' worth of freed blocks are held (under stress=1 each collection
 * frees about the live data, so the blocks touched grow to about (hold + 2) x live); the check
 * reads every held word once per collection unless protected; one mprotect per run of blocks.
 */
export class Quarantine implements FreedBlockHold {
  /** Per block: the collection that freed it while it is held, else 0. */
  readonly freedBy: Uint32Array;
  /** Held blocks in the order they were freed (a ring). */
  private readonly order: Int32Array;
  private head = 0;
  private count = 0;
  /** Blocks admitted by the current collection's sweep, not yet protected. */
  private fresh: number[] = [];
  /** Per collection still holding memory: its evacuations. */
  private readonly copies = new Map<number, CopyLog>();
  /** The collection under way (the sweep admits blocks for it). */
  cycle = 0;
  releasedEarly = 0;

  constructor(
    private readonly space: HeapSpace,
    private readonly headerBytes: number,
    readonly holdCollections: number,
    private readonly protection: MemoryProtection | undefined,
  ) {
    this.freedBy = new Uint32Array(space.totalBlocks);
    this.order = new Int32Array(space.totalBlocks);
  }

  get heldBlocks(): number {
    return this.count;
  }

  holds(block: number): boolean {
    return this.freedBy[block] !== 0;
  }

  /** True when `address` lies in a held block (its memory may be protected: do not read it). */
  holdsAddress(address: number): boolean {
    const offset = address - this.space.base;
    // Runs for every pointer the verifier checks: a shift, not a float division (offset < 2^32).
    return offset >= 0 && offset < this.space.sizeBytes && this.freedBy[offset >>> LOG_BYTES_IN_BLOCK] !== 0;
  }

  /** The sweep freed `block`: hold it (it is poisoned, then protected, by protectFresh). */
  admit(block: number): void {
    this.freedBy[block] = this.cycle;
    this.order[(this.head + this.count) % this.order.length] = block;
    this.count++;
    this.fresh.push(block);
  }

  /** After the sweep's poisoning: protects the blocks admitted by this collection (runs of them at once). */
  protectFresh(): void {
    const blocks = this.fresh.sort((a, b) => a - b);
    this.fresh = [];
    if (this.protection === undefined) return;
    for (let i = 0; i < blocks.length;) {
      let j = i + 1;
      while (j < blocks.length && blocks[j] === blocks[j - 1]! + 1) j++;
      this.protection.protect(this.space.blockAddress(blocks[i]!), (j - i) * BYTES_IN_BLOCK);
      i = j;
    }
  }

  /** Keeps this collection's evacuations (for the poison-write report) while its memory is held. */
  keepCopies(log: CopyLog): void {
    this.copies.set(this.cycle, log);
  }

  /** At the start of collection `cycle`: releases the blocks held long enough. */
  releaseExpired(cycle: number): void {
    while (this.count > 0 && this.freedBy[this.order[this.head]!]! + this.holdCollections <= cycle) this.releaseOldest();
    for (const c of this.copies.keys()) if (c + this.holdCollections <= cycle) this.copies.delete(c);
  }

  /** Releases the oldest held block to the free list; false if none is held. */
  releaseOldest(): boolean {
    if (this.count === 0) return false;
    const block = this.order[this.head]!;
    this.head = (this.head + 1) % this.order.length;
    this.count--;
    const unprotected = this.fresh.indexOf(block);
    if (unprotected >= 0) this.fresh.splice(unprotected, 1);
    else this.protection?.unprotect(this.space.blockAddress(block), BYTES_IN_BLOCK);
    this.freedBy[block] = 0;
    this.space.returnFreeBlock(block);
    return true;
  }

  /** releaseOldest, counted as early (an allocation or a copy found no clean block). */
  releaseEarly(): boolean {
    if (!this.releaseOldest()) return false;
    this.releasedEarly++;
    return true;
  }

  /**
   * Before collection `cycle` marks anything: every word of held, unprotected blocks and of the
   * free lines of kept blocks (line marks still those of the last sweep) must hold the pattern.
   * Returns the writes found (all counted; the first MAX_WRITES_REPORTED described).
   */
  checkPoison(cycle: number, out: VerifyFailure[]): number {
    const space = this.space;
    let writes = 0;
    const check = (start: number, end: number, freedBy: number): void => {
      const words = space.words;
      const first = (start - space.base) >>> 2;
      const last = (end - space.base) >>> 2;
      for (let i = first; i < last; i++) {
        if (words[i] === POISON_HALF_WORD) continue;
        const address = space.base + (i & ~1) * 4;
        writes++;
        if (out.length < MAX_WRITES_REPORTED) out.push(this.poisonWrite(address, space.readWord(address), freedBy, cycle));
        i |= 1; // one report per word
      }
    };
    if (this.protection === undefined) {
      for (let k = 0; k < this.count; k++) {
        const block = this.order[(this.head + k) % this.order.length]!;
        const start = space.blockAddress(block);
        check(start, start + BYTES_IN_BLOCK, this.freedBy[block]!);
      }
    }
    for (let b = 0; b < space.immixTopBlock; b++) {
      if (space.blockState[b] !== BLOCK_REUSABLE) continue;
      // The holes the last sweep found (and poisoned), as the allocators would see them.
      const end = (b + 1) << LOG_LINES_IN_BLOCK;
      for (let l = space.firstAvailableLine(b << LOG_LINES_IN_BLOCK, end); l < end;) {
        const holeEnd = space.firstUnavailableLine(l + 1, end);
        check(space.lineAddress(l), space.lineAddress(holeEnd), cycle - 1);
        l = space.firstAvailableLine(holeEnd, end);
      }
    }
    return writes;
  }

  private poisonWrite(address: number, value: number, freedBy: number, cycle: number): VerifyFailure {
    return {
      location: { kind: "poisoned-memory", address },
      value,
      reason: `written into poisoned memory since collection #${freedBy} freed it (checked at collection #${cycle}): ${this.formerOccupant(address, freedBy)}; a write through a stale pointer`,
      expected: "the poison pattern 0xdeadbeecdeadbeec",
    };
  }

  /** What lived at `address` before collection `freedBy` freed it, in words. */
  formerOccupant(address: number, freedBy: number): string {
    const c = this.copies.get(freedBy);
    if (c !== undefined) {
      for (let k = 0; k < c.count; k++) {
        const start = c.oldStart(k);
        const size = c.sizeBytes(k);
        if (address >= start && address < start + size) {
          const object = start + this.headerBytes;
          const offset = address >= object ? `+0x${(address - object).toString(16)}` : `-0x${(object - address).toString(16)}`;
          return `object ${hex(object)} (${size} bytes, header included) lived there (${offset}) until collection #${freedBy} moved it to ${hex(c.newStart(k) + this.headerBytes)}`;
        }
      }
    }
    return `no live object was there at collection #${freedBy} (a dead object's memory, or free space)`;
  }

  /** Why a pointer into a held block is stale, for the tracer and the verifier (no memory read). */
  describeHeld(address: number): string {
    const block = (address - this.space.base) >>> LOG_BYTES_IN_BLOCK;
    const freedBy = this.freedBy[block]!;
    return `in block ${block}, quarantined since collection #${freedBy} freed it: ${this.formerOccupant(address, freedBy)} (a stale pointer)`;
  }
}
