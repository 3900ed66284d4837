import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadObjectStackMaps } from "../../src/loader/object-file.js";
import { CORPUS, compileCorpusEntry } from "../ll/corpus.js";
import { kernelIndexCounts, objectFileTarget, runFuzz, expectCleanFuzz, stackMapSectionTarget } from "./fuzz-targets.js";

/*
 * Mutated and truncated stack maps must end in a RootwalkError or a successful decode: never
 * another exception (a RangeError is an out-of-bounds read), never a hang; and the scan kernel's
 * stack map index must agree with the general path on every section (fuzz-targets.ts). Seeds are the real
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

describe("fuzzing", () => {
  it(
    `stack map sections: ${CASES} mutations`,
    () => {
      const before = { ...kernelIndexCounts };
      expectCleanFuzz("sections", runFuzz(stackMapSectionTarget, sections, CASES, SEED));
      // The scan kernel's index was compared with the general path on sections it indexed.
      const indexed = kernelIndexCounts.indexed - before.indexed;
      console.log(`sections: the scan kernel indexed ${indexed}, declined ${kernelIndexCounts.declined - before.declined}`);
      expect(indexed).toBeGreaterThan(0);
    },
    Math.max(60_000, CASES * 5),
  );

  it(
    `whole ELF objects: ${CASES} mutations`,
    () => {
      expectCleanFuzz("objects", runFuzz(objectFileTarget, objects, CASES, SEED + 1_000_000));
    },
    Math.max(60_000, CASES * 20),
  );

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
