import koffi from "koffi";
import { readU64, readU64BigInt, writeU64, writeU64BigInt } from "../bytes/word-codec.js";
import { MAX_THREADS } from "./stack-limits.js";
import type { Architecture } from "../arch/architecture.js";
import { hostArchitecture } from "../arch/host-architecture.js";

/*
 * The native runtime's thread record (runtime.h `rw_thread`, array `rw_threads`), as TypeScript
 * reads it through a koffi view: RECORD_WORDS u64 words per thread, word indexes below, each
 * word read and written with src/bytes/word-codec.ts. runtime.h declares the same layout and the
 * same enums; test/native-runtime/runtime-layout.test.ts compiles runtime.h with a
 * _Static_assert for every value here, for x86-64 and for AArch64, and fails when the two drift
 * apart. The layout depends on the architecture this process runs on (src/arch/host-architecture.ts),
 * through its number N of callee-saved registers (x86-64 6, AArch64 12):
 *
 *   word   field        written by   meaning
 *   0      state        C            ThreadState (ST_*)
 *   1      sp           C            the managed caller's SP after the call into the runtime returns
 *   2      ra           C            the return address into the managed caller
 *   3..    regs         C, then TS   the N callee-saved registers at that call, in the architecture's
 *                                    order (src/arch/x86-64.ts, aarch64.ts); TS writes relocated values back
 *   3+N    stack_top    C            exclusive upper end of the thread's scanned stack
 *   4+N    boundary_ra  C            rw_managed_return: where the managed chunk was entered
 *   5+N    cursor       TS           allocation hole
 *   6+N    limit        TS
 *   7+N    stuck_sp     (unused by C; kept for diagnostics)
 *   8+N    left_ns      C            CLOCK_MONOTONIC when the thread last left the runtime
 */
export interface ThreadRecordLayout {
  /** N: how many callee-saved registers a record keeps. */
  readonly registerCount: number;
  readonly R_STACK_TOP: number;
  readonly R_BOUNDARY: number;
  readonly R_CURSOR: number;
  readonly R_LIMIT: number;
  readonly R_STUCK_SP: number;
  readonly R_LEFT_NS: number;
}

export const RECORD_WORDS = 32;
export const R_STATE = 0;
export const R_SP = 1;
export const R_RA = 2;
export const R_REGS = 3;

/** The record layout runtime.c has when built for `architecture`. */
export function threadRecordLayout(architecture: Architecture): ThreadRecordLayout {
  const registerCount = architecture.calleeSavedDwarf.length;
  const stackTop = R_REGS + registerCount;
  return {
    registerCount,
    R_STACK_TOP: stackTop,
    R_BOUNDARY: stackTop + 1,
    R_CURSOR: stackTop + 2,
    R_LIMIT: stackTop + 3,
    R_STUCK_SP: stackTop + 4,
    R_LEFT_NS: stackTop + 5,
  };
}

/** The architecture of this process, whose runtime the records belong to, and their layout. */
export const HOST_ARCHITECTURE = hostArchitecture();
export const HOST_RECORD = threadRecordLayout(HOST_ARCHITECTURE);
export const { R_STACK_TOP, R_BOUNDARY, R_CURSOR, R_LIMIT, R_STUCK_SP, R_LEFT_NS } = HOST_RECORD;
export { MAX_THREADS };

/** Thread states (runtime.c ST_*). */
export const ST_FREE = 0;
export const ST_RUNNING = 1;
export const ST_PARKED = 2;
export const ST_SAFE = 3;
export const ST_STUCK = 4;
export const ST_NOGC = 5;
export const ST_DEAD = 6;

/** The kinds of the runtime's one JavaScript callback (runtime.c JS_*). */
export const JS_INIT = 1;
export const JS_COLLECT = 2;
export const JS_ALLOC = 3;
export const JS_STUCK_START = 4;
export const JS_STUCK_END = 5;
export const JS_ADD_GLOBAL = 6;

/**
 * rw_threads as TypeScript reads and writes it: one koffi view of all MAX_THREADS records, word
 * `k` of thread `t` through the word codec. Exact (bigint) access for the registers and clocks,
 * whose values may exceed 2^53; plain numbers for addresses and states.
 */
export class ThreadRecords {
  private readonly words: Uint32Array;

  /** `address`: rw_threads_address(). */
  constructor(readonly address: bigint) {
    this.words = new Uint32Array(koffi.view(address, MAX_THREADS * RECORD_WORDS * 8));
  }

  word(t: number, k: number): number {
    return readU64(this.words, (t * RECORD_WORDS + k) * 2);
  }
  wordBigInt(t: number, k: number): bigint {
    return readU64BigInt(this.words, (t * RECORD_WORDS + k) * 2);
  }
  setWord(t: number, k: number, value: number): void {
    writeU64(this.words, (t * RECORD_WORDS + k) * 2, value);
  }
  setWordBigInt(t: number, k: number, value: bigint): void {
    writeU64BigInt(this.words, (t * RECORD_WORDS + k) * 2, value);
  }
  state(t: number): number {
    return this.word(t, R_STATE);
  }
  /** Where thread t's record starts in native memory (for C that reads it: scan-reference.ts). */
  recordAddress(t: number): bigint {
    return this.address + BigInt(t * RECORD_WORDS * 8);
  }
}
