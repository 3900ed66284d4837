import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { repoRoot } from "../src/toolchain/llvm-toolchain.js";
import { median } from "./timing.js";

/** phasesMs of `rootwalk run` (src/native/run-result.ts). */
type PhasesMs = Record<"stopTheWorld" | "scan" | "traceEvacuate" | "sweep" | "verify", number>;

export interface VerifyOverheadResult {
  program: string;
  collections: number;
  /** Median over the runs, per phase, without and with --verify. */
  withoutVerifyMs: PhasesMs;
  withVerifyMs: PhasesMs;
  /**
   * The collector's time with --verify over its time without (sums of every phase, medians over
   * the runs): issue 19's "`run --stress=7 --verify` over the same without `--verify`", target <= 2.
   */
  verifyOverheadRatio: number;
}

const PROGRAM = "sp-binary-tree";
const EXPECTED_RESULT = "4272896";

/**
 * `rootwalk run sp-binary-tree.ll --stress=7` with and without --verify, `runs` times each (in
 * alternation, one process per run, so both see the same machine): the phases the collector
 * times (stop the world, root scan, trace + evacuate, sweep, verify), per run. The program's
 * result is checked and the verification must find nothing.
 */
export async function measureVerifyOverhead(runs: number): Promise<VerifyOverheadResult> {
  const { compileProgram } = await import("../src/toolchain/compile-program.js");
  const { buildRuntime, linkProgram } = await import("../src/native/build-runtime.js");
  const source = join(repoRoot(), "test", "native-programs", `${PROGRAM}.ll`);
  const runtime = buildRuntime();
  const program = linkProgram([await compileProgram(source, { mode: "statepoint" })], runtime);
  const entry = join(dirname(fileURLToPath(import.meta.url)), "verify-overhead-entry.js");
  const samples: Record<"verify" | "no-verify", PhasesMs[]> = { verify: [], "no-verify": [] };
  let collections = 0;
  for (let i = 0; i < runs; i++) {
    for (const mode of ["no-verify", "verify"] as const) {
      const child = spawnSync(process.execPath, [entry, program, runtime, mode], { encoding: "utf8", timeout: 300_000 });
      if (child.status !== 0) throw new Error(`verify overhead: ${PROGRAM} ${mode} failed (exit ${child.status}): ${child.stderr}`);
      const r = JSON.parse(child.stdout) as { result: string; collections: number; verifyFailures: number; phasesMs: PhasesMs };
      if (r.result !== EXPECTED_RESULT) throw new Error(`verify overhead: ${PROGRAM} returned ${r.result}, expected ${EXPECTED_RESULT}`);
      if (r.verifyFailures !== 0) throw new Error(`verify overhead: ${PROGRAM} had ${r.verifyFailures} verification failures`);
      collections = r.collections;
      samples[mode].push(r.phasesMs);
    }
  }
  const medians = (list: PhasesMs[]): PhasesMs => {
    const keys = Object.keys(list[0]!) as (keyof PhasesMs)[];
    return Object.fromEntries(keys.map((k) => [k, median(list.map((p) => p[k]))])) as PhasesMs;
  };
  const total = (p: PhasesMs): number => p.stopTheWorld + p.scan + p.traceEvacuate + p.sweep + p.verify;
  return {
    program: `${PROGRAM} --stress=7`,
    collections,
    withoutVerifyMs: medians(samples["no-verify"]),
    withVerifyMs: medians(samples.verify),
    verifyOverheadRatio: median(samples.verify.map(total)) / median(samples["no-verify"].map(total)),
  };
}
