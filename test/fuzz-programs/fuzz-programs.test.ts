import { beforeAll, describe, expect, it } from "vitest";
import { AARCH64 } from "../../src/arch/aarch64.js";
import { arm64Rootwalk, runArm64 } from "../support/arm64-node.js";
import { buildRunEntry } from "../support/native-run.js";
import { generateProgram } from "./generate.js";
import { checkSeed, FUZZ_DIR, type FuzzPlatform, type Verdict } from "./oracle.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/*
 * Differential program fuzzing (issue 13): generated GC programs run under the malloc-only
 * reference runtime and under rootwalk without and with a collection at every safepoint; all three
 * must print the same checksum. A fixed set of seeds runs in `npm test`; `npm run fuzz:programs`
 * runs ROOTWALK_FUZZ_PROGRAMS of them (default 500) and prints a summary per feature.
 * ROOTWALK_FUZZ_AARCH64=1 runs the campaign on AArch64: the reference built by the cross gcc and run
 * under qemu-aarch64, rootwalk in the arm64 Node under qemu (test/support/arm64-node.ts); plimmix
 * programs are skipped (the plugin prints _GC_MAP_ for x86-64 only) and counted. Emulated, a
 * program takes about a minute.
 */

/** Seeds 1-12 already switch on every feature (checked below); LLVM 14 runs twice as many. */
const FIXED_SEEDS = Array.from({ length: process.env["ROOTWALK_LLVM"] === "14" ? 24 : 12 }, (_, k) => k + 1);
const CAMPAIGN = Number(process.env["ROOTWALK_FUZZ_PROGRAMS"] ?? 0);
const CAMPAIGN_START = Number(process.env["ROOTWALK_FUZZ_START"] ?? 1000);
const ON_AARCH64 = process.env["ROOTWALK_FUZZ_AARCH64"] === "1";

/** The AArch64 platform of an AArch64 campaign, or undefined (x86-64); a campaign asked for cannot run without it. */
function campaignPlatform(): FuzzPlatform | undefined {
  if (!ON_AARCH64) return undefined;
  const rootwalk = arm64Rootwalk();
  if (typeof rootwalk === "string") throw new Error(`ROOTWALK_FUZZ_AARCH64=1: ${rootwalk}`);
  return { architecture: AARCH64, runRootwalk: (args, timeoutMs) => runArm64(rootwalk, args, timeoutMs) };
}
beforeAll(() => {
  buildRunEntry();
}, 300_000);

function describeVerdict(v: Verdict): string {
  return v.ok ? "ok" : `${v.problem}\n  program: ${v.path}\n  reduced: ${v.reducedPath ?? "-"}\n  reproduce: ${v.reproduce}`;
}

describe.skipIf(CAMPAIGN > 0)("generated programs, fixed seeds", () => {
  it("the generator is deterministic and switches features by seed", () => {
    expect(generateProgram(7).blocks).toEqual(generateProgram(7).blocks);
    const fixed = new Set(FIXED_SEEDS.flatMap((s) => generateProgram(s).featureNames));
    const reachable = new Set(Array.from({ length: 2000 }, (_, k) => generateProgram(k + 1).featureNames).flat());
    expect([...reachable].filter((f) => !fixed.has(f))).toEqual([]);
    for (const f of ["statepoint", "plimmix", "derived", "threads", "globals", "stuck", "invokes", "dynamicAlloca", "over-aligned", "O0", "O3"])
      expect(reachable.has(f), f).toBe(true);
  });

  for (const seed of FIXED_SEEDS) {
    it(`seed ${seed}: reference, --no-gc and --stress=1 --verify agree`, async () => {
      const v = await checkSeed(seed);
      expect(describeVerdict(v)).toBe("ok");
      expect(v.collections).toBeGreaterThan(0);
    });
  }
});

describe.runIf(CAMPAIGN > 0)("campaign", () => {
  it(
    `${CAMPAIGN} programs from seed ${CAMPAIGN_START}`,
    async () => {
      const perFeature = new Map<string, { programs: number; collections: number; roots: number; moved: number; mismatches: number }>();
      const total = { programs: 0, collections: 0, roots: 0, moved: 0, mismatches: 0 };
      const failures: string[] = [];
      const summary = (): string => {
        const lines = [...perFeature.entries()]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(
            ([f, s]) =>
              `${f.padEnd(16)} programs ${String(s.programs).padStart(5)}  collections ${String(s.collections).padStart(8)}  roots relocated ${String(s.roots).padStart(9)}  objects moved ${String(s.moved).padStart(9)}  mismatches ${s.mismatches}`,
          );
        return `${lines.join("\n")}\n${failures.join("\n")}\n`;
      };
      const platform = campaignPlatform();
      let skippedPlimmix = 0;
      for (let seed = CAMPAIGN_START; seed < CAMPAIGN_START + CAMPAIGN; seed++) {
        if (platform !== undefined && generateProgram(seed).features.style === "plimmix") {
          skippedPlimmix++;
          continue;
        }
        const v = await checkSeed(seed, platform === undefined ? {} : { platform });
        const features = [...generateProgram(seed).featureNames, `llvm-${process.env["ROOTWALK_LLVM"] ?? "default"}`, ...(platform ? ["aarch64"] : [])];
        for (const f of [...features, "all"]) {
          const s = perFeature.get(f) ?? { programs: 0, collections: 0, roots: 0, moved: 0, mismatches: 0 };
          s.programs++;
          s.collections += v.collections;
          s.roots += v.rootsRelocated;
          s.moved += v.objectsMoved;
          if (!v.ok) s.mismatches++;
          perFeature.set(f, s);
        }
        total.programs++;
        if (!v.ok) failures.push(`seed ${seed}: ${describeVerdict(v)}`);
        if (total.programs % 25 === 0) {
          process.stderr.write(`fuzz:programs ${total.programs}/${CAMPAIGN}, ${failures.length} mismatches\n`);
          // The summary so far, kept on disk: a long campaign stopped early still has its numbers.
          writeFileSync(join(FUZZ_DIR, `summary-${CAMPAIGN_START}.txt`), summary());
        }
      }
      process.stdout.write(summary());
      if (platform !== undefined) process.stdout.write(`AArch64: ${skippedPlimmix} plimmix programs skipped\n`);
      expect(failures).toEqual([]);
    },
    24 * 3600_000,
  );
});
