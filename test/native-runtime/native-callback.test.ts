import { beforeAll, expect, it } from "vitest";
import { NATIVE_PROGRAMS, runReference } from "../native-programs/programs.js";
import { buildRunEntry, programArguments, runNativeJson } from "../support/native-run.js";

/*
 * Managed code -> libc's qsort -> a managed comparator that allocates and polls
 * (test/native-programs/sp-qsort-callback.ll). Every collection (--stress=1: one per allocation
 * and poll, every object evacuated) finds rw_main's roots above libc's qsort frames, which have
 * no stack map: the walk climbs them by their CFI. Here with `--walk unwind`, no chunk list
 * at all: from the stop to the outermost frame of the thread (clone3). runtime.test.ts runs the
 * same program with the chunk list's fast path. Both must print the malloc-only reference
 * runtime's result, with the heap verified after every collection.
 */

const entry = NATIVE_PROGRAMS.find((p) => p.name === "sp-qsort-callback")!;

beforeAll(() => {
  buildRunEntry();
}, 300_000);

it("qsort with a managed comparator: --stress=1 --verify --walk unwind prints the reference result", async () => {
  const reference = await runReference(entry);
  expect(reference.status, reference.stderr).toBe(0);
  expect(reference.result).toBe(entry.expectedResult);
  const r = await runNativeJson([...programArguments(entry), "--stress=1", "--verify", "--walk=unwind"], 200_000);
  console.log(
    `[native-callback] --walk unwind: collections=${r.collections} objectsMoved=${r.objectsMoved} framesScanned=${r.framesScanned} rootsRelocated=${r.rootsRelocated} result=${r.result}`,
  );
  expect(r.result).toBe(entry.expectedResult.toString());
  expect(r.collections).toBeGreaterThan(100);
  expect(r.objectsMoved).toBeGreaterThan(0);
  expect(r.verifyFailures).toBe(0);
}, 240_000);
