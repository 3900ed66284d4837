import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import type { Architecture } from "../../src/arch/architecture.js";
import { X86_64 } from "../../src/arch/x86-64.js";
import { runReference, type NativeProgram } from "../native-programs/programs.js";
import { type Outcome, programArguments, runNative, type RunJson } from "../support/native-run.js";
import { generateProgram, renderProgram, type GeneratedProgram } from "./generate.js";

/**
 * The oracle: the program linked with the malloc-only reference runtime (no collection) gives the
 * expected checksum; `rootwalk run --no-gc` and `rootwalk run --stress=1 --verify --poison` (stress
 * implies poison) must print it. Programs and mismatches live under .cache/fuzz-programs/ (git-ignored).
 * On a FuzzPlatform other than the default (x86-64, this process's Node), the reference is built
 * for that machine and rootwalk runs there: AArch64, the reference under qemu-aarch64 and rootwalk
 * in the arm64 Node under qemu (fuzz-programs.test.ts, ROOTWALK_FUZZ_AARCH64).
 */

/** Where a program is judged: the machine the reference is built for, and how `rootwalk run ARGS` runs there. */
export interface FuzzPlatform {
  architecture: Architecture;
  runRootwalk(args: readonly string[], timeoutMs: number): Promise<Outcome>;
}

const X86_64_PLATFORM: FuzzPlatform = { architecture: X86_64, runRootwalk: runNative };

export const FUZZ_DIR = join(repoRoot(), ".cache", "fuzz-programs");

/**
 * ROOTWALK_FUZZ_GENERATIONAL=1: every rootwalk run is also generational (issue 32): `--no-gc`,
 * then `--generational --stress=1 --verify --poison` (three nursery collections in four, the
 * barrier's log rescanned; a missing barrier is a verify failure) and `--generational` alone
 * with a small nursery (collections from the nursery budget). The generated programs call
 * gc_write_barrier after every pointer store into an object (generate.ts @st).
 */
export const GENERATIONAL = process.env["ROOTWALK_FUZZ_GENERATIONAL"] === "1";
const MODES: readonly (readonly string[])[] = GENERATIONAL
  ? [["--no-gc"], ["--generational", "--stress=1", "--verify", "--poison"], ["--generational", "--nursery=32K", "--verify"]]
  : [["--no-gc"], ["--stress=1", "--verify", "--poison"]];

export interface Verdict {
  seed: number;
  ok: boolean;
  /** Why not: the first failing step and what it printed. */
  problem?: string;
  expected?: bigint;
  collections: number;
  rootsRelocated: number;
  objectsMoved: number;
  /** The program's path (and the reduced one's, on a mismatch). */
  path: string;
  reducedPath?: string;
  reproduce?: string;
}

function entryFor(p: GeneratedProgram, path: string): NativeProgram {
  return {
    name: `fuzz-${p.seed}-${path.length}`,
    files: [path],
    mode: p.features.style,
    llcFlags: p.llcFlags,
    optFlags: p.optFlags,
    expectedResult: 0n,
    features: p.featureNames,
  };
}

function parseJson(stdout: string): RunJson | undefined {
  try {
    return JSON.parse(stdout.trim().split("\n").pop() ?? "") as RunJson;
  } catch {
    return undefined;
  }
}

/** Runs one rendering of a program through the reference and both rootwalk runs. */
async function judge(p: GeneratedProgram, path: string, platform: FuzzPlatform): Promise<Omit<Verdict, "seed" | "path">> {
  const entry = entryFor(p, path);
  let reference;
  try {
    reference = await runReference(entry, 30_000, platform.architecture);
  } catch (e) {
    return {
      ok: false,
      problem: `does not build: ${(e as Error).message.split("\n").slice(0, 3).join(" | ")}`,
      collections: 0,
      rootsRelocated: 0,
      objectsMoved: 0,
    };
  }
  if (reference.status !== 0 || reference.result === undefined) {
    return {
      ok: false,
      problem: `reference runtime failed: exit ${reference.status} ${reference.stderr.slice(0, 300)}`,
      collections: 0,
      rootsRelocated: 0,
      objectsMoved: 0,
    };
  }
  const expected = reference.result;
  let collections = 0;
  let rootsRelocated = 0;
  let objectsMoved = 0;
  for (const mode of MODES) {
    const r = await platform.runRootwalk([...programArguments(entry), ...mode, "--heap=64M", "--json"], platform === X86_64_PLATFORM ? 120_000 : 900_000);
    const json = parseJson(r.stdout);
    if (r.status !== 0 || json === undefined)
      return {
        ok: false,
        problem: `rootwalk run ${mode.join(" ")}: exit ${r.status}: ${r.stderr.trim().split("\n").slice(-3).join(" | ")}`,
        expected,
        collections,
        rootsRelocated,
        objectsMoved,
      };
    if (BigInt(json.result) !== expected)
      return {
        ok: false,
        problem: `rootwalk run ${mode.join(" ")}: result ${json.result}, reference ${expected}`,
        expected,
        collections,
        rootsRelocated,
        objectsMoved,
      };
    if (json.verifyFailures > 0)
      return {
        ok: false,
        problem: `rootwalk run ${mode.join(" ")}: ${json.verifyFailures} verify failures`,
        expected,
        collections,
        rootsRelocated,
        objectsMoved,
      };
    collections += json.collections;
    rootsRelocated += json.rootsRelocated;
    objectsMoved += json.objectsMoved;
  }
  return { ok: true, expected, collections, rootsRelocated, objectsMoved };
}

/** A mismatch is interesting when the reference still runs (the reduced program is valid). */
function stillMismatches(v: Omit<Verdict, "seed" | "path">): boolean {
  return !v.ok && v.expected !== undefined;
}

/**
 * Deletes blocks (statements, whole functions' lines) one at a time while the mismatch stays;
 * deletions that break the program (it no longer builds or the reference fails) are undone.
 */
async function reduce(p: GeneratedProgram, dir: string, platform: FuzzPlatform): Promise<string> {
  let blocks = [...p.blocks];
  for (let i = blocks.length - 1; i >= 1; i--) {
    const trial = blocks.filter((_, k) => k !== i);
    const path = join(dir, `reduced-try.ll`);
    writeFileSync(path, renderProgram(p, trial));
    if (stillMismatches(await judge(p, path, platform))) blocks = trial;
  }
  const reduced = join(dir, `fuzz-${p.seed}-reduced.ll`);
  writeFileSync(reduced, renderProgram(p, blocks));
  return reduced;
}

export async function checkSeed(seed: number, options: { reduce?: boolean; platform?: FuzzPlatform } = {}): Promise<Verdict> {
  const platform = options.platform ?? X86_64_PLATFORM;
  const program = generateProgram(seed);
  mkdirSync(FUZZ_DIR, { recursive: true });
  const path = join(FUZZ_DIR, `fuzz-${seed}.ll`);
  writeFileSync(path, renderProgram(program));
  const verdict: Verdict = { seed, path, ...(await judge(program, path, platform)) };
  if (!verdict.ok) {
    const flags = [
      ...(program.features.style === "plimmix" ? ["--plimmix"] : []),
      ...program.llcFlags.map((f) => `--llc-flag=${f}`),
      ...program.optFlags.map((f) => `--opt-flag=${f}`),
    ].join(" ");
    verdict.reproduce = `rootwalk run ${path} ${flags} ${GENERATIONAL ? "--generational " : ""}--stress=1 --verify --poison   # seed ${seed}; reference: test/native-programs/reference-runtime.c`;
    if (options.reduce !== false && stillMismatches(verdict)) verdict.reducedPath = await reduce(program, FUZZ_DIR, platform);
  }
  return verdict;
}
