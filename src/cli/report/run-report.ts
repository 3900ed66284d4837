import { writeFileSync } from "node:fs";
import type { ImmixCollector } from "../../../gc/immix-collector.js";
import type { StackRootScanner } from "../../../walker/stack-root-scanner.js";
import { CollectionLog, type StopTotals } from "./collection-log.js";
import { gcTraceLine } from "./gc-trace.js";
import { reportData } from "./report-data.js";
import { renderReportHtml } from "./report-html.js";

/**
 * Attaches a CollectionLog to `collector` and `scanner` (before the first collection): every
 * collection from then on is recorded and, with `trace`, written as its --gc-trace line.
 */
export function attachCollectionLog(
  parts: { collector: ImmixCollector; scanner: StackRootScanner; stop?: StopTotals },
  trace?: (line: string) => void,
): CollectionLog {
  const { collector, scanner, stop } = parts;
  const log = new CollectionLog(
    { usedBytes: () => collector.usedBytes, scanner, ...(stop !== undefined ? { stop } : {}) },
    trace === undefined ? undefined : (record) => trace(gcTraceLine(record)),
  );
  scanner.addObserver(log);
  collector.stats.onRecord((cycle) => log.record(cycle));
  return log;
}

/** What the report says about the run besides its collections. */
export interface ReportPage {
  title: string;
  parameters: [string, string][];
  summary: [string, string][];
  heapMapSvg: string;
}

/** Writes the run report (one self-contained HTML file) to `path`. */
export function writeRunReport(path: string, log: CollectionLog, page: ReportPage): void {
  writeFileSync(path, renderReportHtml(reportData(log, page)));
}
