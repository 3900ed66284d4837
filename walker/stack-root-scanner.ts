import type { RootScanner } from "../gc/root-scanning.js";
import type { Memory } from "../src/memory/memory.js";
import type { SafepointRegistry } from "../src/safepoints/registry.js";
import { crossCheckScan, crossCheckRequested } from "./scan-cross-check.js";
import { scanStackRoots } from "./fast-scan.js";
import { RootPairs } from "./frame-roots.js";
import { relocateRootPairs } from "./relocate-roots.js";
import { type ManagedChunk, Unwinder, type UnwinderOptions } from "./unwinder.js";

/** One thread's stack as the collector sees it: its managed chunks, innermost first. */
export interface ThreadStack {
  memory: Memory;
  chunks: readonly ManagedChunk[];
}

/**
 * The collector's RootScanner over thread stacks: scanRoots walks every thread strictly (an
 * unaccountable frame is an error, never a skipped root) with the fast scan loop
 * (walker/fast-scan.ts) and remembers each root's slot;
 * updateRoots rewrites them after the collector moved objects.
 */
export class StackRootScanner implements RootScanner {
  private readonly pairsByThread: RootPairs[] = [];
  private readonly unwinders: Unwinder[] = [];
  framesScanned = 0;
  rootsRelocated = 0;

  constructor(
    private readonly registry: SafepointRegistry,
    private readonly threads: () => readonly ThreadStack[],
    private readonly options: Omit<UnwinderOptions, "mode"> = {},
  ) {}

  scanRoots(visit: (baseAddress: number) => void): void {
    const snapshot = this.registry.snapshot();
    const threads = this.threads();
    this.framesScanned = 0;
    threads.forEach((thread, t) => {
      const pairs = (this.pairsByThread[t] ??= new RootPairs());
      pairs.clear();
      const u = (this.unwinders[t] = new Unwinder(snapshot, thread.memory, { ...this.options, mode: "strict" }));
      this.framesScanned += scanStackRoots(u, thread.chunks, pairs);
      if (crossCheckRequested()) crossCheckScan(snapshot, thread.memory, thread.chunks, { ...this.options, mode: "strict" });
      const baseValues = pairs.baseValues;
      for (let i = 0; i < pairs.count; i++) {
        const base = baseValues[i]!;
        if (base !== 0) visit(base);
      }
    });
    this.pairsByThread.length = threads.length;
  }

  updateRoots(forward: (oldBaseAddress: number) => number): void {
    const threads = this.threads();
    this.rootsRelocated = 0;
    threads.forEach((thread, t) => {
      const pairs = this.pairsByThread[t];
      const u = this.unwinders[t];
      if (pairs === undefined || u === undefined) return;
      this.rootsRelocated += relocateRootPairs(pairs, thread.memory, u.contexts, forward);
    });
  }
}
