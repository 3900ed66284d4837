import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "../src/toolchain/llvm-toolchain.js";
import { median } from "./timing.js";

/*
 * Minor pause against stack depth (issue 33, item 4): `rootwalk run --generational` of a program
 * DEPTH frames deep (every frame holding one root, the same old object, across its call) whose
 * bottom allocates BOTTOM_ALLOCATIONS garbage objects of 1 KiB, so every nursery collection stops
 * the stack at its full depth; with the return barriers (the default) and without
 * (`--no-return-barriers`). The descent allocates nothing: every collection happens at the
 * bottom, the first of them a full walk either way. The pause of each nursery collection comes
 * from `--gc-trace` (`pause_ms=`); per run its median, per configuration the median over runs.
 * `minorPauseDepthRatio` = the median nursery pause at the deepest stack over the one at the
 * shallowest, with the barriers (target <= 2: pauses that do not grow with depth).
 * Run alone: `npx tsc -p bench/tsconfig.json && node dist/bench/minor-pause-depth.js [runs]`.
 */

export const DEPTHS = [1_000, 10_000, 100_000, 1_000_000] as const;
/** 1 KiB objects at the bottom: at --nursery 64K about one collection per 60 of them (the header and alignment included). */
const BOTTOM_ALLOCATIONS = 720;
const NURSERY = "64K";
export const MINOR_PAUSE_DEPTH_TARGET = 2;

/** The program for one depth: its result is DEPTH + 1 (every frame adds the object's 1), checked. */
function depthProgram(depth: number): string {
  return `; bench/minor-pause-depth.ts: ${depth} frames, a root each, the bottom allocating
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
@__LLVM_StackMaps = extern_weak global i8

define void @bottom() gc "statepoint-example" {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %junk = call i8 addrspace(1)* @gc_alloc(i64 0, i64 1024)
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, ${BOTTOM_ALLOCATIONS}
  br i1 %done, label %out, label %loop
out:
  ret void
}

define i64 @down(i64 %n, i8 addrspace(1)* %o) gc "statepoint-example" {
entry:
  %z = icmp eq i64 %n, 0
  br i1 %z, label %leaf, label %rec
leaf:
  call void @bottom()
  br label %join
rec:
  %n1 = sub i64 %n, 1
  %r0 = call i64 @down(i64 %n1, i8 addrspace(1)* %o)
  br label %join
join:
  %r = phi i64 [ 0, %leaf ], [ %r0, %rec ]
  %vp = bitcast i8 addrspace(1)* %o to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %vp
  %s = add i64 %r, %v
  ret i64 %s
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %o = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8)
  %vp = bitcast i8 addrspace(1)* %o to i64 addrspace(1)*
  store i64 1, i64 addrspace(1)* %vp
  %r = call i64 @down(i64 ${depth}, i8 addrspace(1)* %o)
  ret i64 %r
}
`;
}

/** One run: the pause of each nursery collection (ms), from --gc-trace. */
function nurseryPauses(program: string, depth: number, barriers: boolean): number[] {
  const entry = join(repoRoot(), "dist", "src", "cli", "run-entry.js");
  const args = [entry, program, "--generational", "--nursery", NURSERY, "--gc-trace", "--json", ...(barriers ? [] : ["--no-return-barriers"])];
  const child = spawnSync(process.execPath, args, { encoding: "utf8", timeout: 300_000 });
  const what = `minor pause at depth ${depth}${barriers ? "" : " --no-return-barriers"}`;
  if (child.status !== 0) throw new Error(`${what}: exit ${child.status}: ${child.stderr.slice(-2000)}`);
  const result = (JSON.parse(child.stdout.trim().split("\n").pop()!) as { result: string }).result;
  if (result !== String(depth + 1)) throw new Error(`${what}: the program returned ${result}, expected ${depth + 1}`);
  const pauses = [...child.stderr.matchAll(/^rootwalk gc \d+ nursery .*\bpause_ms=([0-9.]+)/gm)].map((m) => Number(m[1]));
  if (pauses.length < 3) throw new Error(`${what}: ${pauses.length} nursery collections in --gc-trace, expected at least 3`);
  return pauses;
}

export interface MinorPauseDepth {
  runs: number;
  /** Per depth: the median nursery pause (ms) with the barriers and without, and the collections per run. */
  byDepth: { frames: number; withBarriersMs: number; withoutBarriersMs: number; nurseryCollections: number }[];
  /** Median nursery pause at the deepest stack over the shallowest, with the barriers (target <= 2). */
  minorPauseDepthRatio: number;
  /** The same without the barriers (what the barriers save). */
  minorPauseDepthRatioWithoutBarriers: number;
}

/** Every depth, `runs` runs per configuration (alternating with and without the barriers). */
export function measureMinorPauseDepth(runs: number): MinorPauseDepth {
  const dir = mkdtempSync(join(tmpdir(), "rootwalk-minor-pause-"));
  try {
    const byDepth = DEPTHS.map((frames) => {
      const program = join(dir, `depth-${frames}.ll`);
      writeFileSync(program, depthProgram(frames));
      const withB: number[] = [];
      const withoutB: number[] = [];
      let nurseryCollections = 0;
      for (let i = 0; i < runs; i++) {
        const p = nurseryPauses(program, frames, true);
        nurseryCollections = p.length;
        withB.push(median(p));
        withoutB.push(median(nurseryPauses(program, frames, false)));
      }
      return { frames, withBarriersMs: median(withB), withoutBarriersMs: median(withoutB), nurseryCollections };
    });
    const first = byDepth[0]!;
    const last = byDepth[byDepth.length - 1]!;
    return {
      runs,
      byDepth,
      minorPauseDepthRatio: last.withBarriersMs / first.withBarriersMs,
      minorPauseDepthRatioWithoutBarriers: last.withoutBarriersMs / first.withoutBarriersMs,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith("minor-pause-depth.js")) {
  const runs = Number(process.argv[2] ?? 3);
  console.log(JSON.stringify(measureMinorPauseDepth(Number.isInteger(runs) && runs > 0 ? runs : 3), null, 2));
}
