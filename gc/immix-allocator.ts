import { InvalidArgumentError, hex } from "../src/errors.js";
import { CollectorError } from "./collector-error.js";
import { BYTES_IN_BLOCK, BYTES_IN_LINE, LINES_IN_BLOCK, LOG_LINES_IN_BLOCK, MAX_IMMIX_OBJECT_BYTES } from "./heap-constants.js";
import type { HeapSpace } from "./heap-space.js";
import { MAX_POINTER_SLOTS, MAX_RAW_BYTES, type ObjectModel } from "./object-model.js";

/** The current hole of a mutator: `[cursor, limit)`, zeroed, free for bump allocation. */
export interface Hole {
  cursor: number;
  limit: number;
}

/**
 * A mutator's thread-local allocator (one per mutator thread).
 *
 * Native fast path: `hole()` gives `[cursor, limit)`; compiled code may bump-allocate objects of
 * at most one line (128 B, header included) inside it by itself, writing headers in the default
 * layout (object-model.ts; the memory is already zero) and setting each object's bit in the
 * allocation bitmap (gc/allocation-bits.ts), and must call back when an object does
 * not fit: `setCursor(itsCursor)` then `alloc(...)`, then take `hole()` again. Anything above one
 * line always goes through `alloc` (medium objects may need the overflow block, large ones the
 * large-object space). After any call that may collect (alloc, collect) the hole is stale.
 */
export interface Mutator {
  /** A new zeroed object with `pointerSlots` null slots and `rawBytes` zero raw bytes: its address. */
  alloc(pointerSlots: number, rawBytes: number): number;
  hole(): Hole;
  /** Hands a partly used hole back: `cursor` must lie in the current `[cursor, limit]`. */
  setCursor(cursor: number): void;
}

/** What an allocator asks of its owner when the heap is full. */
export interface AllocationOwner {
  /** While true, the mutators' slow paths throw (their holes were retired for the collection). */
  readonly isCollecting: boolean;
  /** Collects (and grows) until `sizeBytes` fit, or throws; returns the storage's start. */
  allocationFailed(allocator: ImmixAllocator, sizeBytes: number): number;
  /** Called when the allocator's `bytesUntilPoll` runs out (the collect-every-N-bytes option). */
  poll(allocator: ImmixAllocator): void;
}

/**
 * Bump allocation into holes, after MMTk's immix_allocator.rs. The fast path bumps `cursor`
 * towards `limit`; the slow paths are named for what they do:
 *
 *   acquireRecyclableLines   the next hole of the current block, else of the next recyclable
 *                            block, else a clean block (small objects, <= one line)
 *   overflowAlloc            a medium object (> one line) that does not fit the current hole:
 *                            a second bump region in a clean block of its own
 *   allocLarge               objects above 8 KiB: the large-object space
 *
 * The same class is the collector's copy allocator (`copy`): it evacuates into clean blocks only
 * (recyclable holes were just refilled by the mutators), within the collection's budget, does not
 * zero (copies overwrite), and returns -1 when the headroom is exhausted.
 */
export class ImmixAllocator implements Mutator {
  cursor = 0;
  limit = 0;
  private overflowCursor = 0;
  private overflowLimit = 0;
  /** The block whose holes `acquireRecyclableLines` is walking (-1: none), and where it is. */
  private block = -1;
  private nextLine = 0;
  private blockEndLine = 0;
  /** The copy allocator's budget (set by the collector per collection); mutators use the heap's. */
  copyBudgetBytes = 0;
  /** Allocation bytes left before `owner.poll` (Infinity unless collecting every N bytes). */
  bytesUntilPoll = Infinity;
  /** The heap's allocation bitmap (AllocationBits.bits), set for every object `alloc` makes. */
  private readonly allocationBits: Uint8Array;

  constructor(
    private readonly space: HeapSpace,
    private readonly model: ObjectModel,
    private readonly owner: AllocationOwner | null,
    readonly copy: boolean,
  ) {
    this.allocationBits = space.allocationBits.bits;
  }

  alloc(pointerSlots: number, rawBytes: number): number {
    if (
      !(pointerSlots >= 0 && pointerSlots <= MAX_POINTER_SLOTS && rawBytes >= 0 && rawBytes <= MAX_RAW_BYTES) ||
      pointerSlots % 1 !== 0 ||
      rawBytes % 1 !== 0
    ) {
      throw new InvalidArgumentError(
        "alloc(pointerSlots, rawBytes)",
        `(${pointerSlots}, ${rawBytes})`,
        `integers in [0, ${MAX_POINTER_SLOTS}] and [0, ${MAX_RAW_BYTES}]`,
      );
    }
    const size = this.model.allocationBytes(pointerSlots, rawBytes);
    if ((this.bytesUntilPoll -= size) < 0 || this.space.mutatorBytesSinceCollection >= this.space.nurseryBudgetBytes) this.owner?.poll(this);
    let start = this.cursor;
    if (size <= MAX_IMMIX_OBJECT_BYTES && start + size <= this.limit) {
      this.cursor = start + size; // the fast path
    } else {
      if (this.owner?.isCollecting) {
        throw new CollectorError("REENTRANT", `allocation of ${size} bytes`, this.space.base, "a collection in progress", "no allocation while collecting");
      }
      start = this.allocStorage(size);
      if (start < 0) {
        if (this.owner === null) return -1;
        start = this.owner.allocationFailed(this, size);
      }
    }
    const address = start + this.model.headerBytes;
    this.model.initialize(this.space, address, pointerSlots, rawBytes);
    // The object's allocation bit (gc/allocation-bits.ts), inline: one of these per allocation.
    const granule = (address - this.space.base) >>> 3;
    this.allocationBits[granule >>> 3]! |= 1 << (granule & 7);
    return address;
  }

  /** Storage for `sizeBytes` (8-aligned, header included): its start, or -1 when the heap is full. */
  allocStorage(sizeBytes: number): number {
    if (sizeBytes > MAX_IMMIX_OBJECT_BYTES) return this.allocLarge(sizeBytes);
    const start = this.cursor;
    const end = start + sizeBytes;
    if (end <= this.limit) {
      this.cursor = end;
      return start;
    }
    if (sizeBytes > BYTES_IN_LINE) return this.overflowAlloc(sizeBytes);
    return this.acquireRecyclableLines(sizeBytes);
  }

  hole(): Hole {
    return { cursor: this.cursor, limit: this.limit };
  }

  /** The parts of this allocator's holes not allocated into yet (the small and the overflow hole). */
  unusedHoles(): Hole[] {
    return [this.hole(), { cursor: this.overflowCursor, limit: this.overflowLimit }];
  }

  setCursor(cursor: number): void {
    if (!(cursor >= this.cursor && cursor <= this.limit) || cursor % 8 !== 0) {
      throw new InvalidArgumentError("setCursor", hex(cursor), `an 8-aligned address in [${hex(this.cursor)}, ${hex(this.limit)}]`);
    }
    this.cursor = cursor;
  }

  /** Forgets every hole and block (at the start of a collection: the sweep redraws them). */
  reset(): void {
    this.cursor = this.limit = 0;
    this.overflowCursor = this.overflowLimit = 0;
    this.block = -1;
  }

  private budgetBytes(): number {
    return this.copy ? this.copyBudgetBytes : this.space.mutatorBudgetBytes();
  }

  private allocLarge(sizeBytes: number): number {
    if (!this.copy) this.space.mutatorBytesSinceCollection += sizeBytes;
    return this.space.allocLarge(sizeBytes, this.budgetBytes());
  }

  private overflowAlloc(sizeBytes: number): number {
    let start = this.overflowCursor;
    if (start + sizeBytes > this.overflowLimit) {
      const block = this.acquireCleanBlock();
      if (block < 0) return -1;
      start = this.space.blockAddress(block);
      this.overflowLimit = start + BYTES_IN_BLOCK;
      if (!this.copy) {
        this.space.zero(start, this.overflowLimit);
        this.space.noteAllocated(start, this.overflowLimit);
        this.space.mutatorBytesSinceCollection += BYTES_IN_BLOCK;
      }
    }
    this.overflowCursor = start + sizeBytes;
    return start;
  }

  private acquireRecyclableLines(sizeBytes: number): number {
    const space = this.space;
    for (;;) {
      if (this.block >= 0) {
        const start = space.firstAvailableLine(this.nextLine, this.blockEndLine);
        if (start < this.blockEndLine) {
          const end = space.firstUnavailableLine(start + 1, this.blockEndLine);
          this.nextLine = end;
          this.cursor = space.lineAddress(start);
          this.limit = space.lineAddress(end);
          if (!this.copy) {
            space.zero(this.cursor, this.limit);
            space.noteAllocated(this.cursor, this.limit);
            space.mutatorBytesSinceCollection += this.limit - this.cursor;
          }
          // A hole is at least one line, so any small object fits.
          const objectStart = this.cursor;
          this.cursor += sizeBytes;
          return objectStart;
        }
        this.block = -1;
      }
      const block = this.copy ? -1 : space.acquireRecyclableBlock();
      if (block >= 0) {
        this.startBlock(block);
        continue;
      }
      const clean = this.acquireCleanBlock();
      if (clean < 0) return -1;
      this.startBlock(clean);
    }
  }

  private startBlock(block: number): void {
    this.block = block;
    this.nextLine = block << LOG_LINES_IN_BLOCK;
    this.blockEndLine = this.nextLine + LINES_IN_BLOCK;
  }

  private acquireCleanBlock(): number {
    return this.space.acquireCleanBlock(this.budgetBytes());
  }
}
