/*
 * The table of current numbers in bench/README.md: a full, unfiltered `npm run bench` rewrites
 * it from its own results, between the two marker lines below, so the page always shows the
 * last full run (its date, commit, Node and load) and nothing else edits those lines by hand.
 */

import type { CaseResult } from "./corpus.js";

export const TABLE_START = "<!-- bench-table:start (npm run bench rewrites this table) -->";
export const TABLE_END = "<!-- bench-table:end -->";

/** What a run knows about itself, for the line above the table. */
export interface RunFacts {
  dateIso: string;
  commit: string;
  node: string;
  loadAverage: number;
  elapsedSeconds: number;
}

/** The whole-run figures below the case rows (null: not measured in this run). */
export interface RunFigures {
  nativeFramesPerSec: number | null;
  nativeScanRatio: number | null;
  verifyOverheadRatio: number | null;
  scanPathBytesPerSafepoint: number | null;
}

/** The markdown between the markers: one row per case with its target, then the run's figures. */
export function currentTable(
  results: readonly CaseResult[],
  figures: RunFigures,
  facts: RunFacts,
  targetOf: (caseName: string) => number | undefined,
  targets: { nativeFramesPerSec: number; verifyOverheadRatio: number; scanPathBytesPerSafepoint: number },
): string {
  const met = (value: number | null, bound: number, upper: boolean) =>
    value === null ? "not measured" : (upper ? value <= bound : value >= bound) ? "met" : "**missed**";
  const rows = results.map((r) => {
    const target = targetOf(r.name);
    const verdict = target === undefined ? "none" : `<= ${target}x: ${met(r.ratio, target, true)}`;
    return `| ${r.name} | ${r.unit} | ${r.rootwalkNsPerOp.toFixed(1)} | ${r.referenceNsPerOp.toFixed(1)} | ${r.ratio.toFixed(2)}x | ${verdict} |`;
  });
  const fixed = (value: number | null, digits: number, suffix = "") => (value === null ? "n/a" : `${value.toFixed(digits)}${suffix}`);
  return [
    `Full run of ${facts.dateIso.slice(0, 16).replace("T", " ")} UTC, commit ${facts.commit}, Node ${facts.node}, load average ${facts.loadAverage.toFixed(1)} at the start, ${facts.elapsedSeconds} s:`,
    "",
    "| case | one op | rootwalk ns/op | reference ns/op | ratio | target |",
    "|---|---|---|---|---|---|",
    ...rows,
    "",
    `Native scan: ${fixed(figures.nativeFramesPerSec === null ? null : figures.nativeFramesPerSec / 1e6, 1, " M frames/s")} (target >= ${targets.nativeFramesPerSec / 1e6} M: ${met(figures.nativeFramesPerSec, targets.nativeFramesPerSec, false)}), ` +
      `${fixed(figures.nativeScanRatio, 2, "x")} the C scan; verifyOverheadRatio ${fixed(figures.verifyOverheadRatio, 2)} (target <= ${targets.verifyOverheadRatio}: ${met(figures.verifyOverheadRatio, targets.verifyOverheadRatio, true)}); ` +
      `scanPathBytesPerSafepoint ${fixed(figures.scanPathBytesPerSafepoint, 1)} (target <= ${targets.scanPathBytesPerSafepoint}: ${met(figures.scanPathBytesPerSafepoint, targets.scanPathBytesPerSafepoint, true)}).`,
  ].join("\n");
}

/** `page` with the text between the markers replaced by `table`; throws if the markers are not there once each, in order. */
export function replaceCurrentTable(page: string, table: string): string {
  const start = page.indexOf(TABLE_START);
  const end = page.indexOf(TABLE_END);
  if (start < 0 || end < start || page.indexOf(TABLE_START, start + 1) >= 0 || page.indexOf(TABLE_END, end + 1) >= 0) {
    throw new Error(`bench/README.md: found no single ${TABLE_START} ... ${TABLE_END} pair, expected one around the table of current numbers`);
  }
  return `${page.slice(0, start + TABLE_START.length)}\n${table}\n${page.slice(end)}`;
}
