import type { ImmixCollector } from "../../gc/immix-collector.js";
import type { ProcessModules } from "./process-modules.js";
import { type RuntimeLibrary, threadCount } from "./runtime-library.js";
import { R_LEFT_NS, R_RA, ST_PARKED, ST_RUNNING, type ThreadRecords } from "./thread-record.js";

/** How far a run has got: what `rootwalk run` shows on stderr while it works. */
export interface NativeRunProgress {
  elapsedMs: number;
  collections: number;
  framesScanned: number;
  objectsMoved: number;
  /**
   * While a collection is requested and waits for running threads to reach a safepoint: each such
   * thread, its last safepoint (`function+0xoff`, from its record's return address) and how long
   * it has run since (CLOCK_MONOTONIC, as the runtime stamps it). Empty otherwise.
   */
  waitingFor: { thread: number; lastSafepoint: string | undefined; runningMs: number }[];
}

export interface ProgressSources {
  runtime: RuntimeLibrary;
  records: ThreadRecords;
  modules: ProcessModules;
  collector: ImmixCollector;
  /** Frames scanned by the collections so far. */
  framesScanned: () => number;
}

/**
 * Reports progress every `everyMs` of wall time while rw_main runs on its native thread (this
 * thread is free between callbacks); returns the function that stops the reports.
 */
export function startProgressReports(progress: { everyMs: number; report: (p: NativeRunProgress) => void } | undefined, sources: ProgressSources): () => void {
  if (progress === undefined || progress.everyMs <= 0) return () => {};
  const runStart = performance.now();
  const { collector } = sources;
  const timer = setInterval(
    (report: (p: NativeRunProgress) => void) =>
      report({
        elapsedMs: performance.now() - runStart,
        collections: collector.stats.collections,
        framesScanned: sources.framesScanned(),
        objectsMoved: collector.stats.totalEvacuatedObjects,
        waitingFor: collectionWaits(sources),
      }),
    progress.everyMs,
    progress.report,
  );
  return () => clearInterval(timer);
}

/**
 * The threads a requested collection waits for. The timer runs only between callbacks (this
 * thread is busy during one), so a PARKED thread seen here is an initiator or a thread parked
 * for a collection that has not started: every RUNNING thread is then being waited for.
 */
function collectionWaits({ runtime, records, modules }: ProgressSources): NativeRunProgress["waitingFor"] {
  const count = threadCount(runtime);
  const running: number[] = [];
  let parked = false;
  for (let t = 0; t < count; t++) {
    const state = records.state(t);
    if (state === ST_PARKED) parked = true;
    else if (state === ST_RUNNING) running.push(t);
  }
  if (!parked) return [];
  const nowNs = process.hrtime.bigint(); // CLOCK_MONOTONIC, as runtime.c's left_ns
  modules.refreshBeforeNextLookup();
  return running.map((t) => {
    const ra = records.word(t, R_RA);
    return {
      thread: t,
      lastSafepoint: ra === 0 ? undefined : modules.modules.moduleAt(ra)?.symbolize(ra),
      runningMs: Number(nowNs - records.wordBigInt(t, R_LEFT_NS)) / 1e6,
    };
  });
}
