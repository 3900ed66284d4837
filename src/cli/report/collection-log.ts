import { isCollectionScan } from "../../../gc/root-scanning.js";
import type { CycleStats } from "../../../gc/gc-stats.js";
import type { RootScanEvent, RootScanObserver, StackRootScanner } from "../../../walker/stack-root-scanner.js";

/**
 * The runtime's side of the stop (src/native/scan-timing.ts ScanTiming): running totals, ms, read
 * before and after each collection. A simulated run has none.
 */
export interface StopTotals {
  readonly stopMs: number;
  readonly stopInVerificationMs: number;
}

/** What a collection log reads besides the cycles: the heap's use now, the scanner, the stop. */
export interface CollectionLogSources {
  /** Bytes of the heap in use right now (ImmixCollector.usedBytes): read at each collection's root scan, before anything is freed. */
  usedBytes: () => number;
  scanner: StackRootScanner;
  stop?: StopTotals;
}

/** One collection as the trace line and the report show it; optional fields only when the collector gives them. */
export interface CollectionRecord {
  cycle: number;
  /** CycleStats.kind: "nursery" (a generational minor collection) or "full". */
  kind: string;
  reason: string;
  pauseMs: number;
  /** The pause's phases, ms: scan excludes stopTheWorld, verify excludes the stop a verification's scan read (as NativeRunResult.phasesMs). */
  stopTheWorldMs: number;
  scanMs: number;
  traceEvacuateMs: number;
  sweepMs: number;
  verifyMs: number;
  usedBeforeBytes: number;
  usedAfterBytes: number;
  liveBytes: number;
  reusableLines: number;
  blocksFull: number;
  blocksReusable: number;
  blocksFree: number;
  blocksInUse: number;
  evacuatedBytes: number;
  /** CycleStats.promotedBytes of a nursery collection (absent for full ones, and in runs without --generational). */
  promotedBytes?: number;
  /** Frames the collection's root scan walked, all threads. */
  frames: number;
  /** Frames it left out below return barriers (a nursery collection's scan; 0 for every other, and with --no-return-barriers), all threads. */
  framesSkipped: number;
  roots: number;
  rootsRelocated: number;
}

/**
 * Every collection of a run, in order, as columns (one number each per collection; the per-thread
 * frames walked, frames skipped and roots as one row per thread per collection): attached to the collector's stats
 * (GcStats.onRecord) and to the root scanner (an observer of the "collection" scans), it holds all
 * collections, where GcStats keeps only the last historyLimit. `onCollection` (--gc-trace) is told
 * of each record as it is made.
 *
 * Invariant: a record pairs a CycleStats with the last "collection" scan before it (the
 * collector scans its roots once per collection, before tracing); verification scans are not
 * counted here.
 */
export class CollectionLog implements RootScanObserver {
  readonly records: CollectionRecord[] = [];
  /** Per thread and collection: the collection's index in `records`, the thread's label, its frames walked and skipped, its roots. */
  readonly threadRows: { collection: number[]; thread: number[]; frames: number[]; framesSkipped: number[]; roots: number[] } = {
    collection: [],
    thread: [],
    frames: [],
    framesSkipped: [],
    roots: [],
  };
  /** Thread labels by their number in threadRows.thread. */
  readonly threadLabels: string[] = [];
  private readonly threadNumbers = new Map<string, number>();
  private scanUsedBytes = 0;
  private scanFrames = 0;
  private scanFramesSkipped = 0;
  private scanRoots = 0;
  private lastStopMs = 0;
  private lastStopInVerificationMs = 0;

  constructor(
    private readonly sources: CollectionLogSources,
    private readonly onCollection?: (record: CollectionRecord) => void,
  ) {}

  scanned(scan: RootScanEvent): void {
    if (!isCollectionScan(scan.reason)) return;
    this.scanUsedBytes = this.sources.usedBytes();
    this.scanFrames = scan.frames;
    this.scanFramesSkipped = scan.framesSkipped;
    this.scanRoots = 0;
    const collection = this.records.length;
    for (let t = 0; t < scan.threads.length; t++) {
      const walk = this.sources.scanner.lastWalkOf(t);
      if (walk === undefined) continue;
      const label = scan.threads[t]!.label ?? `thread #${t}`;
      let n = this.threadNumbers.get(label);
      if (n === undefined) {
        n = this.threadLabels.push(label) - 1;
        this.threadNumbers.set(label, n);
      }
      this.threadRows.collection.push(collection);
      this.threadRows.thread.push(n);
      this.threadRows.frames.push(walk.frames);
      this.threadRows.framesSkipped.push(scan.threadSkipped[t] ?? 0);
      this.threadRows.roots.push(walk.pairs.count);
      this.scanRoots += walk.pairs.count;
    }
  }

  /** Takes in one recorded cycle (GcStats.onRecord). */
  record(c: CycleStats): void {
    const stop = this.sources.stop;
    const stopMs = stop === undefined ? 0 : stop.stopMs - this.lastStopMs;
    const stopInVerificationMs = stop === undefined ? 0 : stop.stopInVerificationMs - this.lastStopInVerificationMs;
    this.lastStopMs = stop?.stopMs ?? 0;
    this.lastStopInVerificationMs = stop?.stopInVerificationMs ?? 0;
    const record: CollectionRecord = {
      cycle: c.cycle,
      kind: c.kind,
      reason: c.reason,
      pauseMs: c.pauseMs,
      stopTheWorldMs: stopMs,
      scanMs: c.phaseMs.scan - (stopMs - stopInVerificationMs),
      traceEvacuateMs: c.phaseMs.traceEvacuate,
      sweepMs: c.phaseMs.sweep,
      verifyMs: c.phaseMs.verify - stopInVerificationMs,
      usedBeforeBytes: this.scanUsedBytes,
      usedAfterBytes: c.usedBytes,
      liveBytes: c.markedBytes,
      reusableLines: c.reusableLines,
      blocksFull: c.blocksFull,
      blocksReusable: c.blocksReusable,
      blocksFree: c.blocksFree,
      blocksInUse: c.blocksInUse,
      evacuatedBytes: c.evacuatedBytes,
      ...(c.kind === "nursery" ? { promotedBytes: c.promotedBytes } : {}),
      frames: this.scanFrames,
      framesSkipped: this.scanFramesSkipped,
      roots: this.scanRoots,
      rootsRelocated: this.sources.scanner.rootsRelocated,
    };
    this.scanFrames = this.scanFramesSkipped = this.scanRoots = 0;
    this.records.push(record);
    this.onCollection?.(record);
  }
}
