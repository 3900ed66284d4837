import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadObjectStackMaps } from "../../src/loader/object-file.js";
import { CORPUS, compileCorpusEntry } from "../ll/corpus.js";
import { objectFileTarget, runFuzz, stackMapSectionTarget, type FuzzReport } from "./fuzz-targets.js";

/*
 * Mutated and truncated stack maps must end in a RootwalkError or a successful decode: never
 * another exception (a RangeError is an out-of-bounds read), never a hang. Seeds are the real
 * sections and objects of the .ll corpus. CI runs ROOTWALK_FUZZ_CASES (default 3000) cases per
 * target; `npm run fuzz` runs 100,000 per target.
 */
const CASES = Number(process.env.ROOTWALK_FUZZ_CASES ?? 3000);
const SEED = Number(process.env.ROOTWALK_FUZZ_SEED ?? 1);

const objects = CORPUS.map((entry) => readFileSync(compileCorpusEntry(entry)));
const sections = objects.map((bytes) => {
  const loaded = loadObjectStackMaps(bytes, "seed");
  return new Uint8Array(loaded!.section.bytes());
});

function expectClean(name: string, report: FuzzReport): void {
  const summary = `${name}: ${report.cases} cases, ${report.accepted} accepted, ${report.rejected} rejected with a RootwalkError, slowest ${report.slowestMs.toFixed(1)} ms`;
  console.log(summary);
  expect(report.failures.slice(0, 5), summary).toEqual([]);
  // Most mutations must be caught by validation, and some must survive it, or the fuzzer is not
  // exercising both paths.
  expect(report.rejected).toBeGreaterThan(report.cases / 10);
  expect(report.accepted).toBeGreaterThan(0);
}

describe("fuzzing", () => {
  it(`stack map sections: ${CASES} mutations`, () => {
    expectClean("sections", runFuzz(stackMapSectionTarget, sections, CASES, SEED));
  }, Math.max(60_000, CASES * 5));

  it(`whole ELF objects: ${CASES} mutations`, () => {
    expectClean("objects", runFuzz(objectFileTarget, objects, CASES, SEED + 1_000_000));
  }, Math.max(60_000, CASES * 20));

  it("every truncation of every seed section is rejected with a typed error", () => {
    let cases = 0;
    for (const section of sections) {
      for (let len = 0; len < section.length; len += len < 256 ? 1 : 7) {
        const report = runFuzz((b) => stackMapSectionTarget(b.subarray(0, len)), [section], 1, len);
        expect(report.failures).toEqual([]);
        cases++;
      }
    }
    expect(cases).toBeGreaterThan(1000);
  });
});
