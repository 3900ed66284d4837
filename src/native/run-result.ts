import { writeFileSync } from "node:fs";
import { type GenerationalTotals, type RecordedVerifyFailure, generationalTotals } from "../../gc/gc-stats.js";
import { renderHeapMapSvg } from "../../gc/heap-map-svg.js";
import type { ImmixCollector } from "../../gc/immix-collector.js";
import type { NativeCallbacks } from "./callback-dispatch.js";
import type { MapRegistration } from "./map-registration.js";
import type { MutatorHoles } from "./mutator-holes.js";
import { type RuntimeLibrary, threadCount } from "./runtime-library.js";
import type { ReturnBarriers } from "./return-barriers.js";
import type { ScanTiming } from "./scan-timing.js";
import type { ScanReferenceTotals } from "./scan-reference.js";

export interface NativeRunResult {
  /** rw_main's return value, signed decimal. */
  result: string;
  collections: number;
  /** Frames the collections' own scans walked; frames nursery scans left out (return barriers). */
  framesScanned: number;
  framesSkipped: number;
  /** Return barriers (--generational): chosen and armed, returned through, found stale (longjmp). */
  returnBarriers: { armed: number; hits: number; stale: number };
  rootsRelocated: number;
  objectsMoved: number;
  maxPauseMs: number;
  verifyFailures: number;
  /** The first verification failures (at most FIRST_VERIFY_FAILURES_KEPT), where and why. */
  verifyFailureDetails: RecordedVerifyFailure[];
  /** Bytes the collections poisoned (0 unless --poison or --stress). */
  poisonedBytes: number;
  totalPauseMs: number;
  mapsRegistered: number;
  threads: number;
  /**
   * Time spent in stack scans and the frames they walked, all scans: a scan is the stopped
   * threads' records read, one koffi view per stack, every frame walked and every root slot
   * recorded (StackRootScanner.walkStacks). Reading the roots and the collector's tracing of each
   * one (visitRoots) is rootVisitMs.
   */
  scanMs: number;
  scanFrames: number;
  rootVisitMs: number;
  /** The C reference's scans of the same stacks (with options.scanReference). */
  scanReference?: ScanReferenceTotals;
  /**
   * Pause breakdown, ms summed over all collections: stopTheWorld is the runtime's side of the
   * stop as seen from the collector (reading the stopped threads' records, one view per stack;
   * the C handshake that parks the threads is not in it), then the collector's phases.
   */
  phasesMs: { stopTheWorld: number; scan: number; traceEvacuate: number; sweep: number; verify: number };
  /** Minor (nursery) and major (full) collections, bytes promoted, the remembered set (--generational). */
  generational: GenerationalTotals;
}

/** What a finished run's result is read from. */
export interface RunOutcome {
  runtime: RuntimeLibrary;
  collector: ImmixCollector;
  callbacks: NativeCallbacks;
  maps: MapRegistration;
  timing: ScanTiming;
  scanReference: ScanReferenceTotals | undefined;
  barriers: ReturnBarriers | undefined;
}

/** The result of a run whose rw_main returned. */
export function runResult({ runtime, collector, callbacks, maps, timing, scanReference, barriers }: RunOutcome): NativeRunResult {
  const stats = collector.stats;
  return {
    result: runtime.rwResultText() as string,
    collections: stats.collections,
    framesScanned: callbacks.framesScanned,
    framesSkipped: callbacks.framesSkipped,
    returnBarriers: { armed: barriers?.armed ?? 0, hits: barriers?.hits() ?? 0, stale: barriers?.stale() ?? 0 },
    rootsRelocated: callbacks.rootsRelocated,
    objectsMoved: stats.totalEvacuatedObjects,
    maxPauseMs: stats.maxPauseMs,
    verifyFailures: stats.totalVerifyFailures,
    verifyFailureDetails: stats.firstVerifyFailures,
    poisonedBytes: stats.totalPoisonedBytes,
    totalPauseMs: stats.totalPauseMs,
    mapsRegistered: maps.mapsRegistered,
    threads: threadCount(runtime),
    scanMs: timing.scanMs,
    scanFrames: timing.scanFrames,
    rootVisitMs: timing.rootVisitMs,
    ...(scanReference !== undefined ? { scanReference } : {}),
    generational: generationalTotals(stats),
    phasesMs: {
      stopTheWorld: timing.stopMs,
      scan: stats.totalPhaseMs.scan - (timing.stopMs - timing.stopInVerificationMs),
      traceEvacuate: stats.totalPhaseMs.traceEvacuate,
      sweep: stats.totalPhaseMs.sweep,
      verify: stats.totalPhaseMs.verify - timing.stopInVerificationMs,
    },
  };
}

/** Writes the heap map (SVG) as rw_main left the heap, the threads' last allocations included. */
export function writeHeapMapSvg(path: string, collector: ImmixCollector, holes: MutatorHoles): void {
  holes.takeFinalCursors();
  writeFileSync(path, renderHeapMapSvg(collector.heapMap(), { title: "rootwalk run: the heap after rw_main returned" }));
}
