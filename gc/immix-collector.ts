import { InvalidArgumentError, hex } from "../src/errors.js";
import { CollectorError, HeapExhaustedError, RootNotObjectError } from "./collector-error.js";
import { NO_DEFRAG_THRESHOLD, defragThreshold, flagDefragCandidates } from "./defrag.js";
import { type CycleStats, GcStats } from "./gc-stats.js";
import { GlobalRoots, type SlotMemory } from "./global-roots.js";
import { BYTES_IN_BLOCK, BYTES_IN_LARGE_PAGE, BYTES_IN_LINE, DEFAULT_HEADROOM_FRACTION, LINES_IN_BLOCK, LOG_BYTES_IN_BLOCK } from "./heap-constants.js";
import { type HeapMap, buildHeapMap } from "./heap-map-svg.js";
import { BLOCK_UNALLOCATED, type BlockSweepSummary, type HeapRegion, HeapSpace } from "./heap-space.js";
import { type GraphInspection, type VerifyFailure, formatVerifyFailure, inspectGraph } from "./heap-verifier.js";
import { type AllocationOwner, ImmixAllocator, type Mutator } from "./immix-allocator.js";
import { MarkStack } from "./mark-stack.js";
import { describeNonObjectStart, isNonObjectStartInHeap } from "./object-start.js";
import { describePoison, isPoisonedWord, poisonLargePages, poisonRange, poisonSweptBlocks } from "./poison.js";
import { Quarantine } from "./quarantine.js";
import { CopyLog } from "./copy-log.js";
import { DEFAULT_OBJECT_MODEL, type ObjectModel } from "./object-model.js";
import type { RootScanner } from "./root-scanning.js";
import { RememberedSet } from "./remembered-set.js";
import { findMissingBarriers, findUnmarkedReachable } from "./barrier-verifier.js";

/** The reason of a collection the nursery budget triggered. */
const NURSERY_BUDGET_REASON = "nursery budget";

export interface CollectorOptions {
  /**
   * After every collection, check the reachable graph (every object live, in a live line or the
   * large-object space, no pointer into free or evacuated memory) and compare its checksum with
   * the one taken before the collection. Failures are counted in the cycle's stats and their
   * messages kept in `collector.verifyMessages`. Costs a full traversal twice per collection.
   */
  verify?: boolean;
  /**
   * Evacuate every movable object at every collection: every block in use is a candidate and the
   * copy may use the whole reservation (a semi-space in effect). Flushes out relocation bugs.
   * Implies poison and a quarantine (quarantineCollections), so that any pointer held across a
   * collection without a root is stale and finds poison. Not moved even so: pinned objects,
   * large objects, and objects whose copy finds no clean block (markedInPlaceInCandidates).
   */
  stress?: boolean;
  /**
   * After every collection, overwrite the old copy of every evacuated object, every freed block
   * and line and every freed large page with a poison pattern (gc/poison.ts), so that a stale
   * pointer reads garbage instead of the intact old copy; the tracer and the verifier name
   * pointers into poisoned memory. Default: on in stress mode, off otherwise.
   */
  poison?: boolean;
  /**
   * With poisoning: hold the blocks a collection freed out of use for this many collections
   * (gc/quarantine.ts), protected when the heap has a MemoryProtection, and check their poison
   * (and the free lines of kept blocks) at the start of every collection: a write into it is a
   * verification failure naming the object that lived there. Default: 4 in stress mode, else 0.
   */
  quarantineCollections?: number;
  /** Fraction of the heap kept free of mutator objects for evacuation (default 0.025). */
  headroomFraction?: number;
  /** Heap size to start with, bytes above 0, rounded up to whole blocks and capped at the reservation (default: the whole reservation, `heap.sizeBytes`). */
  initialSizeBytes?: number;
  /** Grow when used / limit after a collection exceeds this (default 0.7). */
  growthThreshold?: number;
  /** Multiply the limit by this when growing (default 2), capped at the reservation. */
  growthFactor?: number;
  /**
   * When to select defragmentation candidates: "auto" (the paper's trigger: recyclable blocks
   * the allocators did not use, or a collection for an allocation that already failed once),
   * "always", or "never".
   */
  defrag?: "auto" | "always" | "never";
  /** Collect after every N bytes a mutator allocates (debugging; N = 0 collects at every allocation). */
  collectEveryBytes?: number;
  /** Memory of global root slots added without their own memory. */
  globalMemory?: SlotMemory;
  /** Roots and slots pointing outside the heap are left alone instead of being an error. */
  allowForeignPointers?: boolean;
  /** Verification messages kept per collection (default 20). */
  maxVerifyMessages?: number;
  /**
   * Generational collection with sticky mark bits (after MMTk's StickyImmix): a nursery
   * collection when the mutators allocated `nurseryBytes` since the last collection, and under
   * stress (every FULL_EVERY_UNDER_STRESS-th stress collection is full); a full one when an
   * allocation fails (the heap is nearly full), on an explicit collect() / gc_collect, and when
   * the barrier's log overflowed. Needs a write barrier after every store of a pointer into an
   * object (writePointer has it; native code calls gc_write_barrier). Default off.
   */
  generational?: boolean;
  /** The nursery budget, bytes (default DEFAULT_NURSERY_BYTES, at most a quarter of the reservation). */
  nurseryBytes?: number;
}

/** The default nursery budget: 4 MiB of allocation between collections. */
export const DEFAULT_NURSERY_BYTES = 4 * 1024 * 1024;
/** Under stress and generational: every this many stress collections, one is full; the rest are nursery collections. */
export const FULL_EVERY_UNDER_STRESS = 4;

export interface ImmixCollectorConfig {
  heap: HeapRegion;
  /** Default: the native runtime's layout (object-model.ts). */
  model?: ObjectModel;
  options?: CollectorOptions;
}

/** Collections a freed block stays quarantined in stress mode (CollectorOptions.quarantineCollections). */
export const DEFAULT_QUARANTINE_COLLECTIONS = 4;

type Resolved = Required<Omit<CollectorOptions, "globalMemory" | "collectEveryBytes" | "initialSizeBytes" | "nurseryBytes">> & {
  globalMemory: SlotMemory | undefined;
  collectEveryBytes: number;
};

/** What one collection measured, beside what the collector and heap hold: its CycleStats' inputs. */
interface CycleMeasurements {
  readonly reason: string;
  readonly phaseMs: CycleStats["phaseMs"];
  readonly pauseMs: number;
  readonly threshold: number;
  readonly largeFreedBytes: number;
  readonly grewToBytes: number;
  readonly poisonWrites: number;
  readonly verifyFailures: number;
  readonly nursery: boolean;
}

/**
 * A mark-region collector after Immix (Blackburn & McKinley, PLDI 2008) and MMTk's ImmixSpace,
 * over a heap in memory (simulated or native), with precise roots from RootScanners.
 *
 * One collection, stop-the-world, single trace:
 *   0. with a quarantine (stress): check its poison, release the blocks held long enough;
 *   0b. scanRoots of every scanner (the registered globals first): each base is kept and tested
 *      against the allocation bitmap (allocation-bits.ts); a base in the heap where no object
 *      starts refuses the collection before anything is traced or moved (checkRoots);
 *   1. select defragmentation candidates from the last sweep's histograms (defrag.ts);
 *   2. advance the line-mark epoch, clear the mark bitmap, retire every mutator's hole;
 *   3. trace each base kept;
 *   4. drain the mark stack: an object in a candidate block is copied into clean blocks while the
 *      headroom lasts (a forwarding pointer left behind), anything else (pinned, out of headroom,
 *      not a candidate) is marked in place; lines are marked conservatively;
 *   5. updateRoots(forward) of every scanner; 6. the allocation bits become the mark bits, sweep
 *      blocks (hole histograms, block states) and the large-object space, poison what was freed,
 *      quarantine and protect the freed blocks (stress); 7. grow the heap if it is fuller than
 *      the growth threshold.
 *
 * Mutators are thread-local allocators (`newMutator`); nothing here is thread-safe.
 */
export class ImmixCollector implements AllocationOwner {
  readonly space: HeapSpace;
  readonly model: ObjectModel;
  readonly stats = new GcStats();
  /** Freed blocks held back under --stress (gc/quarantine.ts), or null; the space holds the same one. */
  quarantine: Quarantine | null = null;
  /** The registered global slots: the first root scanner of every collection. */
  readonly globals = new GlobalRoots();
  /** Messages of the last collection's verification failures (empty when it passed). */
  verifyMessages: string[] = [];
  /** The last collection's verification failures, structured (at most maxVerifyMessages). */
  verifyFailures: VerifyFailure[] = [];
  /** Blocks chosen as defragmentation candidates by the last collection. */
  lastDefragCandidates: number[] = [];
  /** Generational collection (options.generational): the write barrier's unlogged bits and log, else null. */
  readonly remembered: RememberedSet | null;
  /** The nursery budget in bytes (Infinity when not generational). */
  readonly nurseryBytes: number;
  /** Stress collections since the last full one (generational: every FULL_EVERY_UNDER_STRESS-th is full). */
  private stressSinceFull = 0;

  private readonly options: Resolved;
  private readonly scanners: RootScanner[] = [this.globals];
  /** Index (in the last rootBases()) of each scanner's first root: to ask it to describe one. */
  private rootStarts: number[] = [];
  private readonly describeRoot = (r: number): string | undefined => {
    let s = this.rootStarts.length - 1;
    while (s > 0 && this.rootStarts[s]! > r) s--;
    return this.scanners[s]?.describeRoot?.(r - this.rootStarts[s]!);
  };
  private readonly mutators: ImmixAllocator[] = [];
  private readonly copier: ImmixAllocator;
  private readonly markStack = new MarkStack();
  private readonly sweepSummary: BlockSweepSummary = { blocksFreed: 0, blocksFull: 0, blocksReusable: 0, markedLines: 0, reusableLines: 0 };
  /**
   * The collection's root values, in visit order, kept until every one has been checked against
   * the allocation bitmap (checkRoots): nothing is traced before (reused; grows by doubling).
   */
  private rootValues = new Float64Array(1024);
  /** Roots of this collection's scan that lie in the heap where no object starts (the bitmap's test at each visit). */
  private badRoots = 0;
  /** The last collection's refusal under verify (its roots counted as failures), null once one ran. */
  private refusal: RootNotObjectError | null = null;
  private readonly visitRoot = (base: number): void => {
    const n = this.rootsVisited++;
    if (n === this.rootValues.length) {
      const grown = new Float64Array(n * 2);
      grown.set(this.rootValues);
      this.rootValues = grown;
    }
    this.rootValues[n] = base;
    if (isNonObjectStartInHeap(this.space, base)) this.badRoots++;
  };
  private readonly forwardRoot = (oldBase: number): number => this.forward(oldBase);
  private readonly largeIsLive = (firstPage: number): boolean =>
    this.space.isMarked(this.space.base + firstPage * BYTES_IN_LARGE_PAGE + this.model.headerBytes);

  private collecting = false;
  private headroomExhausted = false;
  private rootsVisited = 0;
  private markedObjects = 0;
  private markedBytes = 0;
  private evacuatedObjects = 0;
  private evacuatedBytes = 0;
  private markedInPlaceInCandidates = 0;
  /** Poisoning: every copy this collection made (old start, size, new start), and blocks in use before the sweep. */
  private oldCopies = new CopyLog();
  private readonly wasInUse: Uint8Array;
  private poisonedBytes = 0;
  private readonly poisonLarge = (firstPage: number, pages: number): void => {
    this.poisonedBytes += poisonLargePages(this.space, firstPage, pages);
  };

  constructor(config: ImmixCollectorConfig) {
    if (typeof config?.heap !== "object" || config.heap === null)
      throw new InvalidArgumentError("heap", String(config?.heap), "a HeapRegion { base, buffer, sizeBytes }");
    const o = config.options ?? {};
    this.options = {
      verify: o.verify ?? false,
      stress: o.stress ?? false,
      poison: o.poison ?? o.stress ?? false,
      quarantineCollections: o.quarantineCollections ?? (o.stress === true ? DEFAULT_QUARANTINE_COLLECTIONS : 0),
      headroomFraction: o.headroomFraction ?? DEFAULT_HEADROOM_FRACTION,
      growthThreshold: o.growthThreshold ?? 0.7,
      growthFactor: o.growthFactor ?? 2,
      defrag: o.defrag ?? "auto",
      collectEveryBytes: o.collectEveryBytes ?? Infinity,
      globalMemory: o.globalMemory,
      allowForeignPointers: o.allowForeignPointers ?? false,
      maxVerifyMessages: o.maxVerifyMessages ?? 20,
      generational: o.generational ?? false,
    };
    const { headroomFraction, growthThreshold, growthFactor, collectEveryBytes } = this.options;
    if (!(headroomFraction >= 0 && headroomFraction < 0.5))
      throw new InvalidArgumentError("options.headroomFraction", String(headroomFraction), "a fraction in [0, 0.5)");
    if (!(growthThreshold > 0 && growthThreshold <= 1))
      throw new InvalidArgumentError("options.growthThreshold", String(growthThreshold), "a fraction in (0, 1]");
    if (!(growthFactor > 1)) throw new InvalidArgumentError("options.growthFactor", String(growthFactor), "a factor above 1");
    if (!(collectEveryBytes >= 0)) throw new InvalidArgumentError("options.collectEveryBytes", String(collectEveryBytes), "a byte count >= 0");
    // Clamped to whole blocks of the reservation, but a size of 0 or less, a fraction or NaN is no size (it became one block).
    const initial = o.initialSizeBytes;
    if (initial !== undefined && !(Number.isSafeInteger(initial) && initial > 0))
      throw new InvalidArgumentError(
        "options.initialSizeBytes",
        String(initial),
        "a whole number of bytes above 0 (rounded up to whole blocks, at most heap.sizeBytes)",
      );
    const hold = this.options.quarantineCollections;
    if (!(Number.isInteger(hold) && hold >= 0))
      throw new InvalidArgumentError("options.quarantineCollections", String(hold), "a whole number of collections >= 0");
    this.model = config.model ?? DEFAULT_OBJECT_MODEL;
    this.space = new HeapSpace(config.heap, o.initialSizeBytes ?? config.heap.sizeBytes, headroomFraction);
    this.copier = new ImmixAllocator(this.space, this.model, null, true);
    this.wasInUse = new Uint8Array(this.options.poison ? this.space.totalBlocks : 0);
    const nursery = o.nurseryBytes ?? Math.max(BYTES_IN_BLOCK, Math.min(DEFAULT_NURSERY_BYTES, Math.floor(this.space.sizeBytes / 4)));
    if (!(Number.isSafeInteger(nursery) && nursery > 0))
      throw new InvalidArgumentError("options.nurseryBytes", String(nursery), "a whole number of bytes above 0");
    this.remembered = this.options.generational ? new RememberedSet(this.space.sizeBytes, config.heap.unloggedBits, config.heap.barrierLog) : null;
    this.nurseryBytes = this.options.generational ? nursery : Infinity;
    this.space.nurseryBudgetBytes = this.nurseryBytes;
    // Quarantine needs poison: what it holds is checked against the pattern.
    if (hold > 0 && this.options.poison) {
      this.quarantine = new Quarantine(this.space, this.model.headerBytes, hold, config.heap.protection);
      this.space.quarantine = this.quarantine;
    }
  }

  /** True when collections poison what they free (options.poison, default: stress). */
  get poisons(): boolean {
    return this.options.poison;
  }

  /** True while a collection runs (the allocators refuse to allocate then). */
  get isCollecting(): boolean {
    return this.collecting;
  }

  // --- mutators and roots -------------------------------------------------------------------

  /** A thread-local allocator for one mutator thread. */
  newMutator(): Mutator {
    const m = new ImmixAllocator(this.space, this.model, this, false);
    m.bytesUntilPoll = this.options.collectEveryBytes;
    this.mutators.push(m);
    return m;
  }

  /** Stops tracking a mutator (its thread ended); its hole is simply abandoned. */
  retireMutator(mutator: Mutator): void {
    const i = this.mutators.indexOf(mutator as ImmixAllocator);
    if (i >= 0) this.mutators.splice(i, 1);
  }

  addRootScanner(scanner: RootScanner): void {
    this.scanners.push(scanner);
  }

  removeRootScanner(scanner: RootScanner): boolean {
    const i = this.scanners.indexOf(scanner);
    if (i <= 0) return false;
    this.scanners.splice(i, 1);
    return true;
  }

  /** Registers a global slot (outside the heap) holding null or an object address. */
  addGlobalRoot(slotAddress: number, memory: SlotMemory | undefined = this.options.globalMemory): void {
    if (memory === undefined) throw new InvalidArgumentError("addGlobalRoot", hex(slotAddress), "a SlotMemory (argument or options.globalMemory)");
    if (this.space.contains(slotAddress)) throw new InvalidArgumentError("addGlobalRoot", hex(slotAddress), "a slot outside the heap");
    this.globals.add(slotAddress, memory);
  }

  removeGlobalRoot(slotAddress: number): boolean {
    return this.globals.remove(slotAddress);
  }

  // --- objects ------------------------------------------------------------------------------

  /** Pins an object: no collection moves it until unpin. */
  pin(address: number): void {
    this.requireObject(address, "pin");
    this.model.setPinned(this.space, address, true);
  }

  unpin(address: number): void {
    this.requireObject(address, "unpin");
    this.model.setPinned(this.space, address, false);
  }

  isPinned(address: number): boolean {
    this.requireObject(address, "isPinned");
    return this.model.isPinned(this.space, address);
  }

  pointerSlotCount(address: number): number {
    return this.model.pointerSlotCount(this.space, address);
  }

  readPointer(address: number, slot: number): number {
    return this.space.readWord(this.model.pointerSlotAddress(this.space, address, slot));
  }

  /** Stores `value` into pointer slot `slot` of the object at `address`, then the write barrier. */
  writePointer(address: number, slot: number, value: number): void {
    this.space.writeWord(this.model.pointerSlotAddress(this.space, address, slot), value);
    this.writeBarrier(address);
  }

  /**
   * The write barrier (JavaScript's gc_write_barrier): after a store of a pointer into the object
   * at `address`. Logs an old object the first time after a collection (remembered-set.ts); does
   * nothing for young objects and when the collector is not generational.
   */
  writeBarrier(address: number): void {
    const remembered = this.remembered;
    if (remembered === null) return;
    const offset = address - this.space.base;
    if (offset >= 0 && offset < this.space.sizeBytes) remembered.barrier(offset, address);
  }

  /** The object's raw bytes, as a view into the heap (valid until the object moves). */
  rawBytes(address: number): Uint8Array {
    const start = this.model.rawBytesAddress(this.space, address) - this.space.base;
    return this.space.bytes.subarray(start, start + this.model.rawByteCount(this.space, address));
  }

  private requireObject(address: number, what: string): void {
    const offset = address - this.space.base;
    const inImmix =
      offset >= 0 &&
      offset < this.space.immixTopBlock * BYTES_IN_BLOCK &&
      offset % 8 === 0 &&
      this.space.blockState[offset >>> LOG_BYTES_IN_BLOCK] !== BLOCK_UNALLOCATED;
    if (!inImmix && !(offset >= 0 && this.space.los.isObjectAt(offset, this.model.headerBytes))) {
      throw new CollectorError("BAD_POINTER", what, address, "no object", "the address of an object of this heap");
    }
  }

  // --- state --------------------------------------------------------------------------------

  get epoch(): number {
    return this.space.epoch;
  }

  get heapLimitBytes(): number {
    return this.space.limitBytes;
  }

  get usedBytes(): number {
    return this.space.usedBytes();
  }

  heapMap(): HeapMap {
    return buildHeapMap(
      this.space,
      this.mutators.flatMap((m) => m.unusedHoles()),
    );
  }

  /** The root bases every scanner reports now, in order (scanRoots is called once more on each, for a verification). */
  rootBases(): number[] {
    const roots: number[] = [];
    this.rootStarts = [];
    for (const s of this.scanners) {
      this.rootStarts.push(roots.length);
      s.scanRoots((b) => roots.push(b), "verification");
    }
    return roots;
  }

  /**
   * The reachable graph's checksum (shapes, raw bytes, pointers as traversal indices): equal
   * before and after a correct collection, whatever moved. Structural checks only.
   */
  graphChecksum(): string {
    return inspectGraph(this.space, this.model, this.rootBases(), false, 0).checksum;
  }

  /**
   * Checks the reachable graph as the last collection left it (see heap-verifier.ts). Meaningful
   * right after a collection, before the mutators allocate again.
   */
  verifyHeap(): GraphInspection {
    return inspectGraph(this.space, this.model, this.rootBases(), true, this.options.maxVerifyMessages, this.describeRoot);
  }

  // --- allocation failure -------------------------------------------------------------------

  allocationFailed(allocator: ImmixAllocator, sizeBytes: number): number {
    if (this.collecting)
      throw new CollectorError("REENTRANT", `allocation of ${sizeBytes} bytes`, this.space.base, "a collection in progress", "no allocation while collecting");
    this.collectGuarded("allocation failure", false);
    let start = allocator.allocStorage(sizeBytes);
    while (start < 0 && this.space.limitBytes < this.space.maxBytes) {
      const limit = this.space.limitBytes;
      const needed = this.space.usedBytes() + sizeBytes + this.space.headroomBytes + BYTES_IN_BLOCK;
      this.space.setLimit(Math.min(this.space.maxBytes, Math.max(needed, limit * this.options.growthFactor)));
      start = allocator.allocStorage(sizeBytes);
    }
    if (start < 0) {
      this.collectGuarded("allocation failure, defragmenting", true);
      start = allocator.allocStorage(sizeBytes);
    }
    if (start < 0) {
      // Not the heap's size: collections refused (verify) freed nothing. Say why.
      if (this.refusal !== null) throw this.refusal;
      throw new HeapExhaustedError(this.space.usedBytes(), this.space.maxBytes, sizeBytes, this.space.base);
    }
    return start;
  }

  poll(_allocator: ImmixAllocator): void {
    if (this.collecting) return;
    this.collect(this.space.mutatorBytesSinceCollection >= this.nurseryBytes ? NURSERY_BUDGET_REASON : "collect every N bytes");
  }

  // --- collection ---------------------------------------------------------------------------

  /**
   * One collection; returns its statistics (also in `stats`). Full, unless the collector is
   * generational and `reason` is the nursery budget or stress (see wantsNursery).
   */
  collect(reason = "requested"): CycleStats {
    return this.collectGuarded(reason, false);
  }

  private collectGuarded(reason: string, forceDefrag: boolean): CycleStats {
    if (this.collecting)
      throw new CollectorError("REENTRANT", `collection (${reason})`, this.space.base, "a collection in progress", "one collection at a time");
    this.collecting = true;
    try {
      return this.collectNow(reason, forceDefrag, this.wantsNursery(reason, forceDefrag));
    } finally {
      this.collecting = false;
    }
  }

  /**
   * Generational only: a nursery collection for the nursery budget and for stress collections
   * (every FULL_EVERY_UNDER_STRESS-th of those full, so that old garbage is freed too); a full one
   * for anything else (an allocation failure: the heap is nearly full; an explicit collect or
   * gc_collect) and whenever the barrier's log overflowed (its objects are not all known).
   */
  private wantsNursery(reason: string, forceDefrag: boolean): boolean {
    const remembered = this.remembered;
    if (remembered === null || forceDefrag || remembered.overflowed) return false;
    if (reason === NURSERY_BUDGET_REASON) return true;
    if (reason !== "stress" && reason !== "collect every N bytes") return false;
    return ++this.stressSinceFull % FULL_EVERY_UNDER_STRESS !== 0;
  }

  /**
   * One collection, in phases: verify before (optional), scan and check the roots (a refused
   * collection returns here), choose defrag candidates and prepare, trace and relocate, sweep,
   * grow, verify after; then its CycleStats, recorded in `stats`.
   */
  private collectNow(reason: string, forceDefrag: boolean, wantsNursery: boolean): CycleStats {
    const space = this.space;
    const { verify } = this.options;
    // The quarantine's poison check runs with or without verify (stress): not verification time.
    const poisonWrites = this.checkQuarantine();
    const tVerify0 = performance.now();
    const before = verify ? inspectGraph(space, this.model, this.rootBases(), false, this.options.maxVerifyMessages, this.describeRoot) : null;
    const t0 = performance.now();

    // A missing barrier found (verify) turns the collection into a full one: correct without
    // barriers. Decided before the roots are scanned: a nursery collection's scan may leave out
    // frames whose roots point to old objects only, which a full one must trace.
    const barrierFailures = wantsNursery && before !== null ? this.checkBarriers() : [];
    const nursery = wantsNursery && barrierFailures.length === 0;

    // 0. The roots, each tested against the allocation bitmap before anything is traced or moved.
    this.rootsVisited = this.badRoots = 0;
    const tScan0 = performance.now();
    this.rootStarts = [];
    for (const s of this.scanners) {
      this.rootStarts.push(this.rootsVisited);
      s.scanRoots(this.visitRoot, nursery ? "nursery-collection" : "collection");
    }
    const refused = this.checkRoots(reason, before, poisonWrites, t0, tScan0);
    if (refused !== null) return refused;
    this.refusal = null;
    // The scan phase includes the check: one bit test per root.
    const tCheck1 = performance.now();
    if (this.remembered !== null) this.remembered.lastSize = this.remembered.size;
    const threshold = this.prepareCycle(forceDefrag, nursery);
    const tTrace0 = performance.now();
    this.traceAndRelocate(nursery);
    const sanityFailures = nursery && before !== null ? this.checkNurseryTrace() : [];
    const tSweep0 = performance.now();
    const largeFreedBytes = this.sweep();
    const grewToBytes = this.grow();

    const t1 = performance.now();
    let verifyFailures = this.finishVerification(before, poisonWrites);
    for (const f of [...barrierFailures, ...sanityFailures]) {
      verifyFailures++;
      this.verifyFailures.push(f);
      this.verifyMessages.push(`${f.phase === "before" ? "before: " : ""}${formatVerifyFailure(f)}`);
    }
    const phaseMs = {
      scan: tCheck1 - tScan0,
      traceEvacuate: tSweep0 - tTrace0,
      sweep: t1 - tSweep0,
      verify: before === null ? 0 : t0 - tVerify0 + (performance.now() - t1),
    };
    const cycle = this.cycleStats({
      reason,
      phaseMs,
      pauseMs: t1 - t0,
      threshold,
      largeFreedBytes,
      grewToBytes,
      poisonWrites: poisonWrites.count,
      verifyFailures,
      nursery,
    });
    this.stats.record(cycle, this.verifyFailures);
    return cycle;
  }

  /** --generational --verify, before a nursery trace: old objects pointing to young ones unlogged (barrier-verifier.ts). */
  private checkBarriers(): VerifyFailure[] {
    const found: VerifyFailure[] = [];
    findMissingBarriers(this.space, this.model, this.remembered!, this.options.maxVerifyMessages, found);
    return found;
  }

  /**
   * --generational --verify, after a nursery trace, before its sweep: nothing reachable left
   * unmarked. The roots are read again in full ("verification"), the frames a nursery scan left
   * out included: a root there that reaches an unmarked (young) object is named by the scanner.
   */
  private checkNurseryTrace(): VerifyFailure[] {
    const found: VerifyFailure[] = [];
    findUnmarkedReachable(this.space, this.model, this.rootBases(), this.options.maxVerifyMessages, found, this.describeRoot);
    return found;
  }

  /**
   * Phases 1-2: the defrag candidates (from the last sweep's histograms, before marking), then
   * the mutators, copier, line marks and counters reset for this cycle. Returns the threshold.
   */
  private prepareCycle(forceDefrag: boolean, nursery: boolean): number {
    const space = this.space;
    const stress = this.options.stress;
    // A nursery collection evacuates young survivors under stress only (old objects are marked: never moved).
    const threshold = nursery && !stress ? NO_DEFRAG_THRESHOLD : this.chooseDefragThreshold(forceDefrag);
    this.lastDefragCandidates = flagDefragCandidates(space, threshold, stress);
    for (const m of this.mutators) m.reset();
    this.copier.reset();
    this.copier.copyBudgetBytes = stress ? space.maxBytes : space.limitBytes;
    if (nursery) space.prepareNurseryMarking();
    else space.prepareMarking();
    this.headroomExhausted = false;
    this.markedObjects = this.markedBytes = 0;
    this.evacuatedObjects = this.evacuatedBytes = this.markedInPlaceInCandidates = 0;
    this.poisonedBytes = 0;
    // A quarantine keeps the last collections' logs (what lived where): this one starts afresh.
    if (this.quarantine !== null) this.oldCopies = new CopyLog();
    else this.oldCopies.clear();
    return threshold;
  }

  /**
   * Phases 3-5b: trace from the roots (marking or evacuating), relocate the roots, then poison
   * the old copies (nothing reads a forwarding header after the roots moved) and hand them to
   * the quarantine.
   */
  private traceAndRelocate(nursery: boolean): void {
    this.traceRoots();
    if (nursery) this.pushRemembered();
    this.drainMarkStack();
    for (const s of this.scanners) s.updateRoots(this.forwardRoot);
    if (this.options.poison) this.poisonOldCopies();
    this.quarantine?.keepCopies(this.oldCopies);
  }

  /**
   * Phase 6: sweep the blocks (into sweepSummary) and the large-object space, poisoning what
   * they freed. What was not marked no longer starts an object. Returns the large bytes freed.
   */
  private sweep(): number {
    const space = this.space;
    const poison = this.options.poison;
    space.keepMarkedAsAllocated();
    // Every survivor is old now: the barrier logs the next store into any of them.
    this.remembered?.rearm(space.markBits, [
      [0, space.immixTopBlock * BYTES_IN_BLOCK],
      [space.los.bottomPage * BYTES_IN_LARGE_PAGE, space.sizeBytes],
    ]);
    const topBefore = space.immixTopBlock;
    if (poison) for (let b = 0; b < topBefore; b++) this.wasInUse[b] = space.blockState[b] === BLOCK_UNALLOCATED ? 0 : 1;
    space.sweepBlocks(this.sweepSummary);
    const largeFreedBytes = space.los.sweep(this.largeIsLive, poison ? this.poisonLarge : undefined) * BYTES_IN_LARGE_PAGE;
    if (poison) this.poisonedBytes += poisonSweptBlocks(space, this.wasInUse, topBefore);
    this.quarantine?.protectFresh(); // after the poison: protected memory is never written
    return largeFreedBytes;
  }

  /** Phase 7: a larger limit when the live data passed the growth threshold (its bytes, else 0). */
  private grow(): number {
    const space = this.space;
    let grewToBytes = 0;
    const used = space.usedBytes();
    if (used > this.options.growthThreshold * space.limitBytes && space.limitBytes < space.maxBytes) {
      space.setLimit(Math.max(space.limitBytes * this.options.growthFactor, used / this.options.growthThreshold));
      grewToBytes = space.limitBytes;
    }
    for (const m of this.mutators) m.bytesUntilPoll = this.options.collectEveryBytes;
    space.mutatorBytesSinceCollection = 0;
    return grewToBytes;
  }

  /** The finished collection's statistics: its measurements and the heap as the sweep left it. */
  private cycleStats(o: CycleMeasurements): CycleStats {
    const space = this.space;
    const sweep = this.sweepSummary;
    return {
      phaseMs: o.phaseMs,
      cycle: this.stats.collections + 1,
      reason: o.reason,
      epoch: space.epoch,
      pauseMs: o.pauseMs,
      rootsVisited: this.rootsVisited,
      markedObjects: this.markedObjects,
      markedBytes: this.markedBytes,
      markedLines: sweep.markedLines,
      defragCandidateBlocks: this.lastDefragCandidates.length,
      defragThresholdHoles: this.options.stress ? 0 : o.threshold,
      evacuatedObjects: this.evacuatedObjects,
      evacuatedBytes: this.evacuatedBytes,
      markedInPlaceInCandidates: this.markedInPlaceInCandidates,
      headroomExhausted: this.headroomExhausted,
      blocksFreed: sweep.blocksFreed,
      blocksFull: sweep.blocksFull,
      blocksReusable: sweep.blocksReusable,
      blocksInUse: space.blocksInUse,
      blocksFree: Math.max(0, Math.floor((space.limitBytes - space.usedBytes()) / BYTES_IN_BLOCK)),
      reusableLines: sweep.reusableLines,
      largeObjects: space.los.objectCount,
      largeBytes: space.los.pagesInUse * BYTES_IN_LARGE_PAGE,
      largeFreedBytes: o.largeFreedBytes,
      heapLimitBytes: space.limitBytes,
      usedBytes: space.usedBytes(),
      headroomBytes: space.headroomBytes,
      grewToBytes: o.grewToBytes,
      fragmentation: sweep.reusableLines / (space.limitBytes / BYTES_IN_LINE),
      poisonedBytes: this.poisonedBytes,
      quarantinedBytes: (this.quarantine?.heldBlocks ?? 0) * BYTES_IN_BLOCK,
      poisonWrites: o.poisonWrites,
      verifyFailures: o.verifyFailures,
      kind: o.nursery ? "nursery" : "full",
      promotedBytes: o.nursery ? this.markedBytes : 0,
      rememberedSetSize: this.remembered?.lastSize ?? 0,
    };
  }

  /**
   * After a collection: the poison writes found at its start, then (with verify) the check of
   * the graph it left and the comparison with the one before. Sets verifyFailures and
   * verifyMessages (the first failures); returns the count of all.
   */
  private finishVerification(before: GraphInspection | null, poisonWrites: { count: number; failures: VerifyFailure[] }): number {
    let count = poisonWrites.count;
    this.verifyFailures = poisonWrites.failures;
    this.verifyMessages = this.verifyFailures.map(formatVerifyFailure);
    if (before === null) return count;
    const after = this.verifyHeap();
    count += before.failures + after.failures;
    this.verifyMessages.push(...before.messages.map((m) => `before: ${m}`), ...after.messages);
    this.verifyFailures.push(
      ...before.details.map((f) => ({ ...f, phase: "before" as const })),
      ...after.details.map((f) => ({ ...f, phase: "after" as const })),
    );
    if (before.checksum !== after.checksum || before.objects !== after.objects) {
      count++;
      const reason = `reachable graph changed: ${before.objects} objects, checksum ${before.checksum} before; ${after.objects} objects, checksum ${after.checksum} after`;
      this.verifyMessages.push(reason);
      this.verifyFailures.push({ location: { kind: "graph" }, value: 0, reason, expected: "the same graph", phase: "after" });
    }
    return count;
  }

  /**
   * After the scan tested every root value against the allocation bitmap (visitRoot: one bit test
   * per root in the heap; nulls and values outside the heap keep traceObject's rules). When every
   * root is an object's address: null, and the collection goes on. Otherwise nothing has been
   * traced or moved yet and the collection is refused: with verify, as verification failures
   * (the roots named, counted in a cycle that did nothing; the run goes on and ends with its
   * failures); without, a RootNotObjectError naming the first such root.
   */
  private checkRoots(
    reason: string,
    before: GraphInspection | null,
    poisonWrites: { count: number; failures: VerifyFailure[] },
    t0: number,
    tScan0: number,
  ): CycleStats | null {
    const bad = this.badRoots;
    if (bad === 0) return null;
    const space = this.space;
    const roots = this.rootValues;
    const failures: VerifyFailure[] = [];
    for (let r = 0; r < this.rootsVisited && failures.length < this.options.maxVerifyMessages; r++) {
      const value = roots[r]!;
      if (!isNonObjectStartInHeap(space, value)) continue;
      const location = { kind: "root" as const, index: r, description: this.describeRoot(r) };
      failures.push({ location, value, reason: describeNonObjectStart(space, this.model, value), expected: "an object's address", phase: "before" });
    }
    const first = failures[0]!;
    const refusal = new RootNotObjectError(bad, failures.map(formatVerifyFailure), first.value, first.reason);
    if (before === null) throw refusal;
    this.refusal = refusal;
    // The verifier's look before the collection tests the same bitmap: it has named these roots
    // already, unless it ran out of room for messages; then the check's own failures stand.
    this.verifyFailures = poisonWrites.failures;
    this.verifyMessages = this.verifyFailures.map(formatVerifyFailure);
    const count = poisonWrites.count + Math.max(before.failures, bad);
    const found = before.failures > 0 ? before.details : failures;
    this.verifyFailures.push(...found.map((f) => ({ ...f, phase: "before" as const })));
    this.verifyMessages.push(...found.map((f) => `before: ${formatVerifyFailure(f)}`));
    const cycle = this.refusedCycle(`${reason}, refused: ${bad} root${bad === 1 ? "" : "s"} no object's address`, count, t0, tScan0);
    cycle.poisonWrites = poisonWrites.count;
    this.stats.record(cycle, this.verifyFailures);
    return cycle;
  }

  /** The statistics of a collection refused before it traced anything: no work, the heap as it was. */
  private refusedCycle(reason: string, verifyFailures: number, t0: number, tScan0: number): CycleStats {
    const space = this.space;
    const now = performance.now();
    return {
      phaseMs: { scan: now - tScan0, traceEvacuate: 0, sweep: 0, verify: tScan0 - t0 },
      cycle: this.stats.collections + 1,
      reason,
      epoch: space.epoch,
      pauseMs: now - t0,
      rootsVisited: this.rootsVisited,
      markedObjects: 0,
      markedBytes: 0,
      markedLines: 0,
      defragCandidateBlocks: 0,
      defragThresholdHoles: NO_DEFRAG_THRESHOLD,
      evacuatedObjects: 0,
      evacuatedBytes: 0,
      markedInPlaceInCandidates: 0,
      headroomExhausted: false,
      blocksFreed: 0,
      blocksFull: 0,
      blocksReusable: 0,
      blocksInUse: space.blocksInUse,
      blocksFree: Math.max(0, Math.floor((space.limitBytes - space.usedBytes()) / BYTES_IN_BLOCK)),
      reusableLines: 0,
      largeObjects: space.los.objectCount,
      largeBytes: space.los.pagesInUse * BYTES_IN_LARGE_PAGE,
      largeFreedBytes: 0,
      heapLimitBytes: space.limitBytes,
      usedBytes: space.usedBytes(),
      headroomBytes: space.headroomBytes,
      grewToBytes: 0,
      fragmentation: 0,
      poisonedBytes: 0,
      quarantinedBytes: (this.quarantine?.heldBlocks ?? 0) * BYTES_IN_BLOCK,
      poisonWrites: 0,
      verifyFailures,
      kind: "full",
      promotedBytes: 0,
      rememberedSetSize: 0,
    };
  }

  /**
   * At the start of a collection: checks the quarantine's poison (writes since the last
   * collection are failures), then releases the blocks held long enough.
   */
  private checkQuarantine(): { count: number; failures: VerifyFailure[] } {
    const quarantine = this.quarantine;
    const failures: VerifyFailure[] = [];
    if (quarantine === null) return { count: 0, failures };
    const cycle = this.stats.collections + 1;
    const count = quarantine.checkPoison(cycle, failures);
    quarantine.cycle = cycle;
    quarantine.releaseExpired(cycle);
    return { count, failures };
  }

  private chooseDefragThreshold(forceDefrag: boolean): number {
    const { defrag, stress } = this.options;
    if (stress || defrag === "never") return NO_DEFRAG_THRESHOLD;
    if (defrag === "auto" && !forceDefrag && this.space.unusedRecyclableBlocks() === 0) return NO_DEFRAG_THRESHOLD;
    const space = this.space;
    const cleanBlocks = Math.min(space.physicallyFreeBlocks(), Math.floor((space.limitBytes - space.usedBytes()) / BYTES_IN_BLOCK));
    return defragThreshold(space.markHistogram, Math.max(0, cleanBlocks) * LINES_IN_BLOCK);
  }

  /**
   * Marks (or evacuates) the object at `ref` if it is not yet, and returns where it is now.
   * Allocation-free; the hot path of tracing.
   */
  private traceObject(ref: number): number {
    const space = this.space;
    const model = this.model;
    const offset = ref - space.base;
    if (offset >= 0 && offset < space.immixTopBlock * BYTES_IN_BLOCK) {
      const block = offset >>> LOG_BYTES_IN_BLOCK;
      if ((offset & 7) !== 0 || space.blockState[block] === BLOCK_UNALLOCATED) return this.badPointer(ref);
      if (space.isMarked(ref)) return ref;
      if (this.options.poison && offset >= model.headerBytes && isPoisonedWord(space, ref - model.headerBytes)) return this.badPointer(ref);
      if (model.isForwarded(space, ref)) return model.forwardee(space, ref);
      const size = model.sizeBytes(space, ref);
      const start = ref - model.headerBytes;
      if (space.blockDefrag[block] !== 0) {
        if (!this.headroomExhausted && !model.isPinned(space, ref)) {
          const to = this.copier.allocStorage(size);
          if (to >= 0) {
            space.bytes.copyWithin(to - space.base, start - space.base, start - space.base + size);
            const moved = to + model.headerBytes;
            model.setForwarding(space, ref, moved);
            space.markEvacuated(start, size);
            if (this.options.poison) this.oldCopies.add(start, size, to);
            this.evacuatedObjects++;
            this.evacuatedBytes += size;
            this.markAndPush(moved, to, size);
            return moved;
          }
          this.headroomExhausted = true;
        }
        this.markedInPlaceInCandidates++;
      }
      this.markAndPush(ref, start, size);
      return ref;
    }
    if (offset >= 0 && space.los.isObjectAt(offset, model.headerBytes)) {
      if (!space.isMarked(ref)) {
        space.setMarked(ref);
        this.markedObjects++;
        this.markedBytes += model.sizeBytes(space, ref);
        this.markStack.push(ref);
      }
      return ref;
    }
    if (this.options.allowForeignPointers && !space.contains(ref)) return ref;
    return this.badPointer(ref);
  }

  /**
   * A nursery collection's other roots: the fields of every object the barrier logged since the
   * last collection. Each is old (marked, never moved now), so it is pushed, not traced: the
   * drain scans its fields, tracing (and updating) the young objects they point to.
   */
  private pushRemembered(): void {
    const log = this.remembered!.log;
    const n = this.remembered!.size;
    for (let k = 0; k < n; k++) this.markStack.push(log.entry(k));
  }

  /** Traces every root value of this collection's scan (checked already), in visit order. */
  private traceRoots(): void {
    const roots = this.rootValues;
    for (let r = 0; r < this.rootsVisited; r++) this.traceObject(roots[r]!);
  }

  private markAndPush(ref: number, start: number, size: number): void {
    this.space.setMarked(ref);
    this.space.markLines(start, size);
    this.markedObjects++;
    this.markedBytes += size;
    this.markStack.push(ref);
  }

  private drainMarkStack(): void {
    const space = this.space;
    const model = this.model;
    const stack = this.markStack;
    while (stack.length > 0) {
      const obj = stack.pop();
      const n = model.pointerSlotCount(space, obj);
      for (let i = 0; i < n; i++) {
        const slot = model.pointerSlotAddress(space, obj, i);
        const v = space.readWord(slot);
        if (v === 0) continue;
        const moved = this.traceObject(v);
        if (moved !== v) space.writeWord(slot, moved);
      }
    }
  }

  /** Where the object that was at `oldBase` before this collection is now. */
  private forward(oldBase: number): number {
    const space = this.space;
    const offset = oldBase - space.base;
    if (
      offset >= 0 &&
      offset < space.immixTopBlock * BYTES_IN_BLOCK &&
      (offset & 7) === 0 &&
      !space.isMarked(oldBase) &&
      this.model.isForwarded(space, oldBase)
    ) {
      return this.model.forwardee(space, oldBase);
    }
    return oldBase;
  }

  private poisonOldCopies(): void {
    const copies = this.oldCopies;
    for (let k = 0; k < copies.count; k++) {
      const start = copies.oldStart(k);
      const size = copies.sizeBytes(k);
      poisonRange(this.space, start, start + size);
      this.poisonedBytes += size;
    }
  }

  private badPointer(ref: number): never {
    const space = this.space;
    const offset = ref - space.base;
    let found: string;
    const poisoned = space.quarantine?.holdsAddress(ref) ? space.quarantine.describeHeld(ref) : describePoison(space, ref, this.model.headerBytes);
    if (poisoned !== null) found = poisoned;
    else if (!Number.isSafeInteger(ref) || !space.contains(ref)) found = "an address outside the heap";
    else if ((offset & 7) !== 0) found = "a misaligned address";
    else if (offset < space.los.bottomPage * BYTES_IN_LARGE_PAGE) found = `an address in free block ${offset >>> LOG_BYTES_IN_BLOCK}`;
    else found = "an address that is not a large object";
    throw new CollectorError("BAD_POINTER", "pointer traced", ref, found, `an object in [${hex(space.base)}, ${hex(space.base + space.sizeBytes)})`);
  }
}
