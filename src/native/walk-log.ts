import { isCollectionScan } from "../../gc/root-scanning.js";
import { appendFileSync } from "node:fs";
import { type FrameReportJson, type WalkReport, frameReportJson, reportWalk } from "../../walker/frame-report.js";
import { RegisterContext } from "../../walker/register-context.js";
import type { RootScanEvent, RootScanObserver } from "../../walker/stack-root-scanner.js";
import { Unwinder } from "../../walker/unwinder.js";
import type { SafepointRegistry } from "../safepoints/registry.js";
import type { ProcessModules } from "./process-modules.js";
import type { RuntimeLibrary } from "./runtime-library.js";
import { BELOW_SP_BYTES, type StoppedThread, type StoppedThreads } from "./stopped-threads.js";
import { HOST_ARCHITECTURE, R_REGS, type ThreadRecords } from "./thread-record.js";

/** The environment variable that turns the walk log on (docs/cli.md "rootwalk run"). */
export const WALK_LOG_VARIABLE = "ROOTWALK_WALK_LOG";

/**
 * ROOTWALK_WALK_LOG=FILE (a debugging aid, docs/cli.md "rootwalk run"), attached to the root scanner: after each
 * collection's root scan, every stopped thread's whole stack is walked as `--walk unwind` does
 * and each frame (pc, SP, CFA, callee-saved registers, roots and their values) appended to FILE
 * as one JSON line, with, as `scan`, the walk the scanner itself made (the same stack, chunks and
 * strict mode: with `--walk chunks` the chunk walk, ending at the boundary); then
 * rw_walk_logged(n) is called so that a debugger stopped there sees the same stop.
 */
export class WalkLog implements RootScanObserver {
  private collections = 0;
  private readonly rwWalkLogged;

  constructor(
    private readonly path: string,
    runtime: RuntimeLibrary,
    private readonly registry: SafepointRegistry,
    private readonly stopped: StoppedThreads,
    private readonly records: ThreadRecords,
    private readonly modules: ProcessModules,
  ) {
    this.rwWalkLogged = runtime.bind("void rw_walk_logged(uint64_t collection)");
  }

  /** The walk log the environment asks for, or undefined. */
  static fromEnvironment(
    runtime: RuntimeLibrary,
    registry: SafepointRegistry,
    stopped: StoppedThreads,
    records: ThreadRecords,
    modules: ProcessModules,
  ): WalkLog | undefined {
    const path = process.env[WALK_LOG_VARIABLE];
    return path === undefined ? undefined : new WalkLog(path, runtime, registry, stopped, records, modules);
  }

  scanned(scan: RootScanEvent): void {
    if (!isCollectionScan(scan.reason)) return;
    // framesScanned / framesSkipped: what the collection's own scan walked and left out (return barriers).
    const threads = this.stopped.threads().map((s, k) => ({
      thread: s.index,
      framesScanned: scan.threadFrames[k] ?? 0,
      framesSkipped: scan.threadSkipped[k] ?? 0,
      ...this.walksOf(s),
    }));
    // Addresses and registers as hex strings (frameReportJson): 64-bit values, exact.
    this.collections++;
    appendFileSync(
      this.path,
      `${JSON.stringify({ collection: this.collections, kind: scan.reason === "nursery-collection" ? "nursery" : "full", framesScanned: scan.frames, framesSkipped: scan.framesSkipped, threads })}\n`,
    );
    this.rwWalkLogged(this.collections);
  }

  private walksOf(s: StoppedThread): LoggedWalk & { scan: LoggedWalk } {
    const snapshot = this.registry.snapshot();
    const modules = this.modules.modules;
    const chunk = s.stack.chunks[0]!;
    const low = chunk.sp - BELOW_SP_BYTES;
    const memory = this.stopped.stackMemoryToEnd(low, chunk.sp, s.stack.label);
    const names = HOST_ARCHITECTURE.calleeSavedNames;
    const registers = RegisterContext.from(Object.fromEntries(names.map((name, k) => [name, this.records.wordBigInt(s.index, R_REGS + k)])), HOST_ARCHITECTURE);
    const whole = reportWalk(new Unwinder(snapshot, memory, { mode: "lenient", modules, maxDepth: 100_000 }), memory, {
      sp: chunk.sp,
      ra: chunk.ra,
      registers,
    });
    const scan = reportWalk(new Unwinder(snapshot, s.stack.memory, { mode: "strict", modules }), s.stack.memory, s.stack.chunks);
    return { ...loggedWalk(whole), scan: loggedWalk(scan) };
  }
}

/** One walk as the log writes it: its frames as JSON (hex strings), then how it ended. */
type LoggedWalk = Omit<WalkReport, "frames"> & { frames: FrameReportJson[] };

function loggedWalk(w: WalkReport): LoggedWalk {
  return { ...w, frames: w.frames.map(frameReportJson) };
}
