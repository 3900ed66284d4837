import { writeSync } from "node:fs";
import koffi from "koffi";
import { CollectorError, HeapExhaustedError, RootNotObjectError } from "../../gc/collector-error.js";
import type { ImmixCollector } from "../../gc/immix-collector.js";
import type { StackRootScanner } from "../../walker/stack-root-scanner.js";
import { describeFailure } from "../errors.js";
import type { MapRegistration } from "./map-registration.js";
import type { MutatorHoles } from "./mutator-holes.js";
import type { RuntimeLibrary } from "./runtime-library.js";
import type { StoppedThreads } from "./stopped-threads.js";
import type { ReturnBarriers } from "./return-barriers.js";
import type { StuckThreadPins } from "./stuck-thread-pins.js";
import type { ThreadRecords } from "./thread-record.js";
import { JS_ADD_GLOBAL, JS_ALLOC, JS_COLLECT, JS_INIT, JS_STUCK_END, JS_STUCK_START } from "./thread-record.js";

/** What the runtime's callback acts on (each part one job; runNativeProgram builds them). */
export interface CallbackParts {
  runtime: RuntimeLibrary;
  collector: ImmixCollector;
  scanner: StackRootScanner;
  stopped: StoppedThreads;
  holes: MutatorHoles;
  maps: MapRegistration;
  pins: StuckThreadPins;
  /** Collections made by gc_collect say "stress" when every Nth safepoint collects. */
  stress: boolean;
  /** Return barriers (--generational, unless off or unavailable): re-armed after each collection. */
  barriers: ReturnBarriers | undefined;
  records: ThreadRecords;
}

/**
 * The runtime's one JavaScript callback (runtime.c rw_js_callback, kinds JS_*). Every call runs
 * with the world stopped, on Node's main thread: it takes the threads' allocation cursors in, acts,
 * then gives the holes and the relocated registers back. It counts the frames and roots of each
 * collection it made.
 *
 * A callback that throws would let native code continue with stale roots: `register`'s function
 * catches everything, writes the message to stderr and returns -1 or -2, on which runtime.c exits
 * the process (code 3).
 */
export class NativeCallbacks {
  /** Frames the collections' own scans walked, and left out (return barriers). */
  framesScanned = 0;
  framesSkipped = 0;
  rootsRelocated = 0;

  constructor(private readonly parts: CallbackParts) {}

  dispatch(kind: number, thread: number, a: number, b: number): number {
    const { collector, stopped, holes, maps, pins } = this.parts;
    stopped.invalidate();
    holes.syncIn();
    let result = 0;
    switch (kind) {
      case JS_INIT:
        maps.register(a);
        // The scan layout and the kernel now, not in the first collection's scan.
        this.parts.scanner.prepareScans();
        break;
      case JS_COLLECT:
        this.collecting(() => collector.collect(this.parts.stress ? "stress" : "gc_collect"));
        break;
      case JS_ALLOC: {
        const m = holes.of(thread);
        result = this.collecting(() => m.alloc(a, b));
        break;
      }
      case JS_STUCK_START:
        pins.start(thread);
        break;
      case JS_STUCK_END:
        pins.end(thread);
        break;
      case JS_ADD_GLOBAL:
        collector.addGlobalRoot(a);
        break;
      default:
        throw new Error(`unknown callback kind ${kind}`);
    }
    holes.syncOut();
    stopped.writeBackRegisters();
    stopped.invalidate();
    return result;
  }

  /** The callback as a native function pointer for rw_setup; unregister it after rw_main returned. */
  register(): unknown {
    const callbackType = koffi.proto("int64_t rw_js_callback(int32_t kind, int32_t thread, uint64_t a, uint64_t b)");
    return koffi.register((kind: number, thread: number, a: number | bigint, b: number | bigint): number => {
      try {
        return this.dispatch(kind, thread, Number(a), Number(b));
      } catch (e) {
        return this.fail(e);
      }
    }, koffi.pointer(callbackType));
  }

  /**
   * Runs `body` as a collection may: counts the frames and roots of each collection it made and,
   * after the last, chooses the threads' return barriers (armed by C as the stop ends).
   */
  private collecting<T>(body: () => T): T {
    const { collector, scanner, runtime, barriers, stopped, records } = this.parts;
    const before = collector.stats.collections;
    const result = body();
    if (collector.stats.collections !== before) {
      runtime.rwSetCollections(collector.stats.collections); // for a failure's JSON (runtime.c json_failure)
      this.framesScanned += scanner.lastCollectionScan.frames;
      this.framesSkipped += scanner.lastCollectionScan.skipped;
      this.rootsRelocated += scanner.rootsRelocated;
      barriers?.rearm(stopped.threadsIfRead(), records);
    }
    return result;
  }

  private fail(e: unknown): number {
    const { runtime, collector } = this.parts;
    const failure = describeFailure(e);
    runtime.rwSetFailure(failure.line);
    runtime.rwSetCollections(collector.stats.collections);
    try {
      writeSync(2, `rootwalk run: ${failure.line}\n`);
    } catch {
      // nothing more to do
    }
    // -1: the collector failed mid-collection (runtime.c adds why it stops: stale roots);
    // -2: the message above says everything (heap exhausted, a refused root, an internal error, ...).
    return e instanceof CollectorError && !(e instanceof HeapExhaustedError) && !(e instanceof RootNotObjectError) ? -1 : -2;
  }
}
