import { readU64, writeU64 } from "../src/bytes/word-codec.js";
import { InvalidArgumentError, hex } from "../src/errors.js";
import {
  BYTES_IN_BLOCK,
  BYTES_IN_LARGE_PAGE,
  BYTES_IN_LINE,
  LARGE_PAGES_IN_BLOCK,
  LINES_IN_BLOCK,
  LINE_IN_BLOCK_MASK,
  LOG_BYTES_IN_BLOCK,
  LOG_BYTES_IN_LARGE_PAGE,
  LOG_BYTES_IN_LINE,
  LOG_BYTES_IN_MARK_WORD,
  LOG_BYTES_IN_WORD,
  LOG_LINES_IN_BLOCK,
  MAX_HEAP_BYTES,
  MAX_HOLES_IN_BLOCK,
  MAX_LINE_EPOCH,
} from "./heap-constants.js";
import { AllocationBits } from "./allocation-bits.js";
import { LargeObjectSpace } from "./large-object-space.js";
import type { HeapMemory } from "./object-model.js";
import type { BarrierLog } from "./remembered-set.js";

/** The memory the collector manages: `[base, base + sizeBytes)`, backed by `buffer`. */
/** Page protection of a heap's memory (native heaps: mprotect), used by the stress quarantine. */
export interface MemoryProtection {
  protect(address: number, bytes: number): void;
  unprotect(address: number, bytes: number): void;
}

/**
 * What the space asks of the stress quarantine (gc/quarantine.ts implements it): freed blocks it
 * holds back from the free list, and what lived at a held address. Declared here so the space
 * does not import the quarantine (which reads the space).
 */
export interface FreedBlockHold {
  holds(block: number): boolean;
  holdsAddress(address: number): boolean;
  admit(block: number): void;
  releaseEarly(): boolean;
  describeHeld(address: number): string;
}

export interface HeapRegion {
  /** Address of the region's first byte (8-aligned): the numbers pointers are made of. */
  base: number;
  /** Simulated memory, or a koffi view over native memory: both are ArrayBuffers. */
  buffer: ArrayBuffer;
  /** Bytes reserved: the maximum heap size. Rounded down to whole blocks. */
  sizeBytes: number;
  /** Where the region starts inside `buffer` (8-aligned, default 0). */
  byteOffset?: number;
  /** Page protection of this memory (native heaps), used by the stress quarantine. */
  protection?: MemoryProtection;
  /**
   * Memory for the allocation bitmap (gc/allocation-bits.ts), at least sizeBytes / 64 bytes,
   * zeroed: native heaps pass memory the C allocation fast path sets bits in. Default: its own.
   */
  allocationBits?: ArrayBuffer;
  /**
   * Generational collection (gc/remembered-set.ts): memory for the write barrier's unlogged
   * bitmap (the allocation bitmap's size and layout, zeroed) and the log the barrier appends to;
   * native heaps pass the runtime's (runtime-barrier.c). Default: JavaScript's own.
   */
  unloggedBits?: ArrayBuffer;
  barrierLog?: BarrierLog;
}

/*
 * Block states, one byte per block in `blockState` (MMTk's BlockState):
 *   UNALLOCATED  free: no live object; a clean block for the allocators.
 *   UNMARKED     in use, liveness unknown: handed to an allocator since the last sweep, or any
 *                block in use once a collection has started. Still UNMARKED at the sweep = dead.
 *   MARKED       holds a marked object (during a collection); after the sweep: in use with no
 *                free line (full).
 *   REUSABLE     after the sweep: in use with free lines; `blockUnavailableLines` holds how many
 *                lines are not free, `blockHoles` how many holes (runs of free lines) it has.
 */
export const BLOCK_UNALLOCATED = 0;
export const BLOCK_UNMARKED = 1;
export const BLOCK_MARKED = 2;
export const BLOCK_REUSABLE = 3;
export const BLOCK_STATE_NAMES = ["unallocated", "unmarked", "marked", "reusable"] as const;
export type BlockStateName = (typeof BLOCK_STATE_NAMES)[number];

/** What one sweep of the Immix blocks found (reused between sweeps). */
export interface BlockSweepSummary {
  blocksFreed: number;
  blocksFull: number;
  blocksReusable: number;
  markedLines: number;
  /** Free lines in blocks still in use: the holes the allocator will fill. */
  reusableLines: number;
}

/**
 * The heap: the caller's memory, carved into 32 KiB blocks of 128 B lines for Immix (growing up
 * from the base) and 4 KiB pages for the large-object space (growing down from the end), with
 * every piece of collector state in side tables indexed by block, line, page or word:
 *
 *   blockState / blockUnavailableLines / blockHoles / blockDefrag   per block
 *   lineMarks      per line: the epoch of the collection that last marked the line
 *   lineEvacuated  per line: the epoch of the collection that last evacuated an object from it
 *   lineAllocated  per line: the epoch in which a mutator was last handed the line (as part of a
 *                  hole) to allocate into; equal to `epoch` = allocated since the last collection
 *   markBits       one bit per 8-byte granule: the object starting there is marked
 *   allocationBits one bit per 8-byte granule: an object (live or not yet swept) starts there
 *                  (gc/allocation-bits.ts: its invariant and who sets and clears it)
 *
 * Line marks are epochs, not bits: a line is live iff `lineMarks[line] === epoch`; each
 * collection advances the epoch, so last cycle's marks become stale without a clearing pass.
 * When the epoch wraps (after MAX_LINE_EPOCH collections) the line tables are cleared once, so
 * a mark left long ago can never equal a new epoch.
 *
 * Budget: the reservation is the maximum heap; `limitBytes` is the part in use now (it grows,
 * see ImmixCollector). Mutators may fill it up to `limitBytes - headroomBytes`; the headroom is
 * left for evacuation during a collection.
 */
export class HeapSpace implements HeapMemory {
  readonly base: number;
  readonly sizeBytes: number;
  readonly words: Uint32Array;
  readonly bytes: Uint8Array;
  readonly totalBlocks: number;
  readonly totalLines: number;

  readonly blockState: Uint8Array;
  readonly blockUnavailableLines: Uint16Array;
  readonly blockHoles: Uint8Array;
  readonly blockDefrag: Uint8Array;
  readonly lineMarks: Uint8Array;
  readonly lineEvacuated: Uint8Array;
  readonly lineAllocated: Uint8Array;
  readonly markBits: Uint32Array;
  readonly allocationBits: AllocationBits;
  /** Marked lines / free lines summed over the blocks with a given number of holes (last sweep). */
  readonly markHistogram = new Uint32Array(MAX_HOLES_IN_BLOCK + 1);
  readonly availableHistogram = new Uint32Array(MAX_HOLES_IN_BLOCK + 1);

  readonly los: LargeObjectSpace;
  /** Freed blocks held back while stressing (gc/quarantine.ts), or null. */
  quarantine: FreedBlockHold | null = null;

  /** The current (during a collection) or last (between collections) marking epoch. */
  epoch = 1;
  epochWraps = 0;
  /** Blocks [0, immixTopBlock) have been used by Immix; blocks above it are untouched. */
  immixTopBlock = 0;
  /** The highest immixTopBlock so far (the heap map draws up to it). */
  immixHighWaterBlock = 0;
  blocksInUse = 0;
  limitBytes: number;
  readonly maxBytes: number;
  /**
   * Bytes handed to mutators since the last collection (holes, overflow blocks, large objects):
   * the allocation volume a generational collector's nursery budget is measured in. Reset by the
   * collector after each collection.
   */
  mutatorBytesSinceCollection = 0;
  /** The nursery budget (ImmixCollector's nurseryBytes): a mutator at or past it asks for a collection. Infinity: none. */
  nurseryBudgetBytes = Infinity;
  headroomBytes = 0;

  private readonly freeBlocks: Int32Array;
  private freeBlockCount = 0;
  private readonly recyclable: Int32Array;
  private recyclableHead = 0;
  private recyclableTail = 0;

  constructor(
    region: HeapRegion,
    limitBytes: number,
    private readonly headroomFraction: number,
  ) {
    const { base, buffer } = region;
    const byteOffset = region.byteOffset ?? 0;
    if (!Number.isSafeInteger(base) || base <= 0 || base % 8 !== 0) {
      throw new InvalidArgumentError("heap.base", String(base), "a positive 8-aligned address below 2^53");
    }
    const sizeBytes = Math.floor(region.sizeBytes / BYTES_IN_BLOCK) * BYTES_IN_BLOCK;
    if (!(sizeBytes >= BYTES_IN_BLOCK && sizeBytes <= MAX_HEAP_BYTES)) {
      throw new InvalidArgumentError("heap.sizeBytes", String(region.sizeBytes), `at least one ${BYTES_IN_BLOCK}-byte block and at most ${MAX_HEAP_BYTES}`);
    }
    if (base + sizeBytes > Number.MAX_SAFE_INTEGER) throw new InvalidArgumentError("heap", hex(base), "a region ending below 2^53");
    if (!Number.isInteger(byteOffset) || byteOffset < 0 || byteOffset % 8 !== 0 || byteOffset + sizeBytes > buffer.byteLength) {
      throw new InvalidArgumentError("heap.buffer", `${buffer.byteLength} bytes at offset ${byteOffset}`, `room for ${sizeBytes} bytes at an 8-aligned offset`);
    }
    this.base = base;
    this.sizeBytes = sizeBytes;
    this.maxBytes = sizeBytes;
    this.words = new Uint32Array(buffer, byteOffset, sizeBytes >>> 2);
    this.bytes = new Uint8Array(buffer, byteOffset, sizeBytes);
    this.totalBlocks = sizeBytes >>> LOG_BYTES_IN_BLOCK;
    this.totalLines = sizeBytes >>> LOG_BYTES_IN_LINE;
    this.blockState = new Uint8Array(this.totalBlocks);
    this.blockUnavailableLines = new Uint16Array(this.totalBlocks);
    this.blockHoles = new Uint8Array(this.totalBlocks);
    this.blockDefrag = new Uint8Array(this.totalBlocks);
    this.lineMarks = new Uint8Array(this.totalLines);
    this.lineEvacuated = new Uint8Array(this.totalLines);
    this.lineAllocated = new Uint8Array(this.totalLines);
    this.markBits = new Uint32Array(Math.ceil(sizeBytes / (1 << LOG_BYTES_IN_MARK_WORD)));
    const bitsMemory = region.allocationBits;
    if (bitsMemory !== undefined && !(bitsMemory instanceof ArrayBuffer && bitsMemory.byteLength >= AllocationBits.bytesFor(sizeBytes)))
      throw new InvalidArgumentError(
        "heap.allocationBits",
        `${bitsMemory?.byteLength} bytes`,
        `an ArrayBuffer of at least ${AllocationBits.bytesFor(sizeBytes)} bytes`,
      );
    this.allocationBits = new AllocationBits(sizeBytes, bitsMemory);
    this.freeBlocks = new Int32Array(this.totalBlocks);
    this.recyclable = new Int32Array(this.totalBlocks);
    this.los = new LargeObjectSpace(sizeBytes >>> LOG_BYTES_IN_LARGE_PAGE, () => this.immixTopBlock * LARGE_PAGES_IN_BLOCK);
    this.limitBytes = 0;
    this.setLimit(limitBytes);
  }

  // --- memory -------------------------------------------------------------------------------

  readWord(address: number): number {
    return readU64(this.words, (address - this.base) >>> 2);
  }

  writeWord(address: number, value: number): void {
    writeU64(this.words, (address - this.base) >>> 2, value);
  }

  /** True when `address` lies inside the reservation. */
  contains(address: number): boolean {
    return address >= this.base && address < this.base + this.sizeBytes;
  }

  blockAddress(block: number): number {
    return this.base + block * BYTES_IN_BLOCK;
  }

  lineAddress(line: number): number {
    return this.base + line * BYTES_IN_LINE;
  }

  // --- budget -------------------------------------------------------------------------------

  /** Bytes held by Immix blocks in use and large-object pages in use. */
  usedBytes(): number {
    return this.blocksInUse * BYTES_IN_BLOCK + this.los.pagesInUse * BYTES_IN_LARGE_PAGE;
  }

  /** What the mutators may fill: the limit minus the evacuation headroom. */
  mutatorBudgetBytes(): number {
    return this.limitBytes - this.headroomBytes;
  }

  /** Sets the usable heap size (whole blocks, at most the reservation) and its headroom. */
  setLimit(limitBytes: number): void {
    const blocks = Math.min(this.totalBlocks, Math.max(1, Math.ceil(limitBytes / BYTES_IN_BLOCK)));
    this.limitBytes = blocks * BYTES_IN_BLOCK;
    this.headroomBytes = this.headroomFraction > 0 ? Math.max(1, Math.ceil(blocks * this.headroomFraction)) * BYTES_IN_BLOCK : 0;
    if (this.headroomBytes >= this.limitBytes) this.headroomBytes = 0;
  }

  /** Clean blocks the whole reservation could still hand out (ignoring the budget). */
  physicallyFreeBlocks(): number {
    const aboveTop = Math.floor(this.los.bottomPage / LARGE_PAGES_IN_BLOCK) - this.immixTopBlock;
    return this.freeBlockCount + Math.max(0, aboveTop);
  }

  // --- blocks -------------------------------------------------------------------------------

  /**
   * A clean block for an allocator, or -1 when taking one would exceed `budgetBytes` or the
   * reservation has none left. Lowest free block first; then the untouched blocks above the top.
   */
  acquireCleanBlock(budgetBytes: number): number {
    if (this.usedBytes() + BYTES_IN_BLOCK > budgetBytes) return -1;
    let block: number;
    if (this.freeBlockCount === 0 && (this.immixTopBlock + 1) * LARGE_PAGES_IN_BLOCK > this.los.bottomPage) this.quarantine?.releaseEarly();
    if (this.freeBlockCount > 0) block = this.freeBlocks[--this.freeBlockCount]!;
    else if ((this.immixTopBlock + 1) * LARGE_PAGES_IN_BLOCK <= this.los.bottomPage) block = this.immixTopBlock++;
    else return -1;
    if (this.immixTopBlock > this.immixHighWaterBlock) this.immixHighWaterBlock = this.immixTopBlock;
    this.blockState[block] = BLOCK_UNMARKED;
    this.blockHoles[block] = 0;
    this.blockUnavailableLines[block] = 0;
    this.blockDefrag[block] = 0;
    this.clearMarkBits(block * BYTES_IN_BLOCK, BYTES_IN_BLOCK);
    this.allocationBits.clear(block * BYTES_IN_BLOCK, (block + 1) * BYTES_IN_BLOCK);
    this.blocksInUse++;
    return block;
  }

  /**
   * Storage for a large object: a zeroed run of pages in the large-object space, or -1 when it
   * would exceed `budgetBytes` or no run fits.
   */
  allocLarge(sizeBytes: number, budgetBytes: number): number {
    const pages = LargeObjectSpace.pagesFor(sizeBytes);
    if (this.usedBytes() + pages * BYTES_IN_LARGE_PAGE > budgetBytes) return -1;
    const first = this.los.allocPages(pages);
    if (first < 0) return -1;
    const offset = first * BYTES_IN_LARGE_PAGE;
    this.bytes.fill(0, offset, offset + pages * BYTES_IN_LARGE_PAGE);
    this.clearMarkBits(offset, pages * BYTES_IN_LARGE_PAGE);
    this.allocationBits.clear(offset, offset + pages * BYTES_IN_LARGE_PAGE);
    return this.base + offset;
  }

  /** The next block the last sweep left with free lines, or -1. */
  acquireRecyclableBlock(): number {
    while (this.recyclableHead < this.recyclableTail) {
      const block = this.recyclable[this.recyclableHead++]!;
      if (this.blockState[block] === BLOCK_REUSABLE) {
        this.blockState[block] = BLOCK_UNMARKED;
        return block;
      }
    }
    return -1;
  }

  /** Recyclable blocks no allocator has taken since the last sweep. */
  unusedRecyclableBlocks(): number {
    return this.recyclableTail - this.recyclableHead;
  }

  /**
   * First line in [from, end) that is free for allocation: not marked in the current epoch and
   * not right after a marked line of the same block (conservative marking: a small object marks
   * only its first line and may spill into the next). `end` if none.
   */
  firstAvailableLine(from: number, end: number): number {
    const marks = this.lineMarks;
    const e = this.epoch;
    for (let l = from; l < end; l++) {
      if (marks[l] !== e && ((l & LINE_IN_BLOCK_MASK) === 0 || marks[l - 1] !== e)) return l;
    }
    return end;
  }

  /** First line in [from, end) that is not free for allocation; `end` if none. */
  firstUnavailableLine(from: number, end: number): number {
    const marks = this.lineMarks;
    const e = this.epoch;
    for (let l = from; l < end; l++) {
      if (marks[l] === e || ((l & LINE_IN_BLOCK_MASK) !== 0 && marks[l - 1] === e)) return l;
    }
    return end;
  }

  // --- marking ------------------------------------------------------------------------------

  /**
   * Starts a collection's marking: advances the epoch (clearing the line tables on wrap-around),
   * clears the mark bitmap over the used parts of the heap, and makes every block in use UNMARKED.
   */
  prepareMarking(): void {
    if (this.epoch === MAX_LINE_EPOCH) {
      this.lineMarks.fill(0);
      this.lineEvacuated.fill(0);
      this.lineAllocated.fill(0);
      this.epoch = 1;
      this.epochWraps++;
    } else {
      this.epoch++;
    }
    this.markBits.fill(0, 0, (this.immixTopBlock * BYTES_IN_BLOCK) >>> LOG_BYTES_IN_MARK_WORD);
    this.markBits.fill(0, (this.los.bottomPage * BYTES_IN_LARGE_PAGE) >>> LOG_BYTES_IN_MARK_WORD);
    const state = this.blockState;
    for (let b = 0; b < this.immixTopBlock; b++) if (state[b] !== BLOCK_UNALLOCATED) state[b] = BLOCK_UNMARKED;
    this.recyclableHead = this.recyclableTail = 0;
  }

  /**
   * Starts a nursery collection's marking (sticky mark bits, after MMTk's StickyImmix): the epoch
   * and the mark bitmap stay as the last collection left them, so every old object (one that
   * survived a collection) is still marked and the lines it lies in still carry the epoch.
   * A block in use becomes MARKED when one of its lines carries the epoch (it holds an old
   * object: never freed by this collection), else UNMARKED (only objects allocated since the
   * last collection: freed whole unless the trace marks one of them).
   *
   * Why the sweep then frees only what is provably free: a line is live iff it carries the
   * epoch. Old objects marked their lines in earlier collections of this epoch (the first line
   * of a small one, the line after it kept unavailable by the conservative rule; every line of a
   * medium one), and the allocators only handed out lines that were free then, so a line that
   * does not carry the epoch holds nothing but young objects, and only dead ones once the trace
   * (which marks the lines of every young survivor) is over.
   */
  prepareNurseryMarking(): void {
    const state = this.blockState;
    const marks = this.lineMarks;
    const e = this.epoch;
    for (let b = 0; b < this.immixTopBlock; b++) {
      if (state[b] === BLOCK_UNALLOCATED) continue;
      const first = b << LOG_LINES_IN_BLOCK;
      let old = false;
      for (let l = first; l < first + LINES_IN_BLOCK && !old; l++) old = marks[l] === e;
      state[b] = old ? BLOCK_MARKED : BLOCK_UNMARKED;
    }
    this.recyclableHead = this.recyclableTail = 0;
  }

  /**
   * After marking, before the sweep: the allocation bits of the used heap (Immix blocks below the
   * top, the large-object space) become the mark bits, so only the objects this collection kept
   * (marked in place or evacuation's new copies) still start an object; the dead, the freed and
   * the old copies of evacuated objects no longer do.
   */
  keepMarkedAsAllocated(): void {
    this.allocationBits.copyMarks(this.markBits, 0, this.immixTopBlock * BYTES_IN_BLOCK);
    this.allocationBits.copyMarks(this.markBits, this.los.bottomPage * BYTES_IN_LARGE_PAGE, this.sizeBytes);
  }

  /** Clears the mark bits of `[offset, offset + sizeBytes)` (offsets from the base, 256-aligned). */
  clearMarkBits(offset: number, sizeBytes: number): void {
    this.markBits.fill(0, offset >>> LOG_BYTES_IN_MARK_WORD, (offset + sizeBytes) >>> LOG_BYTES_IN_MARK_WORD);
  }

  isMarked(address: number): boolean {
    const g = (address - this.base) >>> LOG_BYTES_IN_WORD;
    return (this.markBits[g >>> 5]! & (1 << (g & 31))) !== 0;
  }

  setMarked(address: number): void {
    const g = (address - this.base) >>> LOG_BYTES_IN_WORD;
    this.markBits[g >>> 5]! |= 1 << (g & 31);
  }

  /**
   * Conservative line marking (the paper): an object of at most one line marks only the line
   * it starts in; a medium object marks every line it covers. Also marks its block.
   */
  markLines(start: number, sizeBytes: number): void {
    const offset = start - this.base;
    const first = offset >>> LOG_BYTES_IN_LINE;
    const e = this.epoch;
    this.lineMarks[first] = e;
    if (sizeBytes > BYTES_IN_LINE) {
      const last = (offset + sizeBytes - 1) >>> LOG_BYTES_IN_LINE;
      for (let l = first + 1; l <= last; l++) this.lineMarks[l] = e;
    }
    this.blockState[offset >>> LOG_BYTES_IN_BLOCK] = BLOCK_MARKED;
  }

  /** Records that an object was evacuated from `[start, start + sizeBytes)` (for the heap map). */
  markEvacuated(start: number, sizeBytes: number): void {
    const offset = start - this.base;
    const last = (offset + sizeBytes - 1) >>> LOG_BYTES_IN_LINE;
    for (let l = offset >>> LOG_BYTES_IN_LINE; l <= last; l++) this.lineEvacuated[l] = this.epoch;
  }

  // --- sweeping -----------------------------------------------------------------------------

  /**
   * Sweeps the Immix blocks after marking: blocks never marked become UNALLOCATED; marked blocks
   * are counted line by line into their hole count, unavailable lines and the two histograms,
   * and become REUSABLE (queued for the allocators, lowest first) or stay MARKED (full).
   * Untouched blocks at the top are given back so that the large-object space may grow into them.
   */
  sweepBlocks(out: BlockSweepSummary): BlockSweepSummary {
    out.blocksFreed = out.blocksFull = out.blocksReusable = out.markedLines = out.reusableLines = 0;
    this.markHistogram.fill(0);
    this.availableHistogram.fill(0);
    const state = this.blockState;
    const marks = this.lineMarks;
    const e = this.epoch;
    this.recyclableHead = this.recyclableTail = 0;
    for (let b = 0; b < this.immixTopBlock; b++) {
      const s = state[b]!;
      if (s === BLOCK_UNALLOCATED) continue;
      if (s === BLOCK_UNMARKED) {
        state[b] = BLOCK_UNALLOCATED;
        this.blockHoles[b] = 0;
        this.blockUnavailableLines[b] = 0;
        this.blocksInUse--;
        out.blocksFreed++;
        this.quarantine?.admit(b);
        continue;
      }
      let marked = 0;
      let available = 0;
      let holes = 0;
      let previousMarked = false;
      let inHole = false;
      const first = b << LOG_LINES_IN_BLOCK;
      for (let l = first; l < first + LINES_IN_BLOCK; l++) {
        const m = marks[l] === e;
        if (m) {
          marked++;
          inHole = false;
        } else if (previousMarked) {
          inHole = false;
        } else {
          available++;
          if (!inHole) {
            holes++;
            inHole = true;
          }
        }
        previousMarked = m;
      }
      this.blockHoles[b] = holes;
      this.blockUnavailableLines[b] = LINES_IN_BLOCK - available;
      this.markHistogram[holes] = this.markHistogram[holes]! + marked;
      this.availableHistogram[holes] = this.availableHistogram[holes]! + available;
      out.markedLines += marked;
      if (available > 0) {
        state[b] = BLOCK_REUSABLE;
        // Quarantining: the free lines stay poisoned until the next sweep (not queued).
        if (this.quarantine === null) this.recyclable[this.recyclableTail++] = b;
        out.blocksReusable++;
        out.reusableLines += available;
      } else {
        state[b] = BLOCK_MARKED;
        out.blocksFull++;
      }
    }
    const held = this.quarantine;
    while (this.immixTopBlock > 0 && state[this.immixTopBlock - 1] === BLOCK_UNALLOCATED && held?.holds(this.immixTopBlock - 1) !== true) this.immixTopBlock--;
    this.freeBlockCount = 0;
    for (let b = this.immixTopBlock - 1; b >= 0; b--) if (state[b] === BLOCK_UNALLOCATED && held?.holds(b) !== true) this.freeBlocks[this.freeBlockCount++] = b;
    return out;
  }

  /** A free block back in the free list, taken next (a quarantined block released). */
  returnFreeBlock(block: number): void {
    this.freeBlocks[this.freeBlockCount++] = block;
  }

  /** Records that a mutator was handed `[start, end)` (line-aligned) in this epoch (for the heap map). */
  noteAllocated(start: number, end: number): void {
    this.lineAllocated.fill(this.epoch, (start - this.base) >>> LOG_BYTES_IN_LINE, (end - this.base) >>> LOG_BYTES_IN_LINE);
  }

  /** Zeroes `[start, end)`: holes and clean blocks are handed out zeroed. */
  zero(start: number, end: number): void {
    this.bytes.fill(0, start - this.base, end - this.base);
  }
}
