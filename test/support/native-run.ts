import { irSource } from "./ir-source.js";
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import type { NativeRunResult } from "../../src/native/native-runtime.js";
import { buildRuntime } from "../../src/native/build-runtime.js";
import { cacheKey, repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { SCAN_KERNEL_FILE } from "../../walker/scan-kernel/load-kernel.js";
import type { NativeProgram } from "../native-programs/programs.js";

/*
 * Runs `rootwalk run` in a CHILD node process (same approach as test/native-runtime/run.test.ts:
 * a failing program ends its process with exit code 3, and koffi loads a runtime once per
 * process). The child runs the compiled JavaScript of src/cli/run-entry.ts from the SAME
 * output directory run.test.ts uses (.cache/native/test-dist).
 *
 * buildRunEntry() compiles the project (and copies the scan kernel's module beside its loader)
 * once per content of its sources (a stamp file holds the
 * hash of src/, gc/, walker/ and the tsconfig files, so a second test file or a second run skips
 * the ~5 s tsc build), into a private temporary directory whose files are then renamed into
 * place one by one: a child process started by a concurrently running test file never reads a
 * half-written module.
 */

const ROOT = repoRoot();
export const OUT_DIR = join(ROOT, ".cache", "native", "test-dist");
export const ENTRY = join(OUT_DIR, "src", "cli", "run-entry.js");
/** The whole CLI (`node CLI run ...`), compiled by buildRunEntry with the rest of the project. */
export const CLI = join(OUT_DIR, "src", "cli", "main.js");
const STAMP = join(OUT_DIR, ".rootwalk-test-dist-key");
const SOURCE_DIRS = ["src", "gc", "walker"];
const SOURCE_FILES = ["tsconfig.json", "tsconfig.build.json", "package.json"];

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...listFiles(path));
    else if (e.isFile()) out.push(path);
  }
  return out.sort();
}

function sourcesKey(): string {
  const files = [...SOURCE_DIRS.flatMap((d) => listFiles(join(ROOT, d))), ...SOURCE_FILES.map((f) => join(ROOT, f))];
  return cacheKey(["rootwalk-test-dist/v2", ...files.flatMap((f) => [relative(ROOT, f), existsSync(f) ? readFileSync(f) : ""])]);
}

/**
 * Compiles the project into OUT_DIR unless it is up to date; returns ENTRY. Also builds the
 * native runtime here, so that no child says "building the native runtime" on the stderr a test
 * reads.
 */
export function buildRunEntry(): string {
  buildRuntime();
  const key = sourcesKey();
  if (existsSync(ENTRY) && existsSync(STAMP) && readFileSync(STAMP, "utf8") === key) return ENTRY;
  const temp = `${OUT_DIR}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const r = spawnSync(process.execPath, [tsc, "-p", join(ROOT, "tsconfig.build.json"), "--outDir", temp], { encoding: "utf8", cwd: ROOT });
    // tsc emits even when some unrelated file has a type error; only the entry matters here.
    const builtEntry = join(temp, relative(OUT_DIR, ENTRY));
    if (!existsSync(builtEntry)) throw new Error(`could not build ${ENTRY}:\n${r.stdout}\n${r.stderr}`);
    // The scan kernel's module sits next to its loader, as `npm run build` (copy:kernel) puts it.
    copyFileSync(SCAN_KERNEL_FILE, join(temp, relative(ROOT, SCAN_KERNEL_FILE)));
    for (const file of listFiles(temp)) {
      const target = join(OUT_DIR, relative(temp, file));
      mkdirSync(dirname(target), { recursive: true });
      renameSync(file, target);
    }
    const stampTemp = `${STAMP}.tmp-${process.pid}`;
    writeFileSync(stampTemp, key);
    renameSync(stampTemp, STAMP);
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
  return ENTRY;
}

/** What `rootwalk run --json` prints (the runtime's result, as documented in the README). */
export type RunJson = Pick<
  NativeRunResult,
  "result" | "collections" | "framesScanned" | "rootsRelocated" | "objectsMoved" | "maxPauseMs" | "verifyFailures" | "poisonedBytes" | "phasesMs"
>;

export interface Outcome {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  elapsedMs: number;
}

/** The `rootwalk run` arguments that build `entry` as programs.ts describes it. */
export function programArguments(entry: NativeProgram): string[] {
  return [
    ...entry.files.map(irSource),
    ...(entry.mode === "plimmix" ? ["--plimmix"] : []),
    ...(entry.llcFlags ?? []).map((f) => `--llc-flag=${f}`),
    ...(entry.optFlags ?? []).map((f) => `--opt-flag=${f}`),
  ];
}

/** Runs `node ENTRY args...` asynchronously (the test worker's event loop stays free). */
export function runNative(args: readonly string[], timeoutMs: number): Promise<Outcome> {
  return runProcess(process.execPath, [ENTRY, ...args], timeoutMs);
}

/** Runs `command args...` from the repository root asynchronously (with `env`, default this process's), killed after `timeoutMs`. */
export function runProcess(command: string, args: readonly string[], timeoutMs: number, env: NodeJS.ProcessEnv = process.env): Promise<Outcome> {
  const start = performance.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      stderr += `\n(timed out after ${timeoutMs} ms)`;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("error", (e) => (stderr += `\n${e.message}`));
    child.on("close", (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr, elapsedMs: performance.now() - start });
    });
  });
}

/** Runs with `--json` and parses the last stdout line; a nonzero exit throws with stderr. */
export async function runNativeJson(args: readonly string[], timeoutMs: number): Promise<RunJson & { elapsedMs: number }> {
  return runJsonOutcome(args, await runNative([...args, "--json"], timeoutMs));
}

/** The result of a `rootwalk run ARGS --json` that ended as `r`; a nonzero exit throws with stderr. */
export function runJsonOutcome(args: readonly string[], r: Outcome): RunJson & { elapsedMs: number } {
  if (r.status !== 0) {
    throw new Error(`rootwalk run ${args.join(" ")}: exit ${r.status}${r.signal ? ` (${r.signal})` : ""}\n${r.stderr.slice(-4000)}`);
  }
  const line = r.stdout.trim().split("\n").pop() ?? "";
  return { ...(JSON.parse(line) as RunJson), elapsedMs: r.elapsedMs };
}
