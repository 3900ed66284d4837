import { BYTES_IN_BLOCK, LOG_BYTES_IN_BLOCK, LOG_BYTES_IN_WORD } from "./heap-constants.js";

/** 8-byte granules in a block: the entries of a TraversalIndex page. */
const LOG_GRANULES_IN_BLOCK = LOG_BYTES_IN_BLOCK - LOG_BYTES_IN_WORD;
/*
 * get and set, run per pointer, spell these shifts as literals: V8 (Node 20) reloads a module
 * constant and checks it for the hole at every use in optimized code (about 6 instructions each).
 * They stand for LOG_BYTES_IN_BLOCK (15), LOG_BYTES_IN_WORD (3), LOG_GRANULES_IN_BLOCK (12) and
 * the granule-in-block mask (4095), checked here once.
 */
if (LOG_BYTES_IN_BLOCK !== 15 || LOG_BYTES_IN_WORD !== 3 || LOG_GRANULES_IN_BLOCK !== 12) throw new Error("traversal-index.ts: literal shifts out of date");
/** Stamps restart (the pool cleared once) before they pass this: a traversal adds at most 2^29 (MAX_HEAP_BYTES / 8). */
const MAX_STAMP = 2 ** 30;

/**
 * Heap offset -> traversal index, for one traversal at a time (the heap verifier's), with
 * nothing to clear between traversals.
 *
 * One int32 entry per 8-byte granule, direct-mapped in a page per 32 KiB block of the heap
 * (`pageOf[block]`, 0 = the block has no page: page 0 is never written and reads all zero). A
 * block's page is taken from a pool when the traversal reaches its first object there, and goes
 * back at the end of the traversal (`finish`): the index costs 16 KiB per block holding a reached
 * object (half of those blocks' bytes) and one lookup per pointer.
 *
 * Entries are stamped: the k-th object of a traversal is stored as `stamp + k + 1`, and each
 * traversal's stamp is the last one's plus its count, above every value written before. So an
 * entry at or below the stamp is "not reached", whatever an earlier traversal left in the page:
 * pages are never cleared when they change hands, and a traversal that throws midway leaves
 * nothing behind once `finish` runs. When stamps would reach MAX_STAMP the pool is cleared once.
 * Heap offsets are integers below 2^32 (MAX_HEAP_BYTES).
 */
export class TraversalIndex {
  private entries = new Int32Array(4 << LOG_GRANULES_IN_BLOCK);
  /** Pages of `entries` handed out so far (page 0, the empty page, included). */
  private pagesMade = 1;
  private pageOf = new Int32Array(0);
  /** Pages back from earlier traversals, ready to be taken (a stack). */
  private freePages = new Int32Array(4);
  private freeCount = 0;
  /** Blocks whose page this traversal took. */
  private taken = new Int32Array(4);
  private takenCount = 0;
  private stamp = 0;
  private sizeBytes = 0;

  /** Starts a traversal over a heap of `heapBytes`: every entry reads "not reached". */
  begin(heapBytes: number): void {
    this.sizeBytes = heapBytes;
    const blocks = Math.ceil(heapBytes / BYTES_IN_BLOCK);
    if (this.pageOf.length < blocks) this.pageOf = new Int32Array(blocks);
  }

  /** The traversal index of the object at `offset` (an integer in [0, 2^32)), or a negative number if not reached. */
  get(offset: number): number {
    if (offset >= this.sizeBytes || (offset & 7) !== 0) return -1;
    const entry = this.entries[(this.pageOf[offset >>> 15]! << 12) | ((offset >>> 3) & 4095)]!;
    return entry - this.stamp - 1;
  }

  /**
   * True when an object at an offset in [from, to) (8-aligned, inside the heap) was reached. Only
   * `from`'s block is looked at: past it, `to` can reach the next block's first granule, where
   * no Immix object starts (it would have no room for its header).
   */
  anyInRange(from: number, to: number): boolean {
    const page = this.pageOf[from >>> 15]! << 12;
    const stamp = this.stamp;
    const first = (from >>> 3) & 4095;
    const end = Math.min(4096, first + ((to - from) >>> 3));
    for (let g = first; g < end; g++) if (this.entries[page | g]! > stamp) return true;
    return false;
  }

  /** Records `offset` (8-aligned, inside the heap, not reached yet) as traversal index `k`. */
  set(offset: number, k: number): void {
    const block = offset >>> 15;
    let page = this.pageOf[block]!;
    if (page === 0) page = this.takePage(block);
    this.entries[(page << 12) | ((offset >>> 3) & 4095)] = this.stamp + k + 1;
  }

  private takePage(block: number): number {
    let page: number;
    if (this.freeCount > 0) {
      page = this.freePages[--this.freeCount]!;
    } else {
      page = this.pagesMade++;
      if (this.pagesMade << LOG_GRANULES_IN_BLOCK > this.entries.length) this.entries = grownInt32(this.entries, this.pagesMade << LOG_GRANULES_IN_BLOCK);
    }
    this.pageOf[block] = page;
    if (this.takenCount === this.taken.length) this.taken = grownInt32(this.taken, this.takenCount + 1);
    this.taken[this.takenCount++] = block;
    return page;
  }

  /** Ends the traversal that reached `count` objects: its entries become "not reached", its pages go back to the pool. */
  finish(count: number): void {
    if (this.freeCount + this.takenCount > this.freePages.length) this.freePages = grownInt32(this.freePages, this.freeCount + this.takenCount);
    for (let i = 0; i < this.takenCount; i++) {
      const block = this.taken[i]!;
      this.freePages[this.freeCount++] = this.pageOf[block]!;
      this.pageOf[block] = 0;
    }
    this.takenCount = 0;
    this.stamp += count;
    if (this.stamp >= MAX_STAMP) {
      this.entries.fill(0);
      this.stamp = 0;
    }
  }
}

/** A copy of `a` with room for at least `length` entries (doubling). */
function grownInt32(a: Int32Array, length: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(Math.max(length, a.length * 2));
  b.set(a);
  return b;
}
