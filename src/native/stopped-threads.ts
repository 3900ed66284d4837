import { RegisterContext } from "../../walker/register-context.js";
import type { ThreadStack } from "../../walker/stack-root-scanner.js";
import type { ManagedChunk } from "../../walker/unwinder.js";
import { RootwalkError } from "../errors.js";
import type { WordMemory } from "../memory/memory.js";
import { NativeMemory } from "./native-memory.js";
import type { ProcessModules } from "./process-modules.js";
import { type RuntimeLibrary, threadCount } from "./runtime-library.js";
import type { ReturnBarriers } from "./return-barriers.js";
import type { ThreadStacks } from "./thread-stacks.js";
import {
  HOST_ARCHITECTURE,
  HOST_RECORD,
  R_BOUNDARY,
  R_RA,
  R_REGS,
  R_SP,
  R_STACK_TOP,
  ST_PARKED,
  ST_SAFE,
  ST_STUCK,
  type ThreadRecords,
} from "./thread-record.js";

/** Bytes below a stopped thread's SP that its stack view includes (the red zone). */
export const BELOW_SP_BYTES = 256;

/** One stopped thread as the scanner sees it: its record's registers, its one chunk, its stack. */
export interface StoppedThread {
  index: number;
  stack: ThreadStack & { memory: WordMemory; chunks: ManagedChunk[]; label: string };
  chunk: ManagedChunk;
  registers: RegisterContext;
}

/**
 * The stopped threads of the current callback, read from their records once per callback (the
 * scanner asks more than once: each scan, updateRoots) until `invalidate`. Each thread index keeps
 * one StoppedThread (register context, chunk, stack) refilled at every stop: a stop allocates
 * only the one view of each stopped thread's stack, in place in the scan memory (thread-stacks.ts).
 *
 * How a thread is walked (NativeRunOptions.walk): "chunks", from the stop to the boundary where it
 * entered managed code; "unwind", to the end of the stack region that holds its SP.
 */
export class StoppedThreads {
  private readonly byIndex: StoppedThread[] = [];
  private readonly list: StoppedThread[] = [];
  private readonly stacks: ThreadStack[] = [];
  private valid = false;
  /** Time the last `stacks` call took to read the records, ms (0 when it answered from the cache). */
  lastReadMs = 0;

  constructor(
    private readonly runtime: RuntimeLibrary,
    private readonly records: ThreadRecords,
    private readonly modules: ProcessModules,
    private readonly placed: ThreadStacks,
    private readonly unwindWhole: boolean,
    /**
     * See each stack through a koffi view, as a stack outside the scan memory (the bench's measured
     * alternative: the scan kernel then copies it into the scan memory at every scan).
     */
    private readonly copyStacks = false,
    /** Return barriers (--generational): each thread read gets its skip point and frame marks. */
    private readonly barriers?: ReturnBarriers,
  ) {}

  /** Forgets the threads read (a callback starts or ends: the threads may run again). */
  invalidate(): void {
    this.valid = false;
  }

  /** The stopped threads (PARKED, SAFE or STUCK), read now unless read since `invalidate`. */
  threads(): readonly StoppedThread[] {
    this.stackList();
    return this.list;
  }

  /** The stopped threads' stacks, in the order of `threads()` (the scanner's stacks provider). */
  stackList(): readonly ThreadStack[] {
    if (this.valid) {
      this.lastReadMs = 0;
      return this.stacks;
    }
    const start = performance.now();
    this.list.length = 0;
    this.stacks.length = 0;
    this.modules.refreshBeforeNextLookup();
    const count = threadCount(this.runtime);
    for (let t = 0; t < count; t++) {
      const state = this.records.state(t);
      if (state !== ST_PARKED && state !== ST_SAFE && state !== ST_STUCK) continue;
      const s = this.thread(t);
      this.list.push(s);
      this.stacks.push(s.stack);
    }
    this.valid = true;
    this.lastReadMs = performance.now() - start;
    return this.stacks;
  }

  /** The threads read since `invalidate`, or none (never reads the records). */
  threadsIfRead(): readonly StoppedThread[] {
    return this.valid ? this.list : [];
  }

  /** Thread t's record as it is now, in its reused StoppedThread (its stack seen through a new view). */
  thread(t: number): StoppedThread {
    const records = this.records;
    const sp = records.word(t, R_SP);
    const ra = records.word(t, R_RA);
    if (sp === 0 || ra === 0) throw new RootwalkError("GC", `thread #${t} is stopped without recorded frames`);
    const s = (this.byIndex[t] ??= newStoppedThread(t));
    for (let k = 0; k < HOST_RECORD.registerCount; k++) s.registers.load(k, records.wordBigInt(t, R_REGS + k));
    const low = sp - BELOW_SP_BYTES;
    const chunk = s.chunk;
    chunk.sp = sp;
    chunk.ra = ra;
    if (this.unwindWhole) {
      chunk.boundaryRa = undefined;
      chunk.stackTop = undefined;
      s.stack.memory = this.stackMemory(low, this.placed.stackEnd(sp, s.stack.label) - low, s.stack.label);
    } else {
      const stackTop = records.word(t, R_STACK_TOP);
      chunk.boundaryRa = records.word(t, R_BOUNDARY);
      chunk.stackTop = stackTop;
      s.stack.memory = this.stackMemory(low, stackTop - low, s.stack.label);
    }
    this.barriers?.describe(t, s.stack);
    return s;
  }

  /** `[low, end of the stack holding sp)`, in place: a whole stack, to its outermost frame. */
  stackMemoryToEnd(low: number, sp: number, label: string): WordMemory {
    return this.placed.memoryAt(low, this.placed.stackEnd(sp, label) - low, label);
  }

  /** `[low, low + sizeBytes)` of a stack: in place in the scan memory, or through a koffi view (copyStacks). */
  private stackMemory(low: number, sizeBytes: number, label: string): WordMemory {
    const memory = this.placed.memoryAt(low, sizeBytes, label);
    return this.copyStacks ? new NativeMemory(low, sizeBytes) : memory;
  }

  /** Writes the (relocated) registers of every thread read back to its record, except stuck ones. */
  writeBackRegisters(): void {
    for (const s of this.threadsIfRead()) {
      if (this.records.state(s.index) === ST_STUCK) continue; // pinned: nothing moved
      for (let k = 0; k < HOST_RECORD.registerCount; k++) {
        if (s.registers.isKnown(k)) this.records.setWordBigInt(s.index, R_REGS + k, s.registers.exact[k]!);
      }
    }
  }
}

function newStoppedThread(t: number): StoppedThread {
  const registers = new RegisterContext(HOST_ARCHITECTURE);
  const chunk: ManagedChunk = { sp: 0, ra: 0, registers, boundaryRa: undefined, stackTop: undefined };
  return { index: t, registers, chunk, stack: { memory: undefined as unknown as WordMemory, chunks: [chunk], label: `thread #${t}` } };
}
