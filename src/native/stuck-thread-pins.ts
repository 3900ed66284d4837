import type { ImmixCollector } from "../../gc/immix-collector.js";
import { StackRootScanner } from "../../walker/stack-root-scanner.js";
import type { SafepointRegistry } from "../safepoints/registry.js";
import type { ProcessModules } from "./process-modules.js";
import type { StoppedThreads } from "./stopped-threads.js";

/**
 * Stuck threads (runtime.c ST_STUCK: between thread_stuck_start and thread_stuck_end, never waited
 * for by a collection, so their frames are never scanned or updated): at `start` every object the
 * thread's frames reference is pinned, at `end` unpinned. Pins are counted per object (two stuck
 * threads may share one); an object someone else pinned is left alone.
 */
export class StuckThreadPins {
  private readonly pinCounts = new Map<number, number>();
  private readonly pinnedByThread = new Map<number, number[]>();

  constructor(
    private readonly collector: ImmixCollector,
    private readonly registry: SafepointRegistry,
    private readonly stopped: StoppedThreads,
    private readonly modules: ProcessModules,
    /** The run's `crossCheck` option, for the scanner of each stuck thread. */
    private readonly crossCheck: { crossCheck?: boolean } = {},
  ) {}

  start(t: number): void {
    this.modules.refreshBeforeNextLookup();
    const one = this.stopped.thread(t);
    const single = new StackRootScanner(this.registry, () => [one.stack], { modules: this.modules.modules, presizePairs: false, ...this.crossCheck });
    const bases = new Set<number>();
    single.walkStacks();
    single.visitRoots((b) => bases.add(b));
    const pinned: number[] = [];
    for (const b of bases) {
      const n = this.pinCounts.get(b) ?? 0;
      if (n === 0) {
        if (this.collector.isPinned(b)) continue; // pinned by someone else: leave it
        this.collector.pin(b);
      }
      this.pinCounts.set(b, n + 1);
      pinned.push(b);
    }
    this.pinnedByThread.set(t, pinned);
  }

  end(t: number): void {
    for (const b of this.pinnedByThread.get(t) ?? []) {
      const n = this.pinCounts.get(b)! - 1;
      if (n === 0) {
        this.pinCounts.delete(b);
        this.collector.unpin(b);
      } else this.pinCounts.set(b, n);
    }
    this.pinnedByThread.delete(t);
  }
}
