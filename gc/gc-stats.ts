import type { VerifyFailure } from "./heap-verifier.js";

/** How many verification failures of a whole run are kept with their details (the first ones). */
export const FIRST_VERIFY_FAILURES_KEPT = 10;

/** A verification failure and the collection that found it. */
export interface RecordedVerifyFailure extends VerifyFailure {
  cycle: number;
}

/** What one collection did and left behind. Byte counts include object headers. */
export interface CycleStats {
  /** 1 for the first collection. */
  cycle: number;
  reason: string;
  /** The line-mark epoch of this collection (1..255; wraps). */
  epoch: number;
  pauseMs: number;

  rootsVisited: number;
  markedObjects: number;
  markedBytes: number;
  markedLines: number;

  /** Blocks chosen for evacuation before marking, and the hole count that chose them. */
  defragCandidateBlocks: number;
  /** Blocks with at least this many holes were candidates (129 = none; 0 in stress mode). */
  defragThresholdHoles: number;
  evacuatedObjects: number;
  evacuatedBytes: number;
  /** Objects in candidate blocks marked in place: pinned, or found after the headroom ran out. */
  markedInPlaceInCandidates: number;
  headroomExhausted: boolean;

  /** Immix blocks after the sweep, by state; `blocksFree` is what the limit still allows. */
  blocksFreed: number;
  blocksFull: number;
  blocksReusable: number;
  blocksInUse: number;
  blocksFree: number;
  /** Free lines in reusable blocks: the holes the allocators will fill. */
  reusableLines: number;
  largeObjects: number;
  largeBytes: number;
  largeFreedBytes: number;

  /** Bytes the `poison` option overwrote after this collection (old copies, freed lines and pages). */
  poisonedBytes: number;
  /** Freed blocks held in quarantine after this collection (stress: gc/quarantine.ts), in bytes. */
  quarantinedBytes: number;
  /** Writes into poisoned memory found at the start of this collection (counted in verifyFailures). */
  poisonWrites: number;
  heapLimitBytes: number;
  usedBytes: number;
  headroomBytes: number;
  /** The new limit if the heap grew after this collection, else 0. */
  grewToBytes: number;
  /** Free lines in partly used blocks / lines in the heap (the limit). */
  fragmentation: number;

  /** Failures the verifier found after this collection (0 when verify is off). */
  verifyFailures: number;
  /** Where the time went (ms); scan + traceEvacuate + sweep ~ pauseMs, verify comes on top. */
  phaseMs: PhaseMs;
  /** "nursery": a generational minor collection (sticky marks); "full": marks cleared, as without --generational. */
  kind: "nursery" | "full";
  /** Nursery collections: bytes of young objects it traced (promoted: old from now on). 0 for full ones. */
  promotedBytes: number;
  /** Objects the write barrier had logged when this collection started (generational; else 0). */
  rememberedSetSize: number;
}

/** Time per collection phase, ms: root scans, tracing with evacuation and root relocation, sweep and growth, verification. */
export interface PhaseMs {
  scan: number;
  traceEvacuate: number;
  sweep: number;
  verify: number;
}

/**
 * Per-cycle statistics of one collector and running totals. Keeps the last `historyLimit`
 * cycles; totals cover all of them.
 */
export class GcStats {
  readonly cycles: CycleStats[] = [];
  collections = 0;
  totalPauseMs = 0;
  /** Sums of every cycle's phaseMs. */
  readonly totalPhaseMs: PhaseMs = { scan: 0, traceEvacuate: 0, sweep: 0, verify: 0 };
  maxPauseMs = 0;
  totalMarkedBytes = 0;
  totalEvacuatedBytes = 0;
  totalEvacuatedObjects = 0;
  totalVerifyFailures = 0;
  totalPoisonedBytes = 0;
  /** Generational: nursery (minor) and full (major) collections; collections = their sum. */
  minorCollections = 0;
  majorCollections = 0;
  totalPromotedBytes = 0;
  /** The remembered set (objects logged) at each collection's start: the largest and the sum. */
  rememberedSetMax = 0;
  rememberedSetTotal = 0;
  /** Pause time of the nursery and of the full collections, ms. */
  minorPauseMs = 0;
  majorPauseMs = 0;
  /** The run's first FIRST_VERIFY_FAILURES_KEPT verification failures, in the order found. */
  readonly firstVerifyFailures: RecordedVerifyFailure[] = [];

  /** Told of every recorded cycle, in the order attached, after the totals took it in (onRecord). */
  private readonly listeners: ((cycle: CycleStats) => void)[] = [];

  constructor(readonly historyLimit = 10_000) {}

  /** Calls `listener` with each cycle recorded from now on (the run report, --gc-trace); what it throws fails the collection. */
  onRecord(listener: (cycle: CycleStats) => void): void {
    this.listeners.push(listener);
  }

  get last(): CycleStats | undefined {
    return this.cycles[this.cycles.length - 1];
  }

  record(cycle: CycleStats, verifyFailures: readonly VerifyFailure[] = []): void {
    for (const f of verifyFailures) {
      if (this.firstVerifyFailures.length >= FIRST_VERIFY_FAILURES_KEPT) break;
      this.firstVerifyFailures.push({ ...f, cycle: cycle.cycle });
    }
    this.collections++;
    this.totalPauseMs += cycle.pauseMs;
    this.totalPhaseMs.scan += cycle.phaseMs.scan;
    this.totalPhaseMs.traceEvacuate += cycle.phaseMs.traceEvacuate;
    this.totalPhaseMs.sweep += cycle.phaseMs.sweep;
    this.totalPhaseMs.verify += cycle.phaseMs.verify;
    this.maxPauseMs = Math.max(this.maxPauseMs, cycle.pauseMs);
    this.totalMarkedBytes += cycle.markedBytes;
    this.totalEvacuatedBytes += cycle.evacuatedBytes;
    this.totalEvacuatedObjects += cycle.evacuatedObjects;
    this.totalVerifyFailures += cycle.verifyFailures;
    this.totalPoisonedBytes += cycle.poisonedBytes;
    if (cycle.kind === "nursery") {
      this.minorCollections++;
      this.minorPauseMs += cycle.pauseMs;
    } else {
      this.majorCollections++;
      this.majorPauseMs += cycle.pauseMs;
    }
    this.totalPromotedBytes += cycle.promotedBytes;
    this.rememberedSetMax = Math.max(this.rememberedSetMax, cycle.rememberedSetSize);
    this.rememberedSetTotal += cycle.rememberedSetSize;
    this.cycles.push(cycle);
    if (this.cycles.length > this.historyLimit) this.cycles.splice(0, this.cycles.length - this.historyLimit);
    for (const listener of this.listeners) listener(cycle);
  }

  summary(): string {
    return (
      `${this.collections} collections, pause total ${this.totalPauseMs.toFixed(2)} ms, max ${this.maxPauseMs.toFixed(2)} ms, ` +
      `marked ${this.totalMarkedBytes} B, evacuated ${this.totalEvacuatedObjects} objects / ${this.totalEvacuatedBytes} B, ` +
      `verify failures ${this.totalVerifyFailures}`
    );
  }
}

/** What a run reports of generational collection (run --json, sim --json); without it, every collection is major. */
export interface GenerationalTotals {
  minorCollections: number;
  majorCollections: number;
  bytesPromoted: number;
  rememberedSetMax: number;
  rememberedSetTotal: number;
  /** Pause time of the minor and of the major collections, ms. */
  minorPauseMs: number;
  majorPauseMs: number;
}

export function generationalTotals(stats: GcStats): GenerationalTotals {
  return {
    minorCollections: stats.minorCollections,
    majorCollections: stats.majorCollections,
    bytesPromoted: stats.totalPromotedBytes,
    rememberedSetMax: stats.rememberedSetMax,
    rememberedSetTotal: stats.rememberedSetTotal,
    minorPauseMs: stats.minorPauseMs,
    majorPauseMs: stats.majorPauseMs,
  };
}

/** The text summary's words for it: "3 minor (nursery) and 1 major (full) collections, 12 KiB promoted, ...". */
export function generationalText(g: GenerationalTotals): string {
  return (
    `${g.minorCollections} minor (nursery) and ${g.majorCollections} major (full) collections, ${g.bytesPromoted} bytes promoted, ` +
    `remembered set max ${g.rememberedSetMax} objects (${g.rememberedSetTotal} over all collections)`
  );
}

/** One line per cycle, for logs and the CLI. */
export function formatCycle(c: CycleStats): string {
  const kib = (n: number): string => `${(n / 1024).toFixed(1)} KiB`;
  return (
    `gc #${c.cycle}${c.kind === "nursery" ? " nursery" : ""} (${c.reason}) ${c.pauseMs.toFixed(3)} ms: marked ${c.markedObjects} objects ${kib(c.markedBytes)}, ` +
    `evacuated ${c.evacuatedObjects} ${kib(c.evacuatedBytes)} from ${c.defragCandidateBlocks} blocks${c.headroomExhausted ? " (headroom exhausted)" : ""}; ` +
    `blocks full ${c.blocksFull} reusable ${c.blocksReusable} free ${c.blocksFree}; large ${c.largeObjects} ${kib(c.largeBytes)}; ` +
    `used ${kib(c.usedBytes)} of ${kib(c.heapLimitBytes)}${c.grewToBytes ? ` (grew to ${kib(c.grewToBytes)})` : ""}; ` +
    `fragmentation ${(c.fragmentation * 100).toFixed(1)} %${c.verifyFailures ? `; VERIFY FAILURES ${c.verifyFailures}` : ""}`
  );
}
