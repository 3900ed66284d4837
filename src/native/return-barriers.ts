import { readFileSync } from "node:fs";
import { FrameMarks } from "../../walker/frame-marks.js";
import type { ThreadStack } from "../../walker/stack-root-scanner.js";
import { RootwalkError } from "../errors.js";
import koffi from "koffi";
import { readU64 } from "../bytes/word-codec.js";
import {
  BARRIER_ENTRY_BYTES,
  BARRIER_FRAMES_BELOW_OFFSET,
  BARRIER_SLOT_OFFSET,
  BARRIERS_BYTES,
  BARRIERS_ENTRIES_OFFSET,
  BARRIERS_FLAGS_OFFSET,
  BARRIERS_LOST,
  BARRIERS_PER_THREAD,
} from "./return-barrier-layout.js";
import { MAX_THREADS } from "./stack-limits.js";
import type { RuntimeLibrary } from "./runtime-library.js";
import { ST_PARKED, type ThreadRecords } from "./thread-record.js";

/** A stopped thread as rearm reads it (src/native/stopped-threads.ts StoppedThread): its record index and stack. */
interface BarrierThread {
  index: number;
  stack: ThreadStack;
}

/** Set to 1: behave as if the process ran with a CET shadow stack (tests of the fallback). */
export const FORCE_SHADOW_STACK_VARIABLE = "ROOTWALK_FORCE_SHADOW_STACK";

/** Why return barriers are off in this process (a shadow stack), or undefined. */
export function returnBarriersUnavailable(): string | undefined {
  if (process.env[FORCE_SHADOW_STACK_VARIABLE] === "1" || shadowStackEnabled())
    return `the process runs with an Intel CET shadow stack (${process.env[FORCE_SHADOW_STACK_VARIABLE] === "1" ? `${FORCE_SHADOW_STACK_VARIABLE}=1` : "/proc/self/status x86_Thread_features: shstk"}), which rejects a patched return address`;
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
 * sees them pristine) and re-arms at its end; this class only chooses. A frame gets a barrier
 * only if the walk walked it, its return address is a safepoint and the stack slot it was read
 * from (walker/frame-marks.ts: x86-64 SP - 8, AArch64 where the callee saved x30) still holds it.
 * SAFE, STUCK and NOGC threads get no barriers (C skips them; their next walk is a full one). A
 * thread whose entry was found stale (longjmp) is walked in full once (RW_BARRIERS_LOST).
 */
export class ReturnBarriers {
  private readonly kept;
  private readonly set;
  /** rw_return_barriers (runtime.h), all MAX_THREADS elements, as u32 words. */
  private readonly table: Uint32Array;
  private readonly clearLost;
  private readonly hitsFn;
  private readonly staleFn;
  private readonly marks: FrameMarks[] = [];
  /**
   * Per thread, the SP of the frame each of its entries returns into, index for index with C's
   * entries (set together by rearm; C only drops entries from the inner end): the skip point's SP
   * (x86-64: slot + 8; AArch64: not derivable from the slot, which lies in the callee's frame).
   */
  private readonly entrySps: Float64Array[] = [];
  private readonly slots = new BigUint64Array(BARRIERS_PER_THREAD);
  private readonly framesBelow = new BigUint64Array(BARRIERS_PER_THREAD);
  /** Barriers this process chose (each armed at the end of its stop). */
  armed = 0;

  constructor(runtime: RuntimeLibrary) {
    this.kept = runtime.bind("uint32_t rw_return_barriers_kept(int32_t t)");
    this.set = runtime.bind("int32_t rw_return_barriers_set(int32_t t, uint32_t keep, uint64_t *slots, uint64_t *framesBelow, uint32_t count)");
    const address = runtime.bind("void *rw_return_barriers_address(void)")() as unknown;
    this.table = new Uint32Array(koffi.view(address as bigint, MAX_THREADS * BARRIERS_BYTES));
    this.clearLost = runtime.bind("void rw_return_barriers_clear_lost(int32_t t)");
    this.hitsFn = runtime.bind("uint64_t rw_return_barrier_hits(void)");
    this.staleFn = runtime.bind("uint64_t rw_return_barrier_stale(void)");
  }

  /** Field `offset` (BARRIER_*_OFFSET) of thread t's entry k. */
  private entry(t: number, k: number, offset: number): number {
    return readU64(this.table, (t * BARRIERS_BYTES + BARRIERS_ENTRIES_OFFSET + k * BARRIER_ENTRY_BYTES + offset) >>> 2);
  }

  private flags(t: number): number {
    return this.table[(t * BARRIERS_BYTES + BARRIERS_FLAGS_OFFSET) >>> 2]!;
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
   * Thread t was read at a stop: its skip point (the SP of the frame its innermost barrier kept
   * when the stop began returns into, unless one was lost) and the marks its next collection scan fills.
   */
  describe(t: number, stack: ThreadStack): void {
    const marks = (stack.marks = this.marks[t] ??= new FrameMarks());
    marks.reset();
    const kept = this.kept(t) as number;
    const sp = kept === 0 ? undefined : this.entrySps[t]?.[kept - 1];
    if (sp === undefined || (this.flags(t) & BARRIERS_LOST) !== 0) {
      stack.skipFromSp = undefined;
      stack.skippedFrames = undefined;
      return;
    }
    stack.skipFromSp = sp;
    stack.skippedFrames = this.entry(t, kept - 1, BARRIER_FRAMES_BELOW_OFFSET);
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
      const sps = (this.entrySps[t] ??= new Float64Array(BARRIERS_PER_THREAD));
      let count = 0;
      for (let k = 0; k < kept; k++) {
        if (!keepsEntry(k, kept, BARRIERS_PER_THREAD - fresh.length)) continue;
        sps[count] = sps[k]!;
        this.slots[count] = BigInt(this.entry(t, k, BARRIER_SLOT_OFFSET));
        this.framesBelow[count++] = BigInt(this.entry(t, k, BARRIER_FRAMES_BELOW_OFFSET));
      }
      for (const m of fresh) {
        sps[count] = marks.sps[m]!;
        this.slots[count] = BigInt(marks.slots[m]!);
        this.framesBelow[count++] = BigInt(marks.frames - marks.indexes[m]! + marks.skipped);
      }
      if ((this.set(t, 0, this.slots, this.framesBelow, count) as number) !== 0)
        throw new RootwalkError("GC", `return barriers: the runtime refused thread #${t}'s ${count} barriers (slots out of order or too many)`);
      this.armed += fresh.length;
    }
  }

  /**
   * The marks of frames the walk walked (a mark is taken at the callee: the frame at the walk's
   * end, a skip point or a boundary, may be marked too) whose slot still holds their return
   * address, outermost first, at most BARRIERS_PER_THREAD - 1 (the innermost ones kept).
   */
  private chooseMarks(s: BarrierThread, marks: FrameMarks): number[] {
    const chosen: number[] = [];
    for (let m = 0; m < marks.count && chosen.length < BARRIERS_PER_THREAD - 1; m++) {
      if (marks.indexes[m]! >= marks.frames || s.stack.memory.readWord(marks.slots[m]!) !== marks.ras[m]) continue;
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
