import { resolve } from "node:path";
import { renderHeapMapSvg } from "../../../gc/heap-map-svg.js";
import type { NativeRunOptions, NativeRunResult } from "../../native/native-runtime.js";
import type { CollectionLog } from "./collection-log.js";
import { attachCollectionLog, writeRunReport } from "./run-report.js";

/** `rootwalk run --report FILE.html` and `--gc-trace`: what they add to the run and what they do after it. */
export interface RunReporting {
  /** The native run's instruments and heap-map hook (none when neither option was given). */
  options: Pick<NativeRunOptions, "instruments" | "onHeapMap">;
  /** Writes the report, if asked for, and says where on stderr. */
  finish(result: NativeRunResult, parameters: [string, string][]): void;
}

/** The run's summary numbers as the report's table shows them (the same as `run`'s four lines). */
function summaryRows(r: NativeRunResult): [string, string][] {
  const ms = (x: number): string => `${x.toFixed(3)} ms`;
  return [
    ["result", r.result],
    ["collections", String(r.collections)],
    ["frames scanned", String(r.framesScanned)],
    ["frames skipped", String(r.framesSkipped)],
    ["roots relocated", String(r.rootsRelocated)],
    ["objects moved", String(r.objectsMoved)],
    ["pause max / total", `${ms(r.maxPauseMs)} / ${ms(r.totalPauseMs)}`],
    ...Object.entries(r.phasesMs).map(([phase, v]): [string, string] => [`phase ${phase} (total)`, ms(v)]),
    ["verify failures", String(r.verifyFailures)],
    ["threads", String(r.threads)],
  ];
}

export function runReporting(report: string | undefined, gcTrace: boolean, stderr: (text: string) => void): RunReporting {
  if (report === undefined && !gcTrace) return { options: {}, finish: () => {} };
  let log: CollectionLog | undefined;
  let heapMapSvg = "";
  return {
    options: {
      instruments: (parts) => {
        log = attachCollectionLog(parts, gcTrace ? stderr : undefined);
      },
      ...(report !== undefined ? { onHeapMap: (map) => (heapMapSvg = renderHeapMapSvg(map, { title: "rootwalk run: the heap after rw_main returned" })) } : {}),
    },
    finish: (result, parameters) => {
      if (report === undefined || log === undefined) return;
      writeRunReport(report, log, { title: "rootwalk run report", parameters, summary: summaryRows(result), heapMapSvg });
      stderr(`rootwalk run: report written to ${resolve(report)}\n`);
    },
  };
}
