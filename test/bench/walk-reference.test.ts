import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildReference } from "../../bench/native-refs.js";
import { buildStackCorpus } from "../../bench/stack-corpus.js";
import { ReferenceMismatchError, checkWalkOutputs, firstWalkDifference, referenceWalk, rootwalkWalk } from "../../bench/walk-reference.js";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";

/*
 * The Walk bench's C reference (bench/native/walk-ref.c) must produce exactly rootwalk's scan
 * output (bench/walk-reference.ts): checked here on small corpora with the real walker and the
 * real C program, and shown to fail when the C side is altered to do less per root.
 */

// Two pairs per call site, each derived slot 16 bytes above its base slot: a reference that
// records the base slot as the derived one differs from rootwalk.
const FEW_SITES = { functions: 4, recordsPerFunction: 4, rootsPerRecord: 2, derivedOffsetBytes: 16 };
const MANY_SITES = { functions: 300, recordsPerFunction: 10, rootsPerRecord: 2, derivedOffsetBytes: 16 };
const few = buildStackCorpus("test-few-sites", FEW_SITES, 500, 0, 0x7e57);
const many = buildStackCorpus("test-many-sites", MANY_SITES, 2_000, 0, 0x7e58);

const NATIVE_DIR = join(repoRoot(), "bench", "native");

/** walk-ref.c with `from` replaced by `to` (the text must be there), built in a directory of its own. */
function alteredReference(from: string, to: string): string {
  const source = readFileSync(join(NATIVE_DIR, "walk-ref.c"), "utf8");
  expect(source).toContain(from);
  const dir = mkdtempSync(join(tmpdir(), "walk-ref-"));
  writeFileSync(join(dir, "walk-ref.c"), source.replace(from, to));
  copyFileSync(join(NATIVE_DIR, "read-input.h"), join(dir, "read-input.h"));
  return buildReference("walk-ref.c", join(dir, "walk-ref.c"));
}

describe("the Walk bench's C reference produces rootwalk's output", () => {
  for (const c of [few, many]) {
    it(`${c.name}: every frame, pair, slot and value equal`, () => {
      const rootwalk = rootwalkWalk(c);
      expect(rootwalk.walk()).toBe(c.frames + c.rootValueSum + c.roots);
      const { samples, output } = referenceWalk(c, 3, 2);
      expect(samples.samplesNsPerOp).toHaveLength(2);
      expect(output.frames).toBe(c.frames);
      expect(output.pairs).toBe(c.roots);
      expect(firstWalkDifference(rootwalk.output(), output)).toBeUndefined();
      expect(() => checkWalkOutputs("Walk/test", rootwalk.output(), output)).not.toThrow();
    });
  }

  // Each alteration makes the C walk do less than rootwalk per root or per frame.
  const LESS_WORK: { what: string; from: string; to: string; message: RegExp }[] = [
    {
      what: "the base slot recorded as the derived slot",
      from: "derivedSlots[n] = sp + (int64_t)s->derivedOffsets[k];",
      to: "derivedSlots[n] = sp + (int64_t)s->baseOffsets[k];",
      message:
        /^Walk\/test: the C walker's output differs from rootwalk's at root pair 0: C \(base 0x7ffe00000008, derived 0x7ffe00000008, value 0x1000000000\), rootwalk \(base 0x7ffe00000008, derived 0x7ffe00000018, value 0x1000000000\)$/,
    },
    {
      what: "a wrong frame index in the frame records",
      from: "frameRecords[2 * records] = (int32_t)frames;",
      to: "frameRecords[2 * records] = 0;",
      message: /at frame record 1: C \(frame #0, first pair \d+\), rootwalk \(frame #1, first pair \d+\)$/,
    },
    { what: "no frame records", from: "records++;", to: "", message: /at frame record count: C 0, rootwalk \d+$/ },
    {
      what: "the base value not read",
      from: "baseValues[n] = v;",
      to: "baseValues[n] = 0;",
      message: /at root pair 0: C \(base 0x7ffe00000008, derived 0x7ffe00000018, value 0x0\)/,
    },
    {
      what: "the last pair of each frame dropped",
      from: "k < s->pairCount; k++",
      to: "k < s->pairCount - 1; k++",
      message: /at root pair count: C 500, rootwalk 1000$/,
    },
  ];
  for (const alteration of LESS_WORK) {
    it(`fails when the C walk does less: ${alteration.what}`, () => {
      const executable = alteredReference(alteration.from, alteration.to);
      const rootwalk = rootwalkWalk(few);
      rootwalk.walk();
      const { output } = referenceWalk(few, 1, 1, executable);
      expect(() => checkWalkOutputs("Walk/test", rootwalk.output(), output)).toThrow(ReferenceMismatchError);
      expect(() => checkWalkOutputs("Walk/test", rootwalk.output(), output)).toThrow(alteration.message);
    });
  }
});
