import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "../src/toolchain/llvm-toolchain.js";
import { median } from "./timing.js";

/*
 * The generational bench (issue 32, item 7), in one run, as ratios: `rootwalk run` of
 * bench/programs/gen-binary-trees.ll (binary-trees with a long-lived tree) with and without
 * --generational on the same heap, and bench/programs/barrier-cost.ll (the barrier's cost per
 * store, both loops timed inside the program). Each configuration runs `runs` times in
 * alternation; medians are reported. Run: `npx tsc -p bench/tsconfig.json && node dist/bench/generational.js [runs]`.
 */

const TREES_RESULT = "65538069000";
const HEAP = "16M";

interface RunJson {
  result: string;
  collections: number;
  minorCollections: number;
  majorCollections: number;
  bytesPromoted: number;
  minorPauseMs: number;
  majorPauseMs: number;
  verifyFailures: number;
  phasesMs: Record<string, number>;
}

function runJson(program: string, args: readonly string[]): RunJson {
  const cli = join(repoRoot(), "dist", "src", "cli", "main.js");
  const child = spawnSync(process.execPath, [cli, "run", join(repoRoot(), "bench", "programs", program), ...args, "--json"], {
    encoding: "utf8",
    timeout: 600_000,
  });
  if (child.status !== 0) throw new Error(`generational bench: ${program} ${args.join(" ")} failed (exit ${child.status}): ${child.stderr.slice(-2000)}`);
  return JSON.parse(child.stdout.trim().split("\n").pop()!) as RunJson;
}

export interface GenerationalBench {
  runs: number;
  /** gen-binary-trees --heap 16M: mean pause of a nursery collection (generational run) and of a full one (the run without). */
  nurseryPauseMs: number;
  fullPauseMs: number;
  nurseryOverFull: number;
  minorCollections: number;
  majorCollectionsGenerational: number;
  collectionsWithout: number;
  bytesPromoted: number;
  /** Total GC time (every phase of every collection) with --generational over without. */
  gcTotalMsGenerational: number;
  gcTotalMsWithout: number;
  gcTotalRatio: number;
  /** barrier-cost: ns per store with gc_write_barrier after it and without; their ratio. */
  storeWithBarrierNs: number;
  storeWithoutBarrierNs: number;
  barrierCostNs: number;
  barrierRatio: number;
}

export function measureGenerational(runs: number): GenerationalBench {
  const gen: RunJson[] = [];
  const full: RunJson[] = [];
  const barrier: { withNs: number; withoutNs: number }[] = [];
  for (let i = 0; i < runs; i++) {
    for (const [list, extra] of [
      [full, []],
      [gen, ["--generational"]],
    ] as const) {
      const r = runJson("gen-binary-trees.ll", ["--heap", HEAP, ...extra]);
      if (r.result !== TREES_RESULT) throw new Error(`generational bench: gen-binary-trees returned ${r.result}, expected ${TREES_RESULT}`);
      list.push(r);
    }
    const b = BigInt(runJson("barrier-cost.ll", ["--generational"]).result);
    barrier.push({ withNs: Number(b >> 32n) / 1000, withoutNs: Number(b & 0xffffffffn) / 1000 });
  }
  const total = (r: RunJson): number => Object.values(r.phasesMs).reduce((a, b) => a + b, 0);
  const nurseryPauseMs = median(gen.map((r) => r.minorPauseMs / Math.max(1, r.minorCollections)));
  const fullPauseMs = median(full.map((r) => r.majorPauseMs / Math.max(1, r.majorCollections)));
  const gcTotalMsGenerational = median(gen.map(total));
  const gcTotalMsWithout = median(full.map(total));
  const storeWithBarrierNs = median(barrier.map((b) => b.withNs));
  const storeWithoutBarrierNs = median(barrier.map((b) => b.withoutNs));
  return {
    runs,
    nurseryPauseMs,
    fullPauseMs,
    nurseryOverFull: nurseryPauseMs / fullPauseMs,
    minorCollections: gen[0]!.minorCollections,
    majorCollectionsGenerational: gen[0]!.majorCollections,
    collectionsWithout: full[0]!.collections,
    bytesPromoted: gen[0]!.bytesPromoted,
    gcTotalMsGenerational,
    gcTotalMsWithout,
    gcTotalRatio: gcTotalMsGenerational / gcTotalMsWithout,
    storeWithBarrierNs,
    storeWithoutBarrierNs,
    barrierCostNs: storeWithBarrierNs - storeWithoutBarrierNs,
    barrierRatio: storeWithBarrierNs / storeWithoutBarrierNs,
  };
}

if (process.argv[1]?.endsWith("generational.js")) {
  const runs = Number(process.argv[2] ?? 5);
  console.log(JSON.stringify(measureGenerational(Number.isInteger(runs) && runs > 0 ? runs : 5), null, 2));
}
