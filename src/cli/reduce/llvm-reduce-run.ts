import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ToolError } from "../../errors.js";
import { BEST_FILE, SPEC_FILE, STEPS_FILE, lineCount, type ReduceSpec } from "./reduce-spec.js";

/**
 * One run of LLVM's llvm-reduce for `rootwalk reduce`, in a private folder (mkdtemp: exclusive,
 * mode 0700) that holds the spec, the candidates (llvm-reduce's TMPDIR), the best candidate so far
 * and the result, and is removed on every way out: done, time bound, error, Ctrl-C. llvm-reduce
 * runs in its own process group, so that the time bound and Ctrl-C end it with every test and
 * every `run` it started, before the folder goes.
 *
 * Invariant: the text returned is one the interestingness test accepted (llvm-reduce's result, or
 * `best.ll` when the bound ended it), or the original when no candidate was accepted.
 */
export interface ReduceRun {
  readonly text: string;
  readonly timedOut: boolean;
  readonly steps: number;
}

export interface ReduceRunOptions {
  readonly llvmReduce: string;
  readonly llvmMajor: number;
  readonly originalText: string;
  /** The whole reduction's bound, 0 for none. */
  readonly timeoutMs: number;
  readonly progressMs: number;
  readonly stderr: (text: string) => void;
}

const TEST_ENTRY = fileURLToPath(new URL("../reduce-test-entry.js", import.meta.url));

/**
 * The flags of llvm-reduce `major`. 15 and later run tests in parallel by default (-j 1: one at a
 * time, the machine is shared with the runs they start). 14 runs its passes once by default: the
 * functions pass comes first, while rw_main still calls every function, so the functions emptied
 * later stay; a second round (5, as 19's default, stopping when a round gains nothing) removes them.
 */
function llvmReduceArgs(major: number, specPath: string, input: string, output: string): string[] {
  const test = [`--test=${process.execPath}`, `--test-arg=${TEST_ENTRY}`, `--test-arg=${specPath}`];
  return [...test, ...(major >= 15 ? ["-j", "1"] : ["--max-pass-iterations=5"]), "-o", output, input];
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function bestText(dir: string): string | undefined {
  const path = join(dir, BEST_FILE);
  return existsSync(path) ? readFileSync(path, "utf8") : undefined;
}

export async function runLlvmReduce(spec: Omit<ReduceSpec, "stateDir">, options: ReduceRunOptions): Promise<ReduceRun> {
  if (!existsSync(TEST_ENTRY))
    throw new ToolError("rootwalk reduce", `its interestingness test ${TEST_ENTRY} is missing: build rootwalk first (npm run build)`);
  const dir = mkdtempSync(join(tmpdir(), "rootwalk-reduce-"));
  try {
    const specPath = join(dir, SPEC_FILE);
    writeFileSync(specPath, JSON.stringify({ ...spec, stateDir: dir }));
    writeFileSync(join(dir, "input.ll"), options.originalText);
    const result = await superviseLlvmReduce(dir, llvmReduceArgs(options.llvmMajor, specPath, join(dir, "input.ll"), join(dir, "reduced.ll")), options);
    const done = !result.timedOut && existsSync(join(dir, "reduced.ll"));
    const text = done ? readFileSync(join(dir, "reduced.ll"), "utf8") : (bestText(dir) ?? options.originalText);
    return { text, timedOut: result.timedOut, steps: sizeOf(join(dir, STEPS_FILE)) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Progress on stderr when the best candidate changed: step, lines now, lines at start. */
function progressReporter(dir: string, options: ReduceRunOptions): () => void {
  const start = lineCount(options.originalText);
  let shownLines = start;
  return () => {
    const best = bestText(dir);
    const lines = best === undefined ? start : lineCount(best);
    if (lines === shownLines) return;
    shownLines = lines;
    options.stderr(`rootwalk reduce: step ${sizeOf(join(dir, STEPS_FILE))}: ${lines} lines now, ${start} at start\n`);
  };
}

/**
 * Runs llvm-reduce in `dir` until it ends, the bound passes or Ctrl-C; on the last two its whole
 * process group is killed and waited for. Ctrl-C rejects with "killed by SIGINT" (exit 130, one line).
 */
function superviseLlvmReduce(dir: string, args: string[], options: ReduceRunOptions): Promise<{ timedOut: boolean }> {
  return new Promise((resolve, reject) => {
    let stderrTail = "";
    let ending: "timeout" | "interrupt" | undefined;
    const child = spawn(options.llvmReduce, args, { cwd: dir, detached: true, stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, TMPDIR: dir } });
    child.stderr.on("data", (chunk: Buffer) => (stderrTail = (stderrTail + chunk.toString()).slice(-4000)));
    const killGroup = (why: "timeout" | "interrupt") => {
      ending ??= why;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const onInterrupt = () => killGroup("interrupt");
    process.on("SIGINT", onInterrupt);
    process.on("SIGTERM", onInterrupt);
    const report = progressReporter(dir, options);
    const ticker = setInterval(report, options.progressMs);
    const bound = options.timeoutMs > 0 ? setTimeout(() => killGroup("timeout"), options.timeoutMs) : undefined;
    child.on("error", (e) => (stderrTail += String(e)));
    child.on("close", (code, signal) => {
      clearInterval(ticker);
      if (bound !== undefined) clearTimeout(bound);
      process.off("SIGINT", onInterrupt);
      process.off("SIGTERM", onInterrupt);
      report();
      if (ending === "interrupt") reject(new ToolError("llvm-reduce", "llvm-reduce failed (killed by SIGINT)"));
      else if (ending === "timeout") resolve({ timedOut: true });
      else if (code === 0) resolve({ timedOut: false });
      else
        reject(
          new ToolError(
            "llvm-reduce",
            `${options.llvmReduce} failed (${code !== null ? `exit ${code}` : `killed by ${signal}`}): ${stderrTail.trim().split("\n").slice(-3).join(" | ")}`,
          ),
        );
    });
  });
}
