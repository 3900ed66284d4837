import { expect } from "vitest";
import { RootwalkError } from "../../src/errors.js";
import { parseStackMapSection } from "../../src/stackmap/llvm-stackmap.js";
import { formatBlobLikeReadobj } from "../../src/stackmap/readobj-format.js";
import { checkKernelIndex, checkRegistration } from "../support/kernel-index-check.js";
import { Rng, mutate } from "./mutate.js";

/** A decoder under fuzzing: must return or throw a RootwalkError, nothing else. */
export type FuzzTarget = (bytes: Uint8Array) => void;

/** Sections the scan kernel indexed (and matched the general path on) or declined, over every run. */
export const kernelIndexCounts = { indexed: 0, declined: 0 };

/**
 * The LLVM stack map section all the way into a registry, by the general path and by the scan
 * kernel's index, which must agree (test/support/kernel-index-check.ts: same table and recipes,
 * or declined when the general path rejects the section), and `registerStackMapBytes`, which must
 * register the same safepoints or fail with the general path's error.
 */
export const stackMapSectionTarget: FuzzTarget = (bytes) => {
  kernelIndexCounts[checkKernelIndex(bytes, 0x400000)]++;
  if (bytes.byteLength > 0) checkRegistration(bytes);
  for (const blob of parseStackMapSection(bytes)) formatBlobLikeReadobj(blob);
};

export interface FuzzReport {
  cases: number;
  accepted: number;
  rejected: number;
  /** Cases that threw something other than a RootwalkError, or took too long. */
  failures: { seed: number; input: number; error: string }[];
  slowestMs: number;
}

/**
 * Asserts a fuzz run was clean (no exception other than a RootwalkError, no hang) and exercised
 * both paths: most mutations rejected by validation, some accepted.
 */
export function expectCleanFuzz(name: string, report: FuzzReport): void {
  const summary = `${name}: ${report.cases} cases, ${report.accepted} accepted, ${report.rejected} rejected with a RootwalkError, slowest ${report.slowestMs.toFixed(1)} ms`;
  console.log(summary);
  expect(report.failures.slice(0, 5), summary).toEqual([]);
  expect(report.rejected).toBeGreaterThan(report.cases / 10);
  expect(report.accepted).toBeGreaterThan(0);
}

/**
 * Runs `cases` mutations of the seed inputs through `target`. Case i uses Rng(seed + i), so any
 * failure can be replayed alone. A case taking over `maxCaseMs` counts as a hang.
 */
export function runFuzz(target: FuzzTarget, inputs: readonly Uint8Array[], cases: number, seed = 1, maxCaseMs = 2000): FuzzReport {
  const report: FuzzReport = { cases, accepted: 0, rejected: 0, failures: [], slowestMs: 0 };
  for (let i = 0; i < cases; i++) {
    const rng = new Rng(seed + i);
    const input = rng.int(inputs.length);
    const bytes = mutate(inputs[input]!, rng);
    const start = performance.now();
    try {
      target(bytes);
      report.accepted++;
    } catch (e) {
      if (e instanceof RootwalkError) report.rejected++;
      else report.failures.push({ seed: seed + i, input, error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
    }
    const ms = performance.now() - start;
    report.slowestMs = Math.max(report.slowestMs, ms);
    if (ms > maxCaseMs) report.failures.push({ seed: seed + i, input, error: `took ${ms.toFixed(0)} ms` });
  }
  return report;
}

/** A whole ELF object: header, sections, relocations, .eh_frame, stack maps, descriptions, readobj text. */
export const objectFileTarget: FuzzTarget = (bytes) => {
  const loaded = loadObjectStackMaps(bytes, "fuzz.o");
  if (loaded === undefined) return;
  describeObject(loaded);
  for (const blob of loaded.rawBlobs) formatBlobLikeReadobj(blob);
};
import { loadObjectStackMaps } from "../../src/loader/object-file.js";
import { describeObject } from "../../src/loader/describe-file.js";
