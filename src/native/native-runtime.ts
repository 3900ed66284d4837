import { CollectorError, HeapExhaustedError } from "../../gc/collector-error.js";
import { describeFailure } from "../cli/failure.js";
import { renderHeapMapSvg } from "../../gc/heap-map-svg.js";
import { appendFileSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import koffi from "koffi";
import { ImmixCollector } from "../../gc/immix-collector.js";
import type { Mutator } from "../../gc/immix-allocator.js";
import type { RecordedVerifyFailure } from "../../gc/gc-stats.js";
import { reportWalk } from "../../walker/frame-report.js";
import { RegisterContext } from "../../walker/register-context.js";
import { DEFAULT_MAX_DEPTH, type ManagedChunk, Unwinder } from "../../walker/unwinder.js";
import { StackRootScanner, type ThreadStack } from "../../walker/stack-root-scanner.js";
import { ElfFile } from "../elf/elf-file.js";
import { RootwalkError, hex } from "../errors.js";
import { registerPlimmixBytes } from "../loader/plimmix-loader.js";
import { registerFile, registerStackMapBytes } from "../loader/register-maps.js";
import { blobFormat } from "../loader/stack-map-file.js";
import { SafepointRegistry } from "../safepoints/registry.js";
import { ModuleMap } from "../unwind/module-map.js";
import { PLIMMIX_SYMBOL_PREFIX, plimmixMapLength } from "../stackmap/plimmix-map.js";
import { NativeMemory } from "./native-memory.js";
import { readU64, readU64BigInt, writeU64, writeU64BigInt } from "../bytes/word-codec.js";
import { CALLEE_SAVED_NAMES } from "../safepoints/frame-descriptors.js";
import { NativeScanReference, type ScanReferenceTotals } from "./scan-reference.js";
import { vdsoImageOfThisProcess } from "./vdso-image.js";
import { DEFAULT_SAFEPOINT_TIMEOUT_MS } from "./run-defaults.js";
import {
  // The thread record runtime.c shares (layout and enums checked against the C by a test).
  JS_ADD_GLOBAL, JS_ALLOC, JS_COLLECT, JS_INIT, JS_STUCK_END, JS_STUCK_START, MAX_THREADS, RECORD_WORDS,
  R_BOUNDARY, R_CURSOR, R_LEFT_NS, R_LIMIT, R_RA, R_REGS, R_SP, R_STACK_TOP, R_STATE, ST_DEAD, ST_NOGC, ST_PARKED, ST_RUNNING, ST_SAFE, ST_STUCK,
} from "./thread-record.js";

/*
 * The TypeScript half of the native runtime (runtime.c): loads the runtime and the program,
 * owns the heap (native memory reserved by C, seen as an ArrayBuffer through koffi.view), the
 * Immix collector, the safepoint registry and the stack scanner, and answers the runtime's one
 * callback. Every callback runs with the world stopped (runtime.c) on Node's main thread while
 * the native threads wait; rw_main runs on a native thread started by rw_run_main, called with
 * koffi's .async() (never synchronously: the callbacks need the main thread).
 *
 * A callback that throws would let native code continue with stale roots: every callback
 * catches everything, writes the message to stderr and returns -1, on which runtime.c exits
 * the process (code 3).
 */

const REG_NAMES = CALLEE_SAVED_NAMES;
const BELOW_SP_BYTES = 256;

export interface NativeRunOptions {
  /** The linked program (prog-*.so) and the runtime it depends on (librwruntime-*.so). */
  program: string;
  runtime: string;
  heapBytes: number;
  /** Collect at every Nth gc_safepoint and every Nth gc_alloc (0: off), evacuating everything. */
  stressEvery: number;
  noGc: boolean;
  verify: boolean;
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
  mainStackBytes?: number;
  threadStackBytes?: number;
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
}

/** How far a run has got: what `rootwalk run` shows on stderr while it works. */
export interface NativeRunProgress {
  elapsedMs: number;
  collections: number;
  framesScanned: number;
  objectsMoved: number;
  /**
   * While a collection is requested and waits for running threads to reach a safepoint: each such
   * thread, its last safepoint (`function+0xoff`, from its record's return address) and how long
   * it has run since (CLOCK_MONOTONIC, as the runtime stamps it). Empty otherwise.
   */
  waitingFor: { thread: number; lastSafepoint: string | undefined; runningMs: number }[];
}

export interface NativeRunResult {
  /** rw_main's return value, signed decimal. */
  result: string;
  collections: number;
  framesScanned: number;
  rootsRelocated: number;
  objectsMoved: number;
  maxPauseMs: number;
  verifyFailures: number;
  /** The first verification failures (at most FIRST_VERIFY_FAILURES_KEPT), where and why. */
  verifyFailureDetails: RecordedVerifyFailure[];
  /** Bytes the collections poisoned (0 unless --poison or --stress). */
  poisonedBytes: number;
  totalPauseMs: number;
  mapsRegistered: number;
  threads: number;
  /**
   * Time spent in stack scans and the frames they walked, all scans: a scan is the stopped
   * threads' records read, one koffi view per stack, every frame walked and every root slot
   * recorded (StackRootScanner.walkStacks). Reading the roots and the collector's tracing of each
   * one (visitRoots) is rootVisitMs.
   */
  scanMs: number;
  scanFrames: number;
  rootVisitMs: number;
  /** The C reference's scans of the same stacks (with options.scanReference). */
  scanReference?: ScanReferenceTotals;
  /**
   * Pause breakdown, ms summed over all collections: stopTheWorld is the runtime's side of the
   * stop as seen from the collector (reading the stopped threads' records, one view per stack;
   * the C handshake that parks the threads is not in it), then the collector's phases.
   */
  phasesMs: { stopTheWorld: number; scan: number; traceEvacuate: number; sweep: number; verify: number };
}

/** Runs the program's rw_main to completion. Only one program per process. */
export async function runNativeProgram(options: NativeRunOptions): Promise<NativeRunResult> {
  const runtime = koffi.load(options.runtime);
  const rwSetup = runtime.func("int rw_setup(void *callback, uint64_t stress, int disableGc, uint64_t mainStack, uint64_t threadStack, uint64_t safepointTimeoutMs, int poison)");
  const rwHeapReserve = runtime.func("void *rw_heap_reserve(uint64_t bytes)");
  const rwHeapProtect = runtime.func("int rw_heap_protect(uint64_t address, uint64_t bytes, int accessible)");
  const rwInitPath = runtime.func("const char *rw_init_path(void)");
  const rwInitBase = runtime.func("uint64_t rw_init_base(void)");
  const rwThreadCount = runtime.func("int rw_thread_count(void)");
  const rwThreadsAddress = runtime.func("void *rw_threads_address(void)");
  const rwResultText = runtime.func("const char *rw_result_text(void)");
  const rwRunMain = runtime.func("int rw_run_main(const char *program)");
  const rwStdoutToStderr = runtime.func("int rw_stdout_to_stderr(void)");
  const rwStdoutRestore = runtime.func("void rw_stdout_restore(void)");
  const rwSetCollections = runtime.func("void rw_set_collections(uint64_t n)");
  const rwSetFailure = runtime.func("void rw_set_failure(const char *line)");

  // Loaded here so that its DT_NEEDED runtime is the one above; rw_run_main finds rw_main in it.
  try {
    koffi.load(options.program);
  } catch (e) {
    throw new RootwalkError("GC", `cannot load the program: ${e instanceof Error ? e.message : String(e)}`);
  }

  // ---- heap and collector ----
  const heapBytes = Math.floor(options.heapBytes / 32768) * 32768;
  const heapPointer = rwHeapReserve(heapBytes) as bigint | null;
  if (heapPointer === null || heapPointer === 0n) throw new RootwalkError("GC", `cannot reserve a heap of ${heapBytes} bytes`);
  const heapBase = Number(heapPointer);
  const heapBuffer = koffi.view(heapPointer, heapBytes);
  // The stress quarantine protects the blocks it holds: a stale read or write faults at once.
  const protect = (address: number, bytes: number, accessible: boolean): void => {
    const e = rwHeapProtect(address, bytes, accessible ? 1 : 0) as number;
    if (e !== 0) throw new RootwalkError("GC", `mprotect(${hex(address)}, ${bytes}, ${accessible ? "read+write" : "none"}) failed: errno ${e}`);
  };
  const collector = new ImmixCollector({
    heap: {
      base: heapBase,
      buffer: heapBuffer,
      sizeBytes: heapBytes,
      protection: { protect: (a, n) => protect(a, n, false), unprotect: (a, n) => protect(a, n, true) },
    },
    options: { verify: options.verify, stress: options.stressEvery > 0, poison: options.poison === true || options.stressEvery > 0, globalMemory: new GlobalSlotMemory() },
  });

  // ---- thread records ----
  const recordsPointer = rwThreadsAddress() as bigint;
  const recordWords = new Uint32Array(koffi.view(recordsPointer, MAX_THREADS * RECORD_WORDS * 8));
  const word = (t: number, k: number): number => readU64(recordWords, (t * RECORD_WORDS + k) * 2);
  const wordBig = (t: number, k: number): bigint => readU64BigInt(recordWords, (t * RECORD_WORDS + k) * 2);
  const setWord = (t: number, k: number, value: number): void => writeU64(recordWords, (t * RECORD_WORDS + k) * 2, value);
  const setWordBig = (t: number, k: number, value: bigint): void => writeU64BigInt(recordWords, (t * RECORD_WORDS + k) * 2, value);

  const mutators = new Map<number, Mutator>();
  const registry = new SafepointRegistry();
  let mapsRegistered = 0;
  const registeredFiles = new Set<string>();

  // The stopped threads of the current callback (built once per callback: the scanner asks twice).
  // Each thread index keeps one record (register context, chunk, stack) refilled at every stop:
  // a stop allocates only the one koffi view of each stopped thread's stack (NativeMemory).
  interface Stopped {
    index: number;
    stack: { memory: NativeMemory; chunks: ManagedChunk[]; label: string };
    chunk: ManagedChunk;
    registers: RegisterContext;
  }
  const stoppedByIndex: Stopped[] = [];
  const stoppedList: Stopped[] = [];
  const stoppedStacks: ThreadStack[] = [];
  let stoppedValid = false;
  const stoppedThreads = (): Stopped[] => {
    if (stoppedValid) return stoppedList;
    stoppedList.length = 0;
    stoppedStacks.length = 0;
    modules.refreshBeforeNextLookup(refreshModules);
    const count = rwThreadCount() as number;
    for (let t = 0; t < count; t++) {
      const state = word(t, R_STATE);
      if (state !== ST_PARKED && state !== ST_SAFE && state !== ST_STUCK) continue;
      const s = stoppedThread(t);
      stoppedList.push(s);
      stoppedStacks.push(s.stack);
    }
    stoppedValid = true;
    return stoppedList;
  };
  // Every ELF mapped in the process, for native frames by CFI: re-read when a stop's walk first
  // needs a module (a frame without a safepoint) and the mappings changed (the program is mapped
  // by rw_run_main), parsed modules kept. A stop whose frames are all at safepoints reads nothing.
  const modules = new ModuleMap([]);
  let mapsText = "";
  const refreshModules = (): void => {
    const text = readFileSync("/proc/self/maps", "utf8");
    if (text === mapsText) return;
    mapsText = text;
    const fresh = ModuleMap.fromMappings(ModuleMap.parseProcMaps(text), { previous: modules, pseudoImage: vdsoImageOfThisProcess });
    modules.replaceWith(fresh);
  };
  const unwindWhole = options.walk === "unwind";
  /** Thread t's record as it is now, in its reused Stopped (its stack seen through a new view). */
  const stoppedThread = (t: number): Stopped => {
    const sp = word(t, R_SP);
    const ra = word(t, R_RA);
    const stackTop = word(t, R_STACK_TOP);
    if (sp === 0 || ra === 0) throw new RootwalkError("GC", `thread #${t} is stopped without recorded frames`);
    let s = stoppedByIndex[t];
    if (s === undefined) {
      const registers = new RegisterContext();
      const chunk: ManagedChunk = { sp: 0, ra: 0, registers, boundaryRa: undefined, stackTop: undefined };
      s = stoppedByIndex[t] = { index: t, registers, chunk, stack: { memory: undefined as unknown as NativeMemory, chunks: [chunk], label: `thread #${t}` } };
    }
    for (let k = 0; k < REG_NAMES.length; k++) s.registers.load(k, wordBig(t, R_REGS + k));
    const low = sp - BELOW_SP_BYTES;
    const chunk = s.chunk;
    chunk.sp = sp;
    chunk.ra = ra;
    if (unwindWhole) {
      const end = stackMappingEnd(sp);
      chunk.boundaryRa = undefined;
      chunk.stackTop = undefined;
      s.stack.memory = new NativeMemory(low, end - low);
    } else {
      chunk.boundaryRa = word(t, R_BOUNDARY);
      chunk.stackTop = stackTop;
      s.stack.memory = new NativeMemory(low, stackTop - low);
    }
    return s;
  };

  let stopMs = 0;
  const scanner = new StackRootScanner(
    registry,
    () => {
      const start = performance.now();
      stoppedThreads();
      // Only the collection's root scan: verification's root walks and updateRoots ask again.
      if (collector.phase === "scan") stopMs += performance.now() - start;
      return stoppedStacks;
    },
    { modules },
  );
  // Every scan's walk is timed as a whole, thread records and koffi views of the stopped stacks
  // included (the bench's native-scan number: frames per second); the root visits apart.
  let scanMs = 0;
  let rootVisitMs = 0;
  const scanReference = options.scanReference === undefined ? undefined : new NativeScanReference(options.scanReference);
  let scanFrames = 0;
  // ROOTWALK_WALK_LOG=FILE (a debugging aid, README): after each collection's root scan, every
  // stopped thread's whole stack is walked as `--walk unwind` does and each frame (pc, SP, CFA,
  // callee-saved registers, roots and their values) appended to FILE as one JSON line, with, as
  // `scan`, the walk the scanner itself made (the same stack, chunks and strict mode: with
  // `--walk chunks` the chunk walk, ending at the boundary); then rw_walk_logged(n) is called so
  // that a debugger stopped there sees the same stop.
  const walkLogPath = process.env["ROOTWALK_WALK_LOG"];
  const rwWalkLogged = walkLogPath === undefined ? undefined : runtime.func("void rw_walk_logged(uint64_t collection)");
  let walkLogCollections = 0;
  const logWalks = (path: string): void => {
    const snapshot = registry.snapshot();
    const threads = stoppedThreads().map((s) => {
      const chunk = s.stack.chunks[0]!;
      const end = stackMappingEnd(chunk.sp);
      const memory = new NativeMemory(chunk.sp - BELOW_SP_BYTES, end - (chunk.sp - BELOW_SP_BYTES));
      const u = new Unwinder(snapshot, memory, { mode: "lenient", modules, maxDepth: 100_000 });
      const whole = reportWalk(u, memory, { sp: chunk.sp, ra: chunk.ra, registers: RegisterContext.from(Object.fromEntries(REG_NAMES.map((name, k) => [name, wordBig(s.index, R_REGS + k)]))) });
      const scan = reportWalk(new Unwinder(snapshot, s.stack.memory, { mode: "strict", modules }), s.stack.memory, s.stack.chunks);
      return { thread: s.index, ...whole, scan };
    });
    walkLogCollections++;
    appendFileSync(path, `${JSON.stringify({ collection: walkLogCollections, threads })}\n`);
    rwWalkLogged?.(walkLogCollections);
  };
  collector.addRootScanner({
    scanRoots(visit) {
      const start = performance.now();
      scanner.walkStacks();
      const walked = performance.now();
      scanner.visitRoots(visit);
      scanMs += walked - start;
      rootVisitMs += performance.now() - walked;
      scanFrames += scanner.framesScanned;
      if (scanReference !== undefined) {
        const snapshot = registry.snapshot();
        stoppedList.forEach((s, i) => {
          const walk = scanner.lastWalkOf(i);
          if (walk === undefined) throw new RootwalkError("GC", `the scanner has no walk of thread #${s.index}`);
          scanReference.scanAndCompare(snapshot, recordsPointer + BigInt(s.index * RECORD_WORDS * 8), DEFAULT_MAX_DEPTH, s.index, walk);
        });
      }
      if (walkLogPath !== undefined && collector.phase === "scan") logWalks(walkLogPath);
    },
    updateRoots(forward) {
      scanner.updateRoots(forward);
    },
    describeRoot: (index) => scanner.describeRoot(index),
  });
  if (options.noGc) {
    collector.addRootScanner({
      scanRoots() {
        throw new RootwalkError("GC", "the heap is full and --no-gc forbids collecting (give a bigger --heap)");
      },
      updateRoots() {},
    });
  }

  let framesScanned = 0;
  let rootsRelocated = 0;

  const mutatorOf = (t: number): Mutator => {
    let m = mutators.get(t);
    if (m === undefined) {
      m = collector.newMutator();
      mutators.set(t, m);
    }
    return m;
  };

  /** Hands the native holes back to the mutators (before anything that may allocate or collect). */
  const syncCursorsIn = (): void => {
    for (const [t, m] of mutators) {
      const state = word(t, R_STATE);
      if (state === ST_DEAD || state === ST_NOGC) {
        collector.retireMutator(m);
        mutators.delete(t);
        continue;
      }
      const cursor = word(t, R_CURSOR);
      const hole = m.hole();
      if (cursor !== hole.cursor && cursor !== 0) m.setCursor(cursor);
    }
  };
  /** Gives every thread its (possibly new) hole, and relocated registers to the stopped threads. */
  const syncOut = (): void => {
    for (const [t, m] of mutators) {
      const hole = m.hole();
      setWord(t, R_CURSOR, hole.cursor);
      setWord(t, R_LIMIT, hole.limit);
    }
    if (stoppedValid) {
      for (const s of stoppedList) {
        if (word(s.index, R_STATE) === ST_STUCK) continue; // pinned: nothing moved
        REG_NAMES.forEach((_, k) => {
          if (s.registers.isKnown(k)) setWordBig(s.index, R_REGS + k, s.registers.exact[k]!);
        });
      }
    }
  };

  /** Runs `body` as a collection may: counts the frames and roots of each collection it made. */
  const collecting = <T>(body: () => T): T => {
    const before = collector.stats.collections;
    const result = body();
    if (collector.stats.collections !== before) {
      rwSetCollections(collector.stats.collections); // for a failure's JSON (runtime.c json_failure)
      framesScanned += scanner.framesScanned;
      rootsRelocated += scanner.rootsRelocated;
    }
    return result;
  };

  // ---- stuck threads: pin what their frames reference ----
  const pinCounts = new Map<number, number>();
  const pinnedByThread = new Map<number, number[]>();
  const stuckStart = (t: number): void => {
    modules.refreshBeforeNextLookup(refreshModules);
    const one = stoppedThread(t);
    const single = new StackRootScanner(registry, () => [one.stack], { modules });
    const bases = new Set<number>();
    single.scanRoots((b) => bases.add(b));
    const pinned: number[] = [];
    for (const b of bases) {
      const n = pinCounts.get(b) ?? 0;
      if (n === 0) {
        if (collector.isPinned(b)) continue; // pinned by someone else: leave it
        collector.pin(b);
      }
      pinCounts.set(b, n + 1);
      pinned.push(b);
    }
    pinnedByThread.set(t, pinned);
  };
  const stuckEnd = (t: number): void => {
    for (const b of pinnedByThread.get(t) ?? []) {
      const n = pinCounts.get(b)! - 1;
      if (n === 0) {
        pinCounts.delete(b);
        collector.unpin(b);
      } else pinCounts.set(b, n);
    }
    pinnedByThread.delete(t);
  };

  // ---- gc_init ----
  const registerMap = (address: number): void => {
    const path = rwInitPath() as string;
    const base = Number(rwInitBase() as number | bigint);
    const readable = readableBytesAt(address);
    if (readable < 8) throw new RootwalkError("GC", `gc_init(${hex(address)}): the map pointer does not point into readable memory`);
    const head = new Uint8Array(koffi.view(BigInt(address), 8));
    const format = blobFormat(head);
    const isV3 = format === "llvm-v3";
    if (format === undefined) {
      throw new RootwalkError(
        "GC",
        `gc_init(${hex(address)}): the map is neither an LLVM stack map v3 (first byte 3) nor a _GC_MAP_ v1 blob (first word 1); first bytes ${[...head].map((b) => b.toString(16).padStart(2, "0")).join(" ")}`,
      );
    }
    // Preferred: the file the map lives in (its .eh_frame makes pushed call arguments right).
    if (path !== "" && base !== 0) {
      const key = `${path}@${base}`;
      let elf: ElfFile | undefined;
      let bytes: Uint8Array | undefined;
      try {
        bytes = readFileSync(path);
        elf = ElfFile.parse(bytes);
      } catch {
        elf = undefined;
      }
      if (elf !== undefined && bytes !== undefined) {
        const offset = address - base;
        if (isV3) {
          const section = elf.section(".llvm_stackmaps");
          if (section !== undefined && offset >= section.addr && offset < section.addr + section.size) {
            if (!registeredFiles.has(key)) {
              registerFile(registry, bytes, { path, loadBias: base, format });
              registeredFiles.add(key);
              mapsRegistered++;
            }
            return;
          }
        } else {
          const symbol = elf.symbols().find((s) => s.name.startsWith(PLIMMIX_SYMBOL_PREFIX) && s.value === offset);
          if (symbol !== undefined) {
            if (!registeredFiles.has(key)) {
              registerFile(registry, bytes, { path, loadBias: base, format });
              registeredFiles.add(key);
              mapsRegistered++;
            }
            return;
          }
        }
      }
    }
    // Fallback: the live bytes (no .eh_frame: frames with pushed arguments may be wrong).
    const memory = new NativeMemory(address - (address % 8), Math.min(readable + (address % 8), 1 << 30) & ~7);
    if (isV3) {
      const length = llvmStackMapLength(memory, address, readable);
      const bytes = new Uint8Array(koffi.view(BigInt(address), length)).slice();
      registerStackMapBytes(registry, bytes, { name: `gc_init@${hex(address)}` });
    } else {
      const length = plimmixMapLength((a) => memory.readWordBigInt(a), address, readable);
      const bytes = new Uint8Array(koffi.view(BigInt(address), length)).slice();
      registerPlimmixBytes(registry, bytes, { name: `gc_init@${hex(address)}` });
    }
    mapsRegistered++;
  };

  const handle = (kind: number, thread: number, a: number, b: number): number => {
    stoppedValid = false;
    syncCursorsIn();
    let result = 0;
    switch (kind) {
      case JS_INIT:
        registerMap(a);
        break;
      case JS_COLLECT:
        collecting(() => collector.collect(options.stressEvery > 0 ? "stress" : "gc_collect"));
        break;
      case JS_ALLOC: {
        const m = mutatorOf(thread);
        result = collecting(() => m.alloc(a, b));
        break;
      }
      case JS_STUCK_START:
        stuckStart(thread);
        break;
      case JS_STUCK_END:
        stuckEnd(thread);
        break;
      case JS_ADD_GLOBAL:
        collector.addGlobalRoot(a);
        break;
      default:
        throw new Error(`unknown callback kind ${kind}`);
    }
    syncOut();
    stoppedValid = false;
    return result;
  };

  const callbackType = koffi.proto("int64_t rw_js_callback(int32_t kind, int32_t thread, uint64_t a, uint64_t b)");
  const callback = koffi.register(
    (kind: number, thread: number, a: number | bigint, b: number | bigint): number => {
      try {
        return handle(kind, thread, Number(a), Number(b));
      } catch (e) {
        const failure = describeFailure(e);
        rwSetFailure(failure.line);
        rwSetCollections(collector.stats.collections);
        try {
          writeSync(2, `rootwalk run: ${failure.line}\n`);
        } catch {
          // nothing more to do
        }
        // -1: the collector failed mid-collection (runtime.c adds why it stops: stale roots);
        // -2: the message above says everything (heap exhausted, an internal error, ...).
        return e instanceof CollectorError && !(e instanceof HeapExhaustedError) ? -1 : -2;
      }
    },
    koffi.pointer(callbackType),
  );

  rwSetup(callback, options.stressEvery, options.noGc ? 1 : 0, options.mainStackBytes ?? 0, options.threadStackBytes ?? 0, options.safepointTimeoutMs ?? DEFAULT_SAFEPOINT_TIMEOUT_MS, collector.poisons ? 1 : 0);

  /**
   * The threads a requested collection waits for. The timer runs only between callbacks (this
   * thread is busy during one), so a PARKED thread seen here is an initiator or a thread parked
   * for a collection that has not started: every RUNNING thread is then being waited for.
   */
  const collectionWaits = (): NativeRunProgress["waitingFor"] => {
    const count = rwThreadCount() as number;
    const running: number[] = [];
    let parked = false;
    for (let t = 0; t < count; t++) {
      const state = word(t, R_STATE);
      if (state === ST_PARKED) parked = true;
      else if (state === ST_RUNNING) running.push(t);
    }
    if (!parked) return [];
    const nowNs = process.hrtime.bigint(); // CLOCK_MONOTONIC, as runtime.c's left_ns
    modules.refreshBeforeNextLookup(refreshModules);
    return running.map((t) => {
      const ra = word(t, R_RA);
      return { thread: t, lastSafepoint: ra === 0 ? undefined : modules.moduleAt(ra)?.symbolize(ra), runningMs: Number(nowNs - wordBig(t, R_LEFT_NS)) / 1e6 };
    });
  };

  // rw_main runs on a native thread: this thread is free between callbacks, so a timer reports.
  const runStart = performance.now();
  const progressTimer =
    options.progress === undefined || options.progress.everyMs <= 0
      ? undefined
      : setInterval(
          (report: (p: NativeRunProgress) => void) =>
            report({
              elapsedMs: performance.now() - runStart,
              collections: collector.stats.collections,
              framesScanned,
              objectsMoved: collector.stats.totalEvacuatedObjects,
              waitingFor: collectionWaits(),
            }),
          options.progress.everyMs,
          options.progress.report,
        );
  if (options.stdoutToStderr === true && (rwStdoutToStderr() as number) < 0) throw new RootwalkError("GC", "cannot point the program's stdout at stderr (dup failed)");
  try {
    await new Promise<void>((resolvePromise, reject) => {
      (rwRunMain as unknown as { async: (...args: unknown[]) => void }).async(options.program, (err: unknown, status: unknown) => {
        if (err) reject(err);
        else if (status !== 0) reject(new RootwalkError("GC", `${options.program}: no function rw_main (the program must define i64 @rw_main())`));
        else resolvePromise();
      });
    });
  } finally {
    clearInterval(progressTimer);
    if (options.stdoutToStderr === true) rwStdoutRestore();
  }
  koffi.unregister(callback);

  const stats = collector.stats;
  if (options.svg !== undefined) {
    // The fast path bumped the threads' cursors after the last callback: take them in, so the map
    // draws what was allocated since the last collection as allocated, not as unused hole.
    for (const [t, m] of mutators) {
      const cursor = word(t, R_CURSOR);
      if (cursor !== 0 && cursor !== m.hole().cursor) m.setCursor(cursor);
    }
    writeFileSync(options.svg, renderHeapMapSvg(collector.heapMap(), { title: "rootwalk run: the heap after rw_main returned" }));
  }
  return {
    result: rwResultText() as string,
    collections: stats.collections,
    framesScanned,
    rootsRelocated,
    objectsMoved: stats.totalEvacuatedObjects,
    maxPauseMs: stats.maxPauseMs,
    verifyFailures: stats.totalVerifyFailures,
    verifyFailureDetails: stats.firstVerifyFailures,
    poisonedBytes: stats.totalPoisonedBytes,
    totalPauseMs: stats.totalPauseMs,
    mapsRegistered,
    threads: rwThreadCount() as number,
    scanMs,
    scanFrames,
    rootVisitMs,
    ...(scanReference !== undefined ? { scanReference: scanReference.totals } : {}),
    phasesMs: {
      stopTheWorld: stopMs,
      scan: stats.totalPhaseMs.scan - stopMs,
      traceEvacuate: stats.totalPhaseMs.traceEvacuate,
      sweep: stats.totalPhaseMs.sweep,
      verify: stats.totalPhaseMs.verify,
    },
  };
}

/** End of the mapping that holds `sp` (a thread's stack), from /proc/self/maps. */
function stackMappingEnd(sp: number): number {
  for (const line of readFileSync("/proc/self/maps", "utf8").split("\n")) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) /.exec(line);
    if (m !== null && sp >= parseInt(m[1]!, 16) && sp < parseInt(m[2]!, 16)) return parseInt(m[2]!, 16);
  }
  throw new RootwalkError("GC", `no mapping holds the stopped thread's SP ${hex(sp)}`);
}

/** Bytes readable from `address` to the end of its mapping (/proc/self/maps). */
function readableBytesAt(address: number): number {
  let text: string;
  try {
    text = readFileSync("/proc/self/maps", "utf8");
  } catch {
    return 0;
  }
  let end = 0;
  let at = address;
  // Adjacent readable mappings count as one range.
  for (;;) {
    let found = false;
    for (const line of text.split("\n")) {
      const m = /^([0-9a-f]+)-([0-9a-f]+) (\S+)/.exec(line);
      if (m === null) continue;
      const lo = parseInt(m[1]!, 16);
      const hi = parseInt(m[2]!, 16);
      if (at >= lo && at < hi && m[3]!.startsWith("r")) {
        end = hi;
        at = hi;
        found = true;
        break;
      }
    }
    if (!found) break;
  }
  return end === 0 ? 0 : end - address;
}

/** Length of the LLVM v3 stack map blob at `address` from its counts (bounded by `readable`). */
function llvmStackMapLength(memory: NativeMemory, address: number, readable: number): number {
  const u8 = (rel: number): number => {
    if (rel + 1 > readable) throw new RootwalkError("GC", `gc_init(${hex(address)}): the stack map runs past readable memory at +${rel}`);
    const a = address + rel;
    const w = memory.readWordBigInt(a - (a % 8));
    return Number((w >> BigInt((a % 8) * 8)) & 0xffn);
  };
  const u16 = (rel: number): number => u8(rel) | (u8(rel + 1) << 8);
  const u32 = (rel: number): number => (u16(rel) | (u16(rel + 2) << 16)) >>> 0;
  const functions = u32(4);
  const constants = u32(8);
  const records = u32(12);
  if (functions > 1_000_000 || constants > 10_000_000 || records > 10_000_000) {
    throw new RootwalkError("GC", `gc_init(${hex(address)}): implausible stack map counts (${functions} functions, ${constants} constants, ${records} records): a corrupted map?`);
  }
  let rel = 16 + functions * 24 + constants * 8;
  for (let r = 0; r < records; r++) {
    const locations = u16(rel + 14);
    rel += 16 + locations * 12;
    rel = (rel + 7) & ~7;
    const liveOuts = u16(rel + 2);
    rel += 4 + liveOuts * 4;
    rel = (rel + 7) & ~7;
    if (rel > readable) throw new RootwalkError("GC", `gc_init(${hex(address)}): the stack map runs past readable memory (record ${r})`);
  }
  return rel;
}

/** Global slots in the program's data (8 bytes each, through a view per access). */
class GlobalSlotMemory {
  private readonly views = new Map<number, Uint32Array>();
  private view(address: number): Uint32Array {
    let v = this.views.get(address);
    if (v === undefined) {
      v = new Uint32Array(koffi.view(BigInt(address), 8));
      this.views.set(address, v);
    }
    return v;
  }
  readWord(address: number): number {
    return readU64(this.view(address), 0);
  }
  writeWord(address: number, value: number): void {
    writeU64(this.view(address), 0, value);
  }
}
