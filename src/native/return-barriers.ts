import { readFileSync } from "node:fs";
import { FrameMarks } from "../../walker/frame-marks.js";
import type { ThreadStack } from "../../walker/stack-root-scanner.js";
import { RootwalkError } from "../errors.js";
import { BARRIERS_LOST, BARRIERS_PER_THREAD } from "./return-barrier-layout.js";
import type { RuntimeLibrary } from "./runtime-library.js";
import { HOST_ARCHITECTURE, ST_PARKED, type ThreadRecords } from "./thread-record.js";

/** A stopped thread as rearm reads it (src/native/stopped-threads.ts BarrierThread): its record index and stack. */
interface BarrierThread {
  index: number;
  stack: ThreadStack;
}

/** Set to 1: behave as if the process ran with a CET shadow stack (tests of the fallback). */
export const FORCE_SHADOW_STACK_VARIABLE = "ROOTWALK_FORCE_SHADOW_STACK";

/** Why return barriers are off in this process (a shadow stack, the architecture), or undefined. */
export function returnBarriersUnavailable(): string | undefined {
  if (process.env[FORCE_SHADOW_STACK_VARIABLE] === "1" || shadowStackEnabled())
    return `the process runs with an Intel CET shadow stack (${process.env[FORCE_SHADOW_STACK_VARIABLE] === "1" ? `${FORCE_SHADOW_STACK_VARIABLE}=1` : "/proc/self/status x86_Thread_features: shstk"}), which rejects a patched return address`;
  if (HOST_ARCHITECTURE.name !== "x86-64") return `return barriers are implemented for x86-64 only (this is ${HOST_ARCHITECTURE.name})`;
  return undefined;
}

/** Linux: `x86_Thread_features: shstk ...` in /proc/self/status when this thread's shadow stack is on. */
function shadowStackEnabled(): boolean {
  try {
    return /^x86_Thread_features:.*\bshstk\b/m.test(readFileSync("/proc/self/status", "utf8"));
  } catch {
    return false;
  }
}

/**
 * The TypeScript side of the return barriers (runtime-return-barrier.c; issue 33), under
 * --generational: after every collection, each PARKED thread's walked frames at depths 1, 2, 4, ...
 * get a barrier (the trampoline's address in the return-address slot of that frame, written by C
 * at the end of the stop), keeping the barriers still armed below the walked region; at the next
 * stop the innermost armed barrier is the thread's skip point: a nursery collection's scan stops
 * at the frame it returns into and counts the frames below it as skipped.
 *
 * Invariants: C restores every armed slot as the stop begins (so every reader of the stacks here
 * sees them pristine) and re-arms at its end; this class only chooses. A frame is marked only if
 * its return address is a safepoint and the stack word just below its SP holds that return
 * address (x86-64: the slot is SP - 8). SAFE, STUCK and NOGC threads get no barriers (C skips
 * them; their next walk is a full one). A thread whose entry was found stale (longjmp) is walked
 * in full once (RW_BARRIERS_LOST).
 */
export class ReturnBarriers {
  private readonly kept;
  private readonly set;
  private readonly entry;
  private readonly flags;
  private readonly clearLost;
  private readonly hitsFn;
  private readonly staleFn;
  private readonly marks: FrameMarks[] = [];
  private readonly slots = new BigUint64Array(BARRIERS_PER_THREAD);
  private readonly framesBelow = new BigUint64Array(BARRIERS_PER_THREAD);
  /** Barriers this process chose (each armed at the end of its stop). */
  armed = 0;

  constructor(runtime: RuntimeLibrary) {
    this.kept = runtime.bind("uint32_t rw_return_barriers_kept(int32_t t)");
    this.set = runtime.bind("int32_t rw_return_barriers_set(int32_t t, uint32_t keep, uint64_t *slots, uint64_t *framesBelow, uint32_t count)");
    this.entry = runtime.bind("uint64_t rw_return_barriers_entry(int32_t t, uint32_t k, int32_t field)");
    this.flags = runtime.bind("uint32_t rw_return_barriers_flags(int32_t t)");
    this.clearLost = runtime.bind("void rw_return_barriers_clear_lost(int32_t t)");
    this.hitsFn = runtime.bind("uint64_t rw_return_barrier_hits(void)");
    this.staleFn = runtime.bind("uint64_t rw_return_barrier_stale(void)");
  }

  /** Returns through a barrier so far (all threads). */
  hits(): number {
    return Number(this.hitsFn() as bigint | number);
  }
  /** Barriers found stale (longjmp over armed frames, an overwritten slot). */
  stale(): number {
    return Number(this.staleFn() as bigint | number);
  }

  /**
   * Thread t was read at a stop: its skip point (the innermost barrier kept when the stop began,
   * unless one was lost) and the marks its next collection scan fills. x86-64: the barrier's slot
   * is the word just below the SP of the frame it returns into.
   */
  describe(t: number, stack: ThreadStack): void {
    const marks = (stack.marks = this.marks[t] ??= new FrameMarks());
    marks.reset();
    const kept = this.kept(t) as number;
    if (kept === 0 || ((this.flags(t) as number) & BARRIERS_LOST) !== 0) {
      stack.skipFromSp = undefined;
      stack.skippedFrames = undefined;
      return;
    }
    stack.skipFromSp = Number(this.entry(t, kept - 1, 0) as number | bigint) + HOST_ARCHITECTURE.callPushBytes;
    stack.skippedFrames = Number(this.entry(t, kept - 1, 2) as number | bigint);
  }

  /**
   * After a collection (its own scan filled each thread's marks): the barriers each PARKED thread
   * gets at the end of this stop, outermost first: the entries kept below its walked region (a
   * nursery walk that stopped at them), then its marks. At most BARRIERS_PER_THREAD: when there
   * are more, the kept entries are thinned (every other one, from the inner end of the kept ones,
   * never the outermost), so that a stack that keeps growing between collections still gets its
   * barriers near the top, where the next walk stops.
   */
  rearm(threads: readonly BarrierThread[], records: ThreadRecords): void {
    for (const s of threads) {
      const t = s.index;
      const marks = s.stack.marks;
      if (records.state(t) !== ST_PARKED || marks === undefined || !marks.filled) continue;
      const kept = marks.skipped > 0 ? (this.kept(t) as number) : 0;
      if (marks.skipped === 0) this.clearLost(t);
      const fresh = this.chooseMarks(s, marks);
      let count = 0;
      for (let k = 0; k < kept; k++) {
        if (!keepsEntry(k, kept, BARRIERS_PER_THREAD - fresh.length)) continue;
        this.slots[count] = BigInt(this.entry(t, k, 0) as number | bigint);
        this.framesBelow[count++] = BigInt(this.entry(t, k, 2) as number | bigint);
      }
      for (const m of fresh) {
        this.slots[count] = BigInt(marks.sps[m]! - HOST_ARCHITECTURE.callPushBytes);
        this.framesBelow[count++] = BigInt(marks.frames - marks.indexes[m]! + marks.skipped);
      }
      if ((this.set(t, 0, this.slots, this.framesBelow, count) as number) !== 0)
        throw new RootwalkError("GC", `return barriers: the runtime refused thread #${t}'s ${count} barriers (slots out of order or too many)`);
      this.armed += fresh.length;
    }
  }

  /**
   * The marks whose slot holds their return address (x86-64: the word below the marked frame's
   * SP), outermost first, at most BARRIERS_PER_THREAD - 1 (the innermost ones kept).
   */
  private chooseMarks(s: BarrierThread, marks: FrameMarks): number[] {
    const push = HOST_ARCHITECTURE.callPushBytes;
    const chosen: number[] = [];
    for (let m = 0; m < marks.count && chosen.length < BARRIERS_PER_THREAD - 1; m++) {
      if (push === 0 || s.stack.memory.readWord(marks.sps[m]! - push) !== marks.ras[m]) continue;
      chosen.push(m);
    }
    return chosen.reverse();
  }
}

/**
 * Whether kept entry k (0 the outermost) of `kept` stays when only `room` fit: all when they fit;
 * else the outermost, and every 2^j-th one from the inner end, thinning until they fit.
 */
function keepsEntry(k: number, kept: number, room: number): boolean {
  if (kept <= room) return true;
  if (k === 0) return room > 0;
  let stride = 2;
  while (Math.ceil((kept - 1) / stride) + 1 > room) stride *= 2;
  return (kept - 1 - k) % stride === 0 && Math.floor((kept - 1 - k) / stride) < room - 1;
}
