import { type RootScanReason, type RootScanner, isCollectionScan } from "../gc/root-scanning.js";
import { InvalidArgumentError, describeValue } from "../src/errors.js";
import { type Memory, flatWords } from "../src/memory/memory.js";
import { type SafepointRegistry, checkRegistryArgument } from "../src/safepoints/registry.js";
import { crossCheckByDefault, crossCheckScan } from "./scan-cross-check.js";
import { scanStackRoots } from "./fast-scan.js";
import type { FrameMarks } from "./frame-marks.js";
import { ScanKernel } from "./kernel-binding.js";
import { warmScanKernel } from "./scan-kernel/warm-up.js";
import { warmWalk } from "./walk-warm-up.js";
import { PRESIZED_PAIRS_BUDGET, RootPairs } from "./frame-roots.js";
import { relocateRootPairs } from "./relocate-roots.js";
import { describeSlot, isMemorySlot } from "./slot.js";
import { type ManagedChunk, Unwinder, type UnwinderOptions } from "./unwinder.js";

/** One thread's stack as the collector sees it: its managed chunks, innermost first. */
export interface ThreadStack {
  memory: Memory;
  chunks: readonly ManagedChunk[];
  /** How messages name the thread ("thread #2"); default: its index in the list. */
  label?: string;
  /**
   * Return barriers (src/native/return-barriers.ts): every frame whose SP is at or above this
   * address has not run since the last collection, so its roots point to old objects only. A
   * "nursery-collection" scan stops there (the frame is the walk's end, as at a stack top) and
   * counts `skippedFrames` frames as skipped; every other scan walks the whole stack.
   */
  skipFromSp?: number;
  skippedFrames?: number;
  /** Filled (reset first) by each collection's scan with the walk's frames at depths 1, 2, 4, ...: where the next barriers go. */
  marks?: FrameMarks;
}

/** One scanRoots as observers see it (after it returned): why, what it walked, how long it took. */
export interface RootScanEvent {
  reason: RootScanReason;
  /** The stacks walked, in the order of lastWalkOf's thread indexes. */
  threads: readonly ThreadStack[];
  /** walkStacks (the stacks provider included), then visitRoots (the collector's tracing of each root), ms. */
  walkMs: number;
  visitMs: number;
  frames: number;
  /** Frames left out below return barriers (a nursery scan), all threads. */
  framesSkipped: number;
  /** Per thread, in the order of `threads`: frames walked and frames left out (the scanner's own arrays: read them in `scanned`). */
  threadFrames: readonly number[];
  threadSkipped: readonly number[];
}

/**
 * Something attached to a scanner from outside (timing, logs, a second scan to compare with):
 * called after every scanRoots, in the order attached; what it throws fails the scan.
 */
export interface RootScanObserver {
  scanned(scan: RootScanEvent): void;
}

export interface StackRootScannerOptions extends Omit<UnwinderOptions, "mode"> {
  /**
   * Walk every stack a second time with the general unwinder and fail unless it agrees with the
   * fast scan loop (walker/scan-cross-check.ts): for tests and debugging. Default: the process's
   * (off unless turned on, see there).
   */
  crossCheck?: boolean;
  /**
   * Make each thread's root pairs room for its live stack before walking it
   * (RootPairs.reserveForStack), default true: for a scanner kept across collections, whose
   * columns then grow once per new stack size; only until the columns of the threads walked so far
   * hold PRESIZED_PAIRS_BUDGET pairs. A scanner used for one walk (StuckThreadPins)
   * turns it off: its columns would be a fresh region sized for the stack, cleared, for one use.
   */
  presizePairs?: boolean;
}

/**
 * The bytes of `thread`'s stack a scan can read: from its innermost chunk's SP to the end of its
 * memory when that is one flat range (a native stack's view ends at the stack's top), else 0 (an
 * SP that is not a number too: the walk then says so, and room for NaN bytes would double the
 * columns on every walk).
 */
function liveStackBytes(thread: ThreadStack): number {
  const flat = flatWords(thread.memory);
  const sp = thread.chunks[0]?.sp;
  if (flat === undefined || sp === undefined || Number.isNaN(sp)) return 0;
  return Math.max(0, Math.min(flat.sizeBytes, flat.base + flat.sizeBytes - sp));
}

/**
 * The chunks a nursery scan of `thread` walks when it has a skip point: the innermost ones up to
 * and including the one holding skipFromSp (chunks are innermost first, SPs increasing), whose
 * stack top the walk lowers to it. Undefined: no skip point, or one no chunk holds (walk everything).
 */
function skippedChunks(thread: ThreadStack): { chunks: readonly ManagedChunk[]; last: ManagedChunk } | undefined {
  const at = thread.skipFromSp;
  if (at === undefined) return undefined;
  const chunks = thread.chunks;
  for (let c = 0; c < chunks.length; c++) {
    const chunk = chunks[c]!;
    const next = chunks[c + 1];
    if (chunk.sp >= at) return undefined;
    if (chunk.stackTop !== undefined && at > chunk.stackTop) continue;
    if (next !== undefined && next.sp < at && chunk.stackTop === undefined) continue;
    return { chunks: c === chunks.length - 1 ? chunks : chunks.slice(0, c + 1), last: chunk };
  }
  return undefined;
}

/**
 * The collector's RootScanner over thread stacks: scanRoots walks every thread strictly (an
 * unaccountable frame is an error, never a skipped root) with the fast scan loop
 * (walker/fast-scan.ts) and remembers each root's slot;
 * updateRoots rewrites them after the collector moved objects.
 *
 * scanRoots is two steps, which a runtime may call separately: walkStacks (every thread's frames,
 * root slots and the values in the base slots: the stack scan proper) then visitRoots (each
 * non-null base handed to the collector, which traces it). Observers (addObserver) are told of
 * each scanRoots with its reason and the time of each step.
 *
 * Per thread index it keeps one RootPairs, one Unwinder (rebound to each scan's memory and
 * snapshot), one fast loop state and the relocation scratch, so a scan allocates nothing once
 * they have grown to the stack's size.
 */
export class StackRootScanner implements RootScanner {
  private readonly pairsByThread: RootPairs[] = [];
  private readonly unwinders: Unwinder[] = [];
  private readonly kernels: ScanKernel[] = [];
  private readonly framesByThread: number[] = [];
  private readonly skippedByThread: number[] = [];
  /** Per thread, the skip point the last nursery-collection walk honoured (NaN: none): describeRoot says a root lies below it. */
  private readonly skippedFromByThread: number[] = [];
  private readonly relocationScratch = { bases: new Float64Array(256), deriveds: new Float64Array(256) };
  private readonly strictOptions: UnwinderOptions;
  private readonly crossCheck: boolean;
  private readonly presizePairs: boolean;
  /** The stacks of the last walk (updateRoots relocates what it found). */
  private walked: readonly ThreadStack[] = [];
  framesScanned = 0;
  /** Frames the last walk left out (a nursery scan stopping at return barriers). */
  framesSkipped = 0;
  /** The last collection's own scan (not a verification's): frames walked and left out. */
  readonly lastCollectionScan = { frames: 0, skipped: 0 };
  rootsRelocated = 0;

  constructor(
    private readonly registry: SafepointRegistry,
    private readonly threads: () => readonly ThreadStack[],
    options: StackRootScannerOptions = {},
  ) {
    checkRegistryArgument(registry);
    if (typeof threads !== "function") throw new InvalidArgumentError("threads", describeValue(threads), "a function giving the stopped threads' stacks");
    const { crossCheck, presizePairs, ...unwinderOptions } = options;
    this.strictOptions = { ...unwinderOptions, mode: "strict" };
    this.crossCheck = crossCheck ?? crossCheckByDefault();
    this.presizePairs = presizePairs ?? true;
  }

  private readonly observers: RootScanObserver[] = [];

  /** Attaches `observer`, told of every later scanRoots (never of walkStacks alone). */
  addObserver(observer: RootScanObserver): void {
    this.observers.push(observer);
  }

  scanRoots(visit: (baseAddress: number) => void, reason: RootScanReason): void {
    if (this.observers.length === 0) {
      this.walkStacks(reason);
      this.visitRoots(visit);
      return;
    }
    const start = performance.now();
    this.walkStacks(reason);
    const walked = performance.now();
    this.visitRoots(visit);
    const scan: RootScanEvent = {
      reason,
      threads: this.walked,
      walkMs: walked - start,
      visitMs: performance.now() - walked,
      frames: this.framesScanned,
      framesSkipped: this.framesSkipped,
      threadFrames: this.framesByThread,
      threadSkipped: this.skippedByThread,
    };
    for (const o of this.observers) o.scanned(scan);
  }

  /**
   * Builds now what the first scan would otherwise build: the registry's current snapshot's scan
   * layout (its table and recipes in the scan memory) and the scan kernel's module, compiled and
   * instantiated with the first thread's binding, and run on a synthetic stack so that V8 has its
   * optimised code ready (walker/scan-kernel/warm-up.ts), then the walker's own JavaScript once
   * over a synthetic frame (walker/walk-warm-up.ts). A runtime calls it when a map is registered
   * (gc_init), so that no collection pays for them; a scan after a later registration builds the
   * new snapshot's layout itself.
   */
  prepareScans(): void {
    void this.registry.snapshot().scanLayout;
    if (this.kernels[0] === undefined) {
      this.kernels[0] = new ScanKernel();
      warmScanKernel();
      this.warmWalk();
    }
  }

  /**
   * The walker's JavaScript run once over a synthetic stack (walker/walk-warm-up.ts). Only for
   * speed: what it throws is dropped, so that it cannot fail gc_init; a snapshot it cannot walk
   * fails the first collection's scan with that scan's own error, where it belongs.
   */
  private warmWalk(): void {
    try {
      warmWalk(this.registry.snapshot(), this.strictOptions, this.kernels[0]!, this.relocationScratch);
    } catch {
      // see above
    }
  }

  /**
   * Walks every thread's stack and records its root slots and base values (nothing is visited
   * yet). `reason` (default "verification": everything, nothing marked) decides whether a thread's
   * return barriers are honoured ("nursery-collection") and whether its frame marks are filled
   * (a collection's scan).
   */
  walkStacks(reason: RootScanReason = "verification"): void {
    const snapshot = this.registry.snapshot();
    const threads = this.threads();
    this.framesScanned = 0;
    this.framesSkipped = 0;
    // Pairs the columns of the threads walked so far hold: presizing stops at the budget.
    let columnPairs = 0;
    for (let t = 0; t < threads.length; t++) {
      const thread = threads[t]!;
      const pairs = (this.pairsByThread[t] ??= new RootPairs());
      pairs.clear();
      if (this.presizePairs && columnPairs < PRESIZED_PAIRS_BUDGET) pairs.reserveForStack(liveStackBytes(thread));
      let u = this.unwinders[t];
      if (u === undefined) u = this.unwinders[t] = new Unwinder(snapshot, thread.memory, this.strictOptions);
      else if (u.memory !== thread.memory || u.snapshot !== snapshot) u.rebind(snapshot, thread.memory);
      const marks = isCollectionScan(reason) ? thread.marks : undefined;
      marks?.reset();
      const skip = reason === "nursery-collection" ? skippedChunks(thread) : undefined;
      const kernel = (this.kernels[t] ??= new ScanKernel());
      let frames: number;
      if (skip === undefined) frames = scanStackRoots(u, thread.chunks, pairs, kernel, undefined, marks);
      else {
        const saved = skip.last.stackTop;
        skip.last.stackTop = thread.skipFromSp!;
        try {
          frames = scanStackRoots(u, skip.chunks, pairs, kernel, undefined, marks);
        } finally {
          skip.last.stackTop = saved;
        }
      }
      const skipped = skip === undefined ? 0 : (thread.skippedFrames ?? 0);
      if (isCollectionScan(reason)) this.skippedFromByThread[t] = skip === undefined ? NaN : thread.skipFromSp!;
      marks?.finish(frames, skipped);
      columnPairs += pairs.baseSlots.length;
      this.framesByThread[t] = frames;
      this.skippedByThread[t] = skipped;
      this.framesScanned += frames;
      this.framesSkipped += skipped;
      if (this.crossCheck && skip === undefined) crossCheckScan(snapshot, thread.memory, thread.chunks, this.strictOptions);
    }
    this.pairsByThread.length = threads.length;
    this.unwinders.length = threads.length;
    this.kernels.length = threads.length;
    this.framesByThread.length = threads.length;
    this.skippedByThread.length = threads.length;
    this.walked = threads;
    if (isCollectionScan(reason)) {
      this.lastCollectionScan.frames = this.framesScanned;
      this.lastCollectionScan.skipped = this.framesSkipped;
    }
  }

  /** Visits each non-null base value the last walk read (RootPairs.baseValues). */
  visitRoots(visit: (baseAddress: number) => void): void {
    for (let t = 0; t < this.walked.length; t++) {
      const pairs = this.pairsByThread[t]!;
      const baseValues = pairs.baseValues;
      for (let i = 0; i < pairs.count; i++) {
        const base = baseValues[i]!;
        if (base !== 0) visit(base);
      }
    }
  }

  /**
   * Where the `index`-th base visitRoots visited was read: thread, frame (function+offset) and
   * slot or register. For verification messages: walks the thread again with a new unwinder.
   */
  describeRoot(index: number): string | undefined {
    let k = index;
    for (let t = 0; t < this.walked.length; t++) {
      const pairs = this.pairsByThread[t]!;
      for (let i = 0; i < pairs.count; i++) {
        if (pairs.baseValues[i] === 0 || k-- > 0) continue;
        const thread = this.walked[t]!;
        return `${thread.label ?? `thread #${t}`}, ${this.describeFrame(thread, pairs.frameOf(i), pairs.baseSlots[i]!, this.skippedFromByThread[t] ?? NaN)}`;
      }
    }
    return undefined;
  }

  /**
   * `frame #1 rw_main+0x2a, stack slot 0x7ffd... (sp+0x10)` or `..., register rbx`; a frame at or
   * above `skippedFrom` (the last nursery scan's skip point) is said to be one that scan skipped.
   */
  private describeFrame(thread: ThreadStack, frame: number, slot: number, skippedFrom: number): string {
    const u = new Unwinder(this.registry.snapshot(), thread.memory, this.strictOptions);
    const where = isMemorySlot(slot)
      ? `stack slot ${describeSlot(slot, u.architecture)}`
      : `register ${describeSlot(slot, u.architecture).replace(/@chunk\d+$/, "")}`;
    for (u.init(thread.chunks); u.valid(); u.next()) {
      if (u.index !== frame) continue;
      const range = u.calleeFunctionRange();
      const name = u.functionName() ?? "?";
      const fn = range === undefined || name.includes("+") ? name : `${name}+0x${(u.ra - range.start).toString(16)}`;
      const sp = isMemorySlot(slot) ? ` (sp+0x${(slot - u.sp).toString(16)})` : "";
      const skipped =
        u.sp >= skippedFrom
          ? ", in a frame the nursery scan skipped (below a return barrier: not run since the previous collection, so its roots were assumed old; a callee wrote this slot through a pointer?)"
          : "";
      return `frame #${frame} ${fn} (return address 0x${u.ra.toString(16)}), ${where}${sp}${skipped}`;
    }
    return `frame #${frame}, ${where}`;
  }

  /** Thread `t`'s root pairs, frame count and frames left out (return barriers) from the last walk (for checks and logs). */
  lastWalkOf(t: number): { pairs: RootPairs; frames: number; skipped: number } | undefined {
    const pairs = this.pairsByThread[t];
    return pairs === undefined ? undefined : { pairs, frames: this.framesByThread[t]!, skipped: this.skippedByThread[t]! };
  }

  updateRoots(forward: (oldBaseAddress: number) => number): void {
    const threads = this.threads();
    this.rootsRelocated = 0;
    for (let t = 0; t < threads.length; t++) {
      const pairs = this.pairsByThread[t];
      const u = this.unwinders[t];
      if (pairs === undefined || u === undefined) continue;
      const scratch = this.relocationScratch;
      if (scratch.bases.length < pairs.count) {
        scratch.bases = new Float64Array(pairs.count * 2);
        scratch.deriveds = new Float64Array(pairs.count * 2);
      }
      this.rootsRelocated += relocateRootPairs(pairs, threads[t]!.memory, u.contexts, forward, scratch);
    }
  }
}
