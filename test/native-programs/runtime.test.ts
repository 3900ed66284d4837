import { beforeAll, describe, expect, it } from "vitest";
import { NATIVE_PROGRAMS, runReference } from "./programs.js";
import { activeLlvm } from "../../src/toolchain/llvm-selection.js";
import { buildRunEntry, programArguments, runNativeJson } from "../support/native-run.js";

/*
 * The 14 differential programs (programs.ts) under the REAL runtime (`rootwalk run`, the Immix
 * collector through koffi, each run in a child process): without collections (--no-gc) and with
 * a stress collection at every N-th safepoint (--stress=N --verify, N = entry.stressN ?? 1),
 * both must print the result the malloc-only reference runtime computes. Under stress the
 * collector must actually have run and moved objects, and heap verification must be clean.
 *
 * Timing (2 cores, idle): about 50 s for the whole file, sp-binary-tree (≈ 14 s at N = 1) and
 * sp-linked-list (≈ 8 s) the longest; every program fits at N = 1.
 */

const CHILD_TIMEOUT_MS = 200_000;
const TEST_TIMEOUT_MS = 240_000;

beforeAll(() => {
  buildRunEntry();
}, 300_000);

describe.each(NATIVE_PROGRAMS.map((entry) => [entry.name, entry] as const))("rootwalk run %s", (name, entry) => {
  const args = programArguments(entry);
  const expected = entry.expectedResult.toString();
  const n = entry.stressN ?? 1;

  it(
    "--no-gc prints the reference runtime's result",
    async () => {
      const reference = await runReference(entry);
      expect(reference.status, reference.stderr).toBe(0);
      expect(reference.result).toBe(entry.expectedResult);
      const r = await runNativeJson([...args, "--no-gc"], CHILD_TIMEOUT_MS);
      expect(r.result).toBe(expected);
      expect(r.collections).toBe(0);
      expect(r.objectsMoved).toBe(0);
      expect(r.verifyFailures).toBe(0);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    `--stress=${n} --verify prints the same result, objects moved, heap verified`,
    async () => {
      const r = await runNativeJson([...args, `--stress=${n}`, "--verify"], CHILD_TIMEOUT_MS);
      console.log(
        `[native-programs llvm${activeLlvm().major}] ${name}: N=${n} collections=${r.collections} objectsMoved=${r.objectsMoved} ` +
          `framesScanned=${r.framesScanned} rootsRelocated=${r.rootsRelocated} maxPauseMs=${r.maxPauseMs} ` +
          `result=${r.result} (${(r.elapsedMs / 1000).toFixed(1)} s)`,
      );
      expect(r.result).toBe(expected);
      expect(r.collections).toBeGreaterThan(0);
      expect(r.objectsMoved).toBeGreaterThan(0);
      expect(r.framesScanned).toBeGreaterThan(0);
      expect(r.verifyFailures).toBe(0);
      // The pause breakdown: every phase ran, and the pause phases fit in the pauses.
      const p = r.phasesMs;
      expect(Object.keys(p).sort()).toEqual(["scan", "stopTheWorld", "sweep", "traceEvacuate", "verify"]);
      for (const v of Object.values(p)) expect(v).toBeGreaterThanOrEqual(0);
      expect(p.scan).toBeGreaterThan(0);
      expect(p.verify).toBeGreaterThan(0);
      // The world stop is the stop with --verify too, though the verification's scan made it.
      expect(p.stopTheWorld).toBeGreaterThan(0);
      expect(p.stopTheWorld + p.scan + p.traceEvacuate + p.sweep).toBeLessThanOrEqual(r.maxPauseMs * r.collections + 0.01);
    },
    TEST_TIMEOUT_MS,
  );
});
