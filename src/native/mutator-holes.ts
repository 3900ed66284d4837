import type { ImmixCollector } from "../../gc/immix-collector.js";
import type { Mutator } from "../../gc/immix-allocator.js";
import { R_CURSOR, R_LIMIT, R_STATE, ST_DEAD, ST_NOGC, type ThreadRecords } from "./thread-record.js";

/**
 * One collector Mutator per native thread that allocated, and its allocation hole shared with
 * the thread's record: the C fast path bumps the record's cursor between callbacks; the collector
 * owns the hole during one.
 */
export class MutatorHoles {
  readonly mutators = new Map<number, Mutator>();

  constructor(
    private readonly collector: ImmixCollector,
    private readonly records: ThreadRecords,
  ) {}

  /** Thread t's mutator, made at its first allocation. */
  of(t: number): Mutator {
    let m = this.mutators.get(t);
    if (m === undefined) {
      m = this.collector.newMutator();
      this.mutators.set(t, m);
    }
    return m;
  }

  /** Takes the native cursors in (before anything that may allocate or collect); retires dead threads. */
  syncIn(): void {
    for (const [t, m] of this.mutators) {
      const state = this.records.word(t, R_STATE);
      if (state === ST_DEAD || state === ST_NOGC) {
        this.collector.retireMutator(m);
        this.mutators.delete(t);
        continue;
      }
      this.takeCursor(t, m);
    }
  }

  /** Gives every thread its (possibly new) hole. */
  syncOut(): void {
    for (const [t, m] of this.mutators) {
      const hole = m.hole();
      this.records.setWord(t, R_CURSOR, hole.cursor);
      this.records.setWord(t, R_LIMIT, hole.limit);
    }
  }

  /**
   * After rw_main returned: the fast path bumped the cursors after the last callback; take them
   * in so the heap map draws what was allocated since the last collection as allocated.
   */
  takeFinalCursors(): void {
    for (const [t, m] of this.mutators) this.takeCursor(t, m);
  }

  private takeCursor(t: number, m: Mutator): void {
    const cursor = this.records.word(t, R_CURSOR);
    if (cursor !== 0 && cursor !== m.hole().cursor) m.setCursor(cursor);
  }
}
