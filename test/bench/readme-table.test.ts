import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CaseResult } from "../../bench/corpus.js";
import { TABLE_END, TABLE_START, currentTable, replaceCurrentTable } from "../../bench/readme-table.js";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";

/*
 * bench/README.md's table of current numbers is rewritten by every full `npm run bench`
 * (bench/readme-table.ts): the page has the markers once each, a rewrite replaces exactly what is
 * between them, and a page without them is refused rather than left stale.
 */

const result = (name: string, rootwalk: number, reference: number): CaseResult => ({
  name,
  unit: "frame",
  size: 1,
  rootwalkNsPerOp: rootwalk,
  referenceNsPerOp: reference,
  ratio: rootwalk / reference,
  rootwalkSamples: [],
  referenceSamples: [],
  iterations: 1,
  reference: "c",
});

describe("bench/README.md's table of current numbers", () => {
  const facts = { dateIso: "2026-11-28T20:00:00.000Z", commit: "abc1234", node: "v20.20.2", loadAverage: 0.4, elapsedSeconds: 91.2 };
  const targets = { nativeFramesPerSec: 50e6, verifyOverheadRatio: 2, scanPathBytesPerSafepoint: 64 };
  const figures = { nativeFramesPerSec: 57.3e6, nativeScanRatio: 1.04, verifyOverheadRatio: 2.5, scanPathBytesPerSafepoint: null };
  const table = currentTable(
    [result("Walk/10k-frames-16-sites", 17.7, 14.7), result("Parse/index-1M-records", 291.5, 74), result("Collector/mark-100k-objects", 81.6, 37.7)],
    figures,
    facts,
    (name) => (name.startsWith("Walk/") ? 1.25 : name.startsWith("Parse/") ? 2 : undefined),
    targets,
  );

  it("has a row per case with its verdict, and the run's figures", () => {
    expect(table).toContain("Full run of 2026-11-28 20:00 UTC, commit abc1234, Node v20.20.2, load average 0.4 at the start, 91.2 s:");
    expect(table).toContain("| Walk/10k-frames-16-sites | frame | 17.7 | 14.7 | 1.20x | <= 1.25x: met |");
    expect(table).toContain("| Parse/index-1M-records | frame | 291.5 | 74.0 | 3.94x | <= 2x: **missed** |");
    expect(table).toContain("| Collector/mark-100k-objects | frame | 81.6 | 37.7 | 2.16x | none |");
    expect(table).toContain("57.3 M frames/s (target >= 50 M: met), 1.04x the C scan; verifyOverheadRatio 2.50 (target <= 2: **missed**)");
    expect(table).toContain("scanPathBytesPerSafepoint n/a (target <= 64: not measured)");
  });

  it("replaces exactly what is between the markers, in the page as it is", () => {
    const page = readFileSync(join(repoRoot(), "bench/README.md"), "utf8");
    const rewritten = replaceCurrentTable(page, table);
    const start = page.indexOf(TABLE_START);
    const end = page.indexOf(TABLE_END);
    expect(start).toBeGreaterThan(0);
    expect(rewritten.slice(0, start)).toBe(page.slice(0, start));
    expect(rewritten.slice(rewritten.indexOf(TABLE_END))).toBe(page.slice(end));
    expect(rewritten).toContain(`${TABLE_START}\n${table}\n${TABLE_END}`);
    expect(replaceCurrentTable(rewritten, table)).toBe(rewritten);
  });

  it("refuses a page without the markers, or with them twice", () => {
    expect(() => replaceCurrentTable("# bench\n", table)).toThrow(/found no single .* pair, expected one around the table of current numbers/);
    expect(() => replaceCurrentTable(`${TABLE_START}\n${TABLE_END}\n${TABLE_START}\n${TABLE_END}\n`, table)).toThrow(/found no single/);
  });
});
