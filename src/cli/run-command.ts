import type { LlvmSelection } from "../toolchain/llvm-selection.js";
import { hostArchitecture } from "../arch/host-architecture.js";
import { parseTargetOption } from "../arch/target-option.js";
import { resolve } from "node:path";
import { reportInterruptsWhile } from "./interrupt.js";
import { parseDurationMs } from "./parse-duration.js";
import { parseNurserySize, parseSize } from "./parse-size.js";
import { generationalText } from "../../gc/gc-stats.js";
import { parseStressEvery } from "./parse-stress.js";
import { parseOptions } from "./options.js";
import { refuseSpecialFile } from "../loader/input-file.js";
import { RUN_OPTIONS, RUN_USAGE } from "./command-usage.js";
import { InvalidArgumentError } from "../errors.js";
import { EXIT_VERIFY_FAILURE, describeFailure } from "../errors.js";
import { failureKind } from "./failure.js";
import { checkOutputPath } from "./output-path.js";
import { verifyFailureJson, verifyFailureReport } from "./verify-failures.js";
import { runReporting } from "./report/run-reporting.js";
import type { NativeRunProgress, NativeRunResult } from "../native/native-runtime.js";
import { DEFAULT_MAIN_STACK_BYTES, DEFAULT_SAFEPOINT_TIMEOUT_MS, DEFAULT_THREADS, DEFAULT_THREAD_STACK_BYTES } from "../native/run-defaults.js";
import { type StackPlan, checkStackPlan } from "../native/stack-limits.js";

/**
 * `rootwalk run` (options: RUN_USAGE in command-usage.ts; docs/cli.md "rootwalk run").
 *
 * Compiles each `.ll` (statepoint: RS4GC + llc -O2; --plimmix: the plimmix plugin), takes each
 * `.o` and `.so` the user built as it is (src/native/program-input.ts), links them
 * with the native runtime (src/native/), runs its `i64 @rw_main()` with the Immix collector and
 * prints the result and statistics. The program runs IN THIS PROCESS (koffi): a failure inside
 * the native code or a collector callback ends the process with exit code 3 and a message.
 */

export interface RunIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export interface RunArguments {
  programs: string[];
  plimmix: boolean;
  llcFlags: string[];
  optFlags: string[];
  stressEvery: number;
  noGc: boolean;
  verify: boolean;
  /** Poison what each collection frees (implied by --stress). */
  poison: boolean;
  /** `--generational`, `--nursery SIZE` (implies it): nursery collections (sticky mark bits). */
  generational: boolean;
  nurseryBytes?: number;
  /** `--no-return-barriers`: under --generational, every collection walks whole stacks. */
  noReturnBarriers?: boolean;
  /** How stopped threads are walked (NativeRunOptions.walk). */
  walk: "chunks" | "unwind";
  /** Write the heap map (SVG) after the run. */
  svg?: string;
  /** `--report FILE.html`: write the run report (src/cli/report/) after the run. */
  report?: string;
  /** `--gc-trace`: a line per collection on stderr (src/cli/report/gc-trace.ts). */
  gcTrace?: boolean;
  heapBytes: number;
  /** `--stack`, `--thread-stack`, `--threads`: the threads' stacks in the scan memory (checked: stack-limits.ts). */
  stacks: StackPlan;
  /** The safepoint watchdog (native-runtime.ts): milliseconds, 0 = off. */
  safepointTimeoutMs: number;
  /**
   * Show progress on stderr every this many milliseconds (0: never; never with --json); when
   * not given, DEFAULT_PROGRESS_MS on a terminal (one updated line), DEFAULT_LOG_PROGRESS_MS
   * otherwise (a line each: logs stay short).
   */
  progressMs?: number;
  json: boolean;
  /** `--llvm VERSION`: the LLVM to compile with (it wins over ROOTWALK_LLVM). */
  llvm?: string;
  /** `--no-check`: do not run rootwalk check on the IR first; `--strict-check`: its findings stop the run. */
  noCheck?: boolean;
  strictCheck?: boolean;
}

export function parseHeapSize(text: string): number {
  const bytes = parseSize(text, "--heap");
  if (!(bytes >= 1 << 20) || bytes > 2 ** 32 - 32768) throw new InvalidArgumentError("--heap", text, "between 1M and 4G");
  return bytes;
}

/** `--threads N`: a whole number (checkStackPlan bounds it by what fits the scan memory). */
function parseThreadCount(text: string): number {
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n)) throw new InvalidArgumentError("--threads", text, "a whole number of threads (0 or more)");
  return n;
}

/**
 * `run --target`: the program runs in this process, natively, so it is built for the machine
 * rootwalk runs on (src/arch/host-architecture.ts) and `--target` can only name that one; an
 * AArch64 program runs in the arm64 Node (on x86-64, under qemu-user: docs/aarch64.md "`rootwalk run` on AArch64").
 */
function checkRunTarget(text: string): void {
  const target = parseTargetOption(text);
  const host = hostArchitecture();
  if (target === host) return;
  throw new InvalidArgumentError(
    "--target",
    text,
    `${host.name}, the machine rootwalk runs on (run executes the program natively; to run ${target.name} code, run rootwalk in ${target.nodeArch} Node, under qemu-user on another machine: docs/aarch64.md)`,
  );
}

/** Reads `rootwalk run`'s arguments by its option table (src/cli/options.ts), then checks each value. */
export function parseRunArguments(args: readonly string[]): RunArguments {
  const o = parseOptions(RUN_OPTIONS, args);
  const walk = o.value("--walk") ?? "chunks";
  if (walk !== "chunks" && walk !== "unwind") throw new InvalidArgumentError("--walk", walk, "chunks | unwind");
  for (const path of o.positional) refuseSpecialFile(path, "a program file (.ll, .o or .so)");
  if (o.has("--target")) checkRunTarget(o.value("--target")!);
  const out: RunArguments = {
    programs: o.positional,
    plimmix: o.has("--plimmix"),
    llcFlags: o.values("--llc-flag"),
    optFlags: o.values("--opt-flag"),
    stressEvery: o.has("--stress") ? parseStressEvery(o.value("--stress")!) : 0,
    noGc: o.has("--no-gc"),
    verify: o.has("--verify"),
    poison: o.has("--poison"),
    generational: o.has("--generational") || o.has("--nursery"),
    ...(o.has("--nursery") ? { nurseryBytes: parseNurserySize(o.value("--nursery")!) } : {}),
    ...(o.has("--no-return-barriers") ? { noReturnBarriers: true } : {}),
    walk,
    heapBytes: o.has("--heap") ? parseHeapSize(o.value("--heap")!) : 256 << 20,
    stacks: {
      mainStackBytes: o.has("--stack") ? parseSize(o.value("--stack")!, "--stack") : DEFAULT_MAIN_STACK_BYTES,
      threadStackBytes: o.has("--thread-stack") ? parseSize(o.value("--thread-stack")!, "--thread-stack") : DEFAULT_THREAD_STACK_BYTES,
      threads: o.has("--threads") ? parseThreadCount(o.value("--threads")!) : DEFAULT_THREADS,
    },
    safepointTimeoutMs: o.has("--safepoint-timeout") ? parseDurationMs(o.value("--safepoint-timeout")!, "--safepoint-timeout") : DEFAULT_SAFEPOINT_TIMEOUT_MS,
    json: o.has("--json"),
    ...(o.has("--svg") ? { svg: o.value("--svg")! } : {}),
    ...(o.has("--report") ? { report: o.value("--report")! } : {}),
    ...(o.has("--gc-trace") ? { gcTrace: true } : {}),
    ...(o.has("--progress") ? { progressMs: parseDurationMs(o.value("--progress")!, "--progress") } : {}),
    ...(o.has("--llvm") ? { llvm: o.value("--llvm")! } : {}),
    ...(o.has("--no-check") ? { noCheck: true } : {}),
    ...(o.has("--strict-check") ? { strictCheck: true } : {}),
  };
  if (out.programs.length === 0) throw new InvalidArgumentError("run", "no program", `at least one PROGRAM.ll, .o or .so (${RUN_USAGE})`);
  if (out.noGc && out.stressEvery > 0) throw new InvalidArgumentError("run", "--no-gc with --stress", "at most one of them");
  checkStackPlan(out.stacks);
  return out;
}

/** Progress every second on a terminal (one updated line, as `sim` shows it), every 5 s into a log. */
export const DEFAULT_PROGRESS_MS = 1000;
export const DEFAULT_LOG_PROGRESS_MS = 5000;

/** "collection pending, waiting for thread #1 at spin+0x9 for 3.0 s" (time since that safepoint). */
function pendingText(waits: NativeRunProgress["waitingFor"]): string {
  const threads = waits.map((w) => `thread #${w.thread} at ${w.lastSafepoint ?? "its start (no safepoint yet)"} for ${(w.runningMs / 1000).toFixed(1)} s`);
  return `collection pending, waiting for ${threads.join(", ")}`;
}

/** Shows progress lines; `end` finishes a terminal's updated line before anything else is printed. */
function progressReporter(io: RunIo): { report: (p: NativeRunProgress) => void; end: () => void } {
  const tty = process.stderr.isTTY === true;
  let shown = false;
  return {
    report: (p) => {
      const line = `rootwalk run: ${(p.elapsedMs / 1000).toFixed(1)} s, ${p.waitingFor.length > 0 ? pendingText(p.waitingFor) : `${p.collections} collections, ${p.framesScanned} frames scanned, ${p.objectsMoved} objects moved`}`;
      io.stderr(tty ? `\r${line}\x1b[K` : `${line}\n`);
      shown = true;
    },
    end: () => {
      if (tty && shown) io.stderr("\n");
      shown = false;
    },
  };
}

/** `--json` among the arguments, even when they failed to parse. */
function jsonRequested(args: readonly string[]): boolean {
  return args.includes("--json");
}

/** What `run` prints on stdout: one JSON object (--json) or four lines of results and statistics. */
function runReport(r: NativeRunResult, json: boolean, generational: boolean): string {
  if (json) {
    return `${JSON.stringify({
      // A verification failure (exit 4) is a failure with everything known: the same object.
      ...(r.verifyFailures > 0
        ? { error: failureKind(EXIT_VERIFY_FAILURE), exitCode: EXIT_VERIFY_FAILURE, message: `${r.verifyFailures} heap verification failures` }
        : {}),
      result: r.result,
      collections: r.collections,
      minorCollections: r.generational.minorCollections,
      majorCollections: r.generational.majorCollections,
      bytesPromoted: r.generational.bytesPromoted,
      rememberedSetMax: r.generational.rememberedSetMax,
      rememberedSetTotal: r.generational.rememberedSetTotal,
      minorPauseMs: Number(r.generational.minorPauseMs.toFixed(3)),
      majorPauseMs: Number(r.generational.majorPauseMs.toFixed(3)),
      framesScanned: r.framesScanned,
      framesSkipped: r.framesSkipped,
      returnBarriersArmed: r.returnBarriers.armed,
      returnBarrierHits: r.returnBarriers.hits,
      returnBarriersStale: r.returnBarriers.stale,
      rootsRelocated: r.rootsRelocated,
      objectsMoved: r.objectsMoved,
      maxPauseMs: Number(r.maxPauseMs.toFixed(3)),
      verifyFailures: r.verifyFailures,
      verifyFailureDetails: r.verifyFailureDetails.map(verifyFailureJson),
      poisonedBytes: r.poisonedBytes,
      phasesMs: Object.fromEntries(Object.entries(r.phasesMs).map(([k, v]) => [k, Number(v.toFixed(3))])),
    })}\n`;
  }
  return (
    `result: ${r.result}\n` +
    `collections: ${r.collections}, frames scanned: ${r.framesScanned}${r.framesSkipped > 0 ? ` (skipped ${r.framesSkipped})` : ""}, roots relocated: ${r.rootsRelocated}, objects moved: ${r.objectsMoved}\n` +
    `pause: max ${r.maxPauseMs.toFixed(3)} ms, total ${r.totalPauseMs.toFixed(3)} ms; verify failures: ${r.verifyFailures}; threads: ${r.threads}\n` +
    (generational ? `generational: ${generationalText(r.generational)}\n` : "") +
    `phases: ${Object.entries(r.phasesMs)
      .map(([k, v]) => `${k} ${v.toFixed(3)} ms`)
      .join(", ")}\n`
  );
}

/** The run's parameters as the report's table shows them. */
function runParameters(p: RunArguments): [string, string][] {
  return [
    ["programs", p.programs.join(" ")],
    ["code", p.plimmix ? "plimmix (gcroot)" : "statepoint"],
    ["heap", `${p.heapBytes} B`],
    ["stress", p.stressEvery > 0 ? `every ${p.stressEvery}th safepoint and allocation` : "off"],
    ["verify", p.verify ? "on" : "off"],
    ["poison", p.poison || p.stressEvery > 0 ? "on" : "off"],
    ["walk", p.walk],
    ["threads (reserved)", String(p.stacks.threads)],
  ];
}

/**
 * Checks the program's sources (unless --no-check), compiles them for this machine and links them
 * with the native runtime: the library to load and the runtime it needs; undefined when the check
 * stops the build (--strict-check with findings), which it has already said.
 */
async function buildProgram(parsed: RunArguments, io: RunIo, llvm: LlvmSelection): Promise<{ runtime: string; library: string } | undefined> {
  const { compileProgram } = await import("../toolchain/compile-program.js");
  const { buildRuntime, linkProgram } = await import("../native/build-runtime.js");
  const { programInputKind } = await import("../native/program-input.js");
  const { hostArchitecture } = await import("../arch/host-architecture.js");
  const kinds = parsed.programs.map((program) => programInputKind(program));
  const { checkBeforeBuild } = await import("./check-command.js");
  const sources = parsed.programs.filter((_, k) => kinds[k] === "source");
  if (
    parsed.noCheck !== true &&
    !(await checkBeforeBuild(sources, parsed.strictCheck === true, io.stderr, "rootwalk run", undefined, { llvm, generational: parsed.generational }))
  )
    return undefined;
  const objects: string[] = [];
  for (const [k, program] of parsed.programs.entries()) {
    if (kinds[k] === "source")
      objects.push(
        await compileProgram(program, {
          mode: parsed.plimmix ? "plimmix" : "statepoint",
          llvm,
          llcFlags: parsed.llcFlags,
          optFlags: parsed.optFlags,
          target: hostArchitecture(),
          onWarning: (line) => io.stderr(`rootwalk run: ${line}\n`),
        }),
      );
    else objects.push(program); // built by the user: linked (.o) or loaded (.so) as it is
  }
  const runtime = buildRuntime();
  const library = linkProgram(objects, runtime, parsed.programs);
  return { runtime, library };
}

/** Runs `rootwalk run ...`; returns the exit code (bad input: 1, verify failures: 4). */
export async function runCommand(args: readonly string[], io: RunIo, crossCheck?: boolean): Promise<number> {
  try {
    const parsed = parseRunArguments(args);
    if (parsed.svg !== undefined) checkOutputPath(parsed.svg, "--svg");
    if (parsed.report !== undefined) checkOutputPath(parsed.report, "--report");
    const reporting = runReporting(parsed.report, parsed.gcTrace === true, io.stderr);
    const { activeLlvm } = await import("../toolchain/llvm-selection.js");
    const llvm = activeLlvm(parsed.llvm);
    const { runNativeProgram } = await import("../native/native-runtime.js");
    const built = await buildProgram(parsed, io, llvm);
    if (built === undefined) return 1;
    const { runtime, library } = built;
    const progressMs = parsed.progressMs ?? (process.stderr.isTTY === true ? DEFAULT_PROGRESS_MS : DEFAULT_LOG_PROGRESS_MS);
    const progress = parsed.json || progressMs === 0 ? undefined : progressReporter(io);
    const stopReportingInterrupts = reportInterruptsWhile("rootwalk run", io.stderr);
    const r = await runNativeProgram({
      program: library,
      programFiles: parsed.programs,
      ...(crossCheck !== undefined ? { crossCheck } : {}),
      runtime,
      heapBytes: parsed.heapBytes,
      stressEvery: parsed.stressEvery,
      noGc: parsed.noGc,
      verify: parsed.verify,
      poison: parsed.poison,
      generational: parsed.generational,
      ...(parsed.nurseryBytes !== undefined ? { nurseryBytes: parsed.nurseryBytes } : {}),
      ...(parsed.noReturnBarriers === true ? { returnBarriers: false } : {}),
      stdoutToStderr: parsed.json,
      walk: parsed.walk,
      safepointTimeoutMs: parsed.safepointTimeoutMs,
      ...parsed.stacks,
      ...(progress !== undefined ? { progress: { everyMs: progressMs, report: progress.report } } : {}),
      ...(parsed.svg !== undefined ? { svg: parsed.svg } : {}),
      ...reporting.options,
    }).finally(() => {
      stopReportingInterrupts();
      progress?.end();
    });
    io.stdout(runReport(r, parsed.json, parsed.generational));
    if (parsed.svg !== undefined) io.stderr(`rootwalk run: heap map written to ${resolve(parsed.svg)}\n`);
    reporting.finish(r, runParameters(parsed));
    if (r.verifyFailures > 0) {
      io.stderr(verifyFailureReport("run", r.verifyFailures, r.verifyFailureDetails));
      return 4;
    }
    return 0;
  } catch (e) {
    const failure = describeFailure(e);
    io.stderr(`rootwalk run: ${failure.line}\n`);
    // --json: a script parsing stdout gets one object on failure too (the failures that end the
    // process inside the runtime write theirs there: runtime.c json_failure, same fields).
    if (jsonRequested(args))
      io.stdout(`${JSON.stringify({ error: failureKind(failure.exitCode, failure.internal), exitCode: failure.exitCode, message: failure.line })}\n`);
    return failure.exitCode;
  }
}
