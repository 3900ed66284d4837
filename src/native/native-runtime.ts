import { explainUndefinedMapLabel } from "../toolchain/map-label-names.js";
import koffi from "koffi";
import type { RootScanner } from "../../gc/root-scanning.js";
import type { HeapMap } from "../../gc/heap-map-svg.js";
import type { ImmixCollector } from "../../gc/immix-collector.js";
import { StackRootScanner } from "../../walker/stack-root-scanner.js";
import { RootwalkError } from "../errors.js";
import { SafepointRegistry } from "../safepoints/registry.js";
import { NativeCallbacks } from "./callback-dispatch.js";
import { MapRegistration } from "./map-registration.js";
import { MutatorHoles } from "./mutator-holes.js";
import { createNativeCollector } from "./native-heap.js";
import { ProcessModules } from "./process-modules.js";
import { DEFAULT_MAIN_STACK_BYTES, DEFAULT_SAFEPOINT_TIMEOUT_MS, DEFAULT_THREADS, DEFAULT_THREAD_STACK_BYTES } from "./run-defaults.js";
import { type NativeRunProgress, startProgressReports } from "./run-progress.js";
import { type NativeRunResult, runResult, writeHeapMapSvg } from "./run-result.js";
import { type RuntimeLibrary, loadRuntimeLibrary } from "./runtime-library.js";
import { setImmediateExit } from "../process-exit.js";
import { ReturnBarriers, returnBarriersUnavailable } from "./return-barriers.js";
import { ScanReferenceCheck } from "./scan-reference.js";
import { ScanTiming } from "./scan-timing.js";
import { StoppedThreads } from "./stopped-threads.js";
import { StuckThreadPins } from "./stuck-thread-pins.js";
import { ThreadStacks } from "./thread-stacks.js";
import { ThreadRecords } from "./thread-record.js";
import { WalkLog } from "./walk-log.js";

export type { NativeRunProgress } from "./run-progress.js";
export type { NativeRunResult } from "./run-result.js";

/*
 * The TypeScript half of the native runtime (runtime.c): loads the runtime and the program,
 * owns the heap (native memory reserved by C, seen as an ArrayBuffer through koffi.view), the
 * Immix collector, the safepoint registry and the stack scanner, and answers the runtime's one
 * callback. runNativeProgram only composes the parts, each in its own module: the thread
 * records (thread-record.ts), the stopped threads (stopped-threads.ts), the process's modules
 * (process-modules.ts), map registration at gc_init (map-registration.ts), stuck-thread pins,
 * the threads' allocation holes (mutator-holes.ts), the callback (callback-dispatch.ts), and the
 * instruments attached to the root scanner from outside (scan-timing.ts, walk-log.ts,
 * scan-reference.ts; progress reports: run-progress.ts). Every callback runs with the world stopped (runtime.c) on Node's main thread while
 * the native threads wait; rw_main runs on a native thread started by rw_run_main, called with
 * koffi's .async() (never synchronously: the callbacks need the main thread).
 *
 * A callback that throws would let native code continue with stale roots: every callback
 * catches everything, writes the message to stderr and returns -1, on which runtime.c exits
 * the process (code 3).
 */

export interface NativeRunOptions {
  /** The linked program (prog-*.so) and the runtime it depends on (librwruntime-*.so). */
  program: string;
  /** The user's files the program was built from (`run`'s arguments): what messages about the program name. */
  programFiles?: readonly string[];
  runtime: string;
  heapBytes: number;
  /** Collect at every Nth gc_safepoint and every Nth gc_alloc (0: off), evacuating everything. */
  stressEvery: number;
  noGc: boolean;
  verify: boolean;
  /** Generational collection (sticky mark bits, gc_write_barrier): ImmixCollector's generational and nurseryBytes. */
  generational?: boolean;
  /**
   * Under `generational`: return barriers (return-barriers.ts), so that a nursery collection walks
   * only the frames that ran since the last collection. Default true; off with
   * --no-return-barriers, and unavailable with a CET shadow stack or on AArch64 (one line on stderr).
   */
  returnBarriers?: boolean;
  nurseryBytes?: number;
  /**
   * How a stopped thread is walked. Both climb native frames (the runtime, libc, a C library
   * calling back into managed code) by their CFI through a module map of every mapped ELF.
   * "chunks" (default): from the stop to the boundary where the thread entered managed code
   * (rw_managed_return), the fast path. "unwind": no chunk list: from the stop to the stack's
   * outermost frame (clone3), the thread's whole stack mapping readable.
   */
  walk?: "chunks" | "unwind";
  /** Poison what each collection frees (gc/poison.ts); always on with stressEvery > 0. */
  poison?: boolean;
  /**
   * The threads' stacks, all in the scan memory (thread-stacks.ts, limits: stack-limits.ts):
   * rw_main's (default 1 GiB), each gc_thread_start thread's (64 MiB), and how many of those may be
   * alive at once (32): their stacks are reserved up front.
   */
  mainStackBytes?: number;
  threadStackBytes?: number;
  threads?: number;
  /**
   * See each stopped stack through a koffi view, not in place in the scan memory, so the scan
   * kernel copies it into the scan memory at every scan (the bench's measured alternative;
   * bench/HISTORY.md, "Native stacks").
   */
  copyStacks?: boolean;
  /** Write the heap map (SVG: blocks by lines, free / live / evacuated / large) here at the end. */
  svg?: string;
  /**
   * The safepoint watchdog: how long a collection waits for every running thread to reach a
   * safepoint before the run stops with exit 3 naming the late threads (0: wait forever).
   */
  safepointTimeoutMs?: number;
  /**
   * The NativeScan bench's C reference (a shared library built from bench/native/native-scan-ref.c):
   * after every root scan each stopped thread is scanned again in C from its record with a copy
   * of the same table, timed, and must give the same frames and root pairs (scan-reference.ts).
   */
  scanReference?: string;
  /**
   * `rootwalk run --json`: while rw_main runs, fd 1 points at stderr, so whatever the program
   * prints (printf, puts, write(1, ...)) goes there and stdout carries only the JSON; a failure
   * that ends the process in the runtime writes its JSON object on the real stdout
   * (runtime.c json_failure).
   */
  stdoutToStderr?: boolean;
  /** Called every `everyMs` of wall time while rw_main runs (between collections, on this thread). */
  progress?: { everyMs: number; report: (p: NativeRunProgress) => void };
  /** Cross-check every scan (walker/scan-cross-check.ts); the process entry reads ROOTWALK_SCAN_CROSSCHECK. */
  crossCheck?: boolean;
  /**
   * Called once before rw_main runs with the collector, the root scanner and the stop's running
   * totals, to attach instruments of its own (the run report's CollectionLog, --gc-trace).
   */
  instruments?: (parts: { collector: ImmixCollector; scanner: StackRootScanner; stop: ScanTiming }) => void;
  /** Called after rw_main returned with the heap as it left it (the threads' last allocations included). */
  onHeapMap?: (map: HeapMap) => void;
}

/** Runs the program's rw_main to completion. Only one program per process. */
export async function runNativeProgram(options: NativeRunOptions): Promise<NativeRunResult> {
  const runtime = loadRuntimeLibrary(options.runtime);
  // From here on the program's threads may wait for JavaScript: an exit must not wait for them.
  setImmediateExit((code) => runtime.rwExitNow(code));
  const stacks = new ThreadStacks(runtime, {
    mainStackBytes: options.mainStackBytes ?? DEFAULT_MAIN_STACK_BYTES,
    threadStackBytes: options.threadStackBytes ?? DEFAULT_THREAD_STACK_BYTES,
    threads: options.threads ?? DEFAULT_THREADS,
  });
  loadProgram(options.program, options.programFiles ?? []);
  const collector = createNativeCollector(runtime, options);
  const records = new ThreadRecords(runtime.rwThreadsAddress() as bigint);
  const registry = new SafepointRegistry();
  const modules = new ProcessModules();
  const barriers = returnBarriersFor(runtime, options);
  const stopped = new StoppedThreads(runtime, records, modules, stacks, options.walk === "unwind", options.copyStacks === true, barriers);
  const crossCheck = options.crossCheck !== undefined ? { crossCheck: options.crossCheck } : {};
  const scanner = new StackRootScanner(registry, () => stopped.stackList(), { modules: modules.modules, ...crossCheck });
  // Instruments, told of every scan in this order (timing first: it times the scan alone).
  const timing = new ScanTiming(stopped);
  scanner.addObserver(timing);
  const reference = options.scanReference === undefined ? undefined : new ScanReferenceCheck(options.scanReference, registry, scanner, stopped, records);
  if (reference !== undefined) scanner.addObserver(reference);
  const walkLog = WalkLog.fromEnvironment(runtime, registry, stopped, records, modules);
  if (walkLog !== undefined) scanner.addObserver(walkLog);
  options.instruments?.({ collector, scanner, stop: timing });
  collector.addRootScanner(scanner);
  if (options.noGc) collector.addRootScanner(NO_GC_SCANNER);

  const holes = new MutatorHoles(collector, records);
  const maps = new MapRegistration(runtime, registry);
  const pins = new StuckThreadPins(collector, registry, stopped, modules, crossCheck);
  const callbacks = new NativeCallbacks({ runtime, collector, scanner, stopped, holes, maps, pins, stress: options.stressEvery > 0, barriers, records });
  const startProgress = () => startProgressReports(options.progress, { runtime, records, modules, collector, framesScanned: () => callbacks.framesScanned });
  await runMain(runtime, options, collector, callbacks, startProgress);
  stacks.release();

  if (options.svg !== undefined) writeHeapMapSvg(options.svg, collector, holes);
  if (options.onHeapMap !== undefined) {
    holes.takeFinalCursors();
    options.onHeapMap(collector.heapMap());
  }
  return runResult({ runtime, collector, callbacks, maps, timing, scanReference: reference?.reference.totals, barriers });
}

/** The run's return barriers: only under --generational, unless turned off; unavailable: said once on stderr. */
function returnBarriersFor(runtime: RuntimeLibrary, options: NativeRunOptions): ReturnBarriers | undefined {
  if (options.generational !== true || options.returnBarriers === false || options.noGc) return undefined;
  const why = returnBarriersUnavailable();
  if (why === undefined) return new ReturnBarriers(runtime);
  process.stderr.write(`rootwalk run: no return barriers: ${why}; every nursery collection walks whole stacks\n`);
  return undefined;
}

/** Loads the program, so that its DT_NEEDED runtime is the one loaded; rw_run_main finds rw_main in it. */
function loadProgram(path: string, programFiles: readonly string[]): void {
  try {
    koffi.load(path);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    throw new RootwalkError("GC", `cannot load the program: ${explainUndefinedMapLabel(message, programFiles) ?? message}`);
  }
}

/** The program as its user knows it: the files it was built from, else the linked library. */
function programName(options: NativeRunOptions): string {
  return options.programFiles !== undefined && options.programFiles.length > 0 ? options.programFiles.join(", ") : options.program;
}

/** With --no-gc, a collection is an error: the heap is full. */
const NO_GC_SCANNER: RootScanner = {
  scanRoots() {
    throw new RootwalkError("GC", "the heap is full and --no-gc forbids collecting (give a bigger --heap)");
  },
  updateRoots() {},
};

/**
 * Sets the runtime up with the callback and runs rw_main on a native thread (koffi's .async():
 * the callbacks need this thread, free between them for the progress reports), to its return.
 */
async function runMain(
  runtime: RuntimeLibrary,
  options: NativeRunOptions,
  collector: ImmixCollector,
  callbacks: NativeCallbacks,
  startProgress: () => () => void,
): Promise<void> {
  const callback = callbacks.register();
  const { stressEvery, noGc, safepointTimeoutMs } = options;
  runtime.rwSetup(callback, stressEvery, noGc ? 1 : 0, safepointTimeoutMs ?? DEFAULT_SAFEPOINT_TIMEOUT_MS, collector.poisons ? 1 : 0);
  if (options.stdoutToStderr === true && (runtime.rwStdoutToStderr() as number) < 0)
    throw new RootwalkError("GC", "cannot point the program's stdout at stderr (dup failed)");
  const stopProgress = startProgress();
  try {
    await new Promise<void>((resolvePromise, reject) => {
      (runtime.rwRunMain as unknown as { async: (...args: unknown[]) => void }).async(options.program, (err: unknown, status: unknown) => {
        if (err) reject(err);
        else if (status !== 0) reject(new RootwalkError("GC", `${programName(options)}: no function rw_main (the program must define i64 @rw_main())`));
        else resolvePromise();
      });
    });
  } finally {
    stopProgress();
    if (options.stdoutToStderr === true) runtime.rwStdoutRestore();
  }
  koffi.unregister(callback as Parameters<typeof koffi.unregister>[0]);
}
