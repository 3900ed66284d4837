import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { CollectorError } from "../../../gc/collector-error.js";
import { renderHeapMapSvg } from "../../../gc/heap-map-svg.js";
import { ImmixCollector } from "../../../gc/immix-collector.js";
import { StackRootScanner, type ThreadStack } from "../../../walker/stack-root-scanner.js";
import type { CliIo } from "../process-io.js";
export { parseSize } from "../parse-size.js";
import { SimThread, loadFrameTemplates } from "./sim-thread.js";
import { type WorkloadName, runWorkload } from "./workloads.js";
import { type GenerationalTotals, type RecordedVerifyFailure, generationalText, generationalTotals } from "../../../gc/gc-stats.js";
import { verifyFailureJson, verifyFailureReport } from "../verify-failures.js";
import { attachCollectionLog, writeRunReport } from "../report/run-report.js";

/*
 * `rootwalk sim`: the collector and the walker together on simulated memory. Mutators
 * (workloads.ts) run on simulated stacks whose frames come from a real compiled map
 * (sim-thread.ts); every collection finds the roots by walking those stacks.
 */

export interface SimOptions {
  workload: WorkloadName;
  heapBytes: number;
  stress: boolean;
  /** With stress: collect at every N-th allocation (as run's --stress=N collects at every N-th safepoint). Default 1. */
  stressEvery?: number;
  verify: boolean;
  /** Poison what each collection frees (gc/poison.ts); implied by stress. */
  poison?: boolean;
  /** Generational collection (ImmixCollector's generational and nurseryBytes). */
  generational?: boolean;
  nurseryBytes?: number;
  scale: number;
  threads: number;
  seed: number;
  svg?: string;
  /** Cross-check every scan (walker/scan-cross-check.ts): ROOTWALK_SCAN_CROSSCHECK=1 at the process entry. */
  crossCheck?: boolean;
  /** `--report FILE.html`: write the run report (src/cli/report/) after the run. */
  report?: string;
  /** `--gc-trace`: a line per collection on stderr as it happens (src/cli/report/gc-trace.ts). */
  gcTrace?: (line: string) => void;
}

export interface SimResult {
  collections: number;
  objectsMoved: number;
  maxPauseMs: number;
  totalPauseMs: number;
  verifyFailures: number;
  /** The first verification failures (at most FIRST_VERIFY_FAILURES_KEPT), where and why. */
  verifyFailureDetails: RecordedVerifyFailure[];
  /** Bytes the collections poisoned (0 without --poison or --stress). */
  poisonedBytes: number;
  /** Fragmentation after the last collection (free lines in partly used blocks / heap lines). */
  fragmentation: number;
  /** Highest fragmentation seen after a collection, and the lowest after a defragmenting one. */
  maxFragmentation: number;
  minFragmentationAfterDefrag: number;
  defragCycles: number;
  /** Fragmentation right before and right after the first defragmenting collection. */
  fragmentationBeforeDefrag: number | undefined;
  fragmentationAfterDefrag: number | undefined;
  markedBytes: number;
  evacuatedBytes: number;
  maxStackFrames: number;
  elapsedMs: number;
  heapLimitBytes: number;
  /** Minor (nursery) and major (full) collections, bytes promoted, the remembered set. */
  generational: GenerationalTotals;
}

const HEAP_BASE = 0x2000_0000_0000;
const STACK_BYTES = 32 * 1024 * 1024;

export async function runSimulation(options: SimOptions, onProgress: (fraction: number) => void = () => {}): Promise<SimResult> {
  const { registry, templates } = await loadFrameTemplates();
  const collector = new ImmixCollector({
    heap: { base: HEAP_BASE, buffer: new ArrayBuffer(options.heapBytes), sizeBytes: options.heapBytes },
    options: {
      verify: options.verify,
      stress: options.stress,
      poison: options.poison === true || options.stress,
      ...(options.stress && (options.stressEvery ?? 1) === 1 ? { collectEveryBytes: 0 } : {}),
      growthThreshold: 1,
      generational: options.generational === true,
      ...(options.nurseryBytes !== undefined ? { nurseryBytes: options.nurseryBytes } : {}),
    },
  });
  const threadCount = options.workload === "mt-gcbench" ? options.threads : 1;
  // Every allocation is a safepoint of the simulated program: --stress=N collects at every N-th.
  const stressEvery = options.stress && (options.stressEvery ?? 1) > 1 ? options.stressEvery! : 0;
  const threads = Array.from(
    { length: threadCount },
    (_, k) =>
      new SimThread(k, collector.newMutator(), STACK_BYTES, stressEvery === 0 ? undefined : { every: stressEvery, collect: () => collector.collect("stress") }),
  );
  const scanner = new StackRootScanner(
    registry,
    () => threads.map((t) => t.threadStack()).filter((s): s is ThreadStack => s !== undefined),
    options.crossCheck !== undefined ? { crossCheck: options.crossCheck } : {},
  );
  collector.addRootScanner(scanner);
  const log = options.report !== undefined || options.gcTrace !== undefined ? attachCollectionLog({ collector, scanner }, options.gcTrace) : undefined;

  let seed = options.seed >>> 0 || 1;
  const random = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 4294967296;
  };
  const start = performance.now();
  runWorkload(options.workload, {
    collector,
    threads,
    templates,
    random,
    scale: options.scale,
    progress: onProgress,
  });
  const elapsedMs = performance.now() - start;

  const result = simResult(collector, threads, elapsedMs);
  writeSimOutputs(options, collector, log, result);
  return result;
}

/** The run's figures, from the collector's per-cycle statistics and the threads' deepest stacks. */
function simResult(collector: ImmixCollector, threads: readonly SimThread[], elapsedMs: number): SimResult {
  const cycles = collector.stats.cycles;
  const defragging = cycles.filter((c) => c.evacuatedObjects > 0);
  const firstDefrag = cycles.findIndex((c) => c.evacuatedObjects > 0 && c.defragCandidateBlocks > 0);
  return {
    collections: collector.stats.collections,
    objectsMoved: collector.stats.totalEvacuatedObjects,
    maxPauseMs: collector.stats.maxPauseMs,
    totalPauseMs: collector.stats.totalPauseMs,
    verifyFailures: collector.stats.totalVerifyFailures,
    verifyFailureDetails: collector.stats.firstVerifyFailures,
    poisonedBytes: collector.stats.totalPoisonedBytes,
    fragmentation: cycles.at(-1)?.fragmentation ?? 0,
    maxFragmentation: Math.max(0, ...cycles.map((c) => c.fragmentation)),
    minFragmentationAfterDefrag: defragging.length ? Math.min(...defragging.map((c) => c.fragmentation)) : Number.NaN,
    defragCycles: defragging.length,
    fragmentationBeforeDefrag: firstDefrag > 0 ? cycles[firstDefrag - 1]!.fragmentation : undefined,
    fragmentationAfterDefrag: firstDefrag >= 0 ? cycles[firstDefrag]!.fragmentation : undefined,
    markedBytes: collector.stats.totalMarkedBytes,
    evacuatedBytes: collector.stats.totalEvacuatedBytes,
    maxStackFrames: Math.max(...threads.map((t) => t.maxDepth)),
    elapsedMs,
    heapLimitBytes: collector.heapLimitBytes,
    generational: generationalTotals(collector.stats),
  };
}

/** `--svg` and `--report`: the heap map after the run, and the run report with its parameters and summary. */
function writeSimOutputs(options: SimOptions, collector: ImmixCollector, log: ReturnType<typeof attachCollectionLog> | undefined, result: SimResult): void {
  if (options.svg !== undefined) {
    writeFileSync(options.svg, renderHeapMapSvg(collector.heapMap(), { title: `rootwalk sim ${options.workload}: heap after the run` }));
  }
  if (options.report !== undefined && log !== undefined) {
    const heapMapSvg = renderHeapMapSvg(collector.heapMap(), { title: `rootwalk sim ${options.workload}: heap after the run` });
    const [parameters, summary] = [summaryRows(options, result).slice(0, 3), summaryRows(options, result).slice(3)];
    writeRunReport(options.report, log, {
      title: `rootwalk sim ${options.workload} report`,
      parameters: parameters as [string, string][],
      summary: summary as [string, string][],
      heapMapSvg,
    });
  }
}

/** Runs with a heap of `heapBytes`; undefined when the heap is too small (out of memory). */
async function runOrOom(options: SimOptions): Promise<SimResult | undefined> {
  try {
    return await runSimulation(options);
  } catch (e) {
    if (e instanceof CollectorError && e.kind === "OUT_OF_MEMORY") return undefined;
    throw e;
  }
}

/** The smallest heap (to 1/16 precision, in whole 32 KiB blocks) the workload completes in. */
export async function minimumHeap(options: SimOptions): Promise<number> {
  const block = 32 * 1024;
  let high = 4 * 1024 * 1024;
  while ((await runOrOom({ ...options, heapBytes: high })) === undefined) high *= 2;
  let low = Math.max(block, high / 2);
  if ((await runOrOom({ ...options, heapBytes: low })) !== undefined) low = block;
  while (high - low > Math.max(block, high / 16)) {
    const mid = Math.round((low + high) / 2 / block) * block;
    if ((await runOrOom({ ...options, heapBytes: mid })) === undefined) low = mid;
    else high = mid;
  }
  return high;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("  ")).join("\n") + "\n";
}

const mib = (n: number) => `${(n / 1024 / 1024).toFixed(2)} MiB`;
const pct = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? "-" : `${(x * 100).toFixed(2)} %`);

export function formatSummary(options: SimOptions, r: SimResult): string {
  return table(summaryRows(options, r));
}

/** The summary's rows (the report's tables too): the run's parameters first (3 rows), then its numbers. */
function summaryRows(options: SimOptions, r: SimResult): string[][] {
  return [
    ["rootwalk sim", options.workload],
    ["heap", mib(r.heapLimitBytes)],
    [
      "mode",
      `${options.stress ? `stress (collect at every ${(options.stressEvery ?? 1) > 1 ? `${options.stressEvery}th ` : ""}allocation, evacuate all)` : "normal"}${options.verify ? ", verify" : ""}${options.poison === true || options.stress ? ", poison" : ""}, scale ${options.scale}`,
    ],
    ["collections", String(r.collections)],
    ...(options.generational === true ? [["generational", generationalText(r.generational)]] : []),
    ["objects moved", String(r.objectsMoved)],
    ["evacuated", mib(r.evacuatedBytes)],
    ["marked (total)", mib(r.markedBytes)],
    ["pause max / total", `${r.maxPauseMs.toFixed(2)} ms / ${r.totalPauseMs.toFixed(1)} ms`],
    ["deepest stack", `${r.maxStackFrames} frames`],
    ["verify failures", String(r.verifyFailures)],
    ["poisoned (total)", mib(r.poisonedBytes)],
    ["fragmentation (last / max)", `${pct(r.fragmentation)} / ${pct(r.maxFragmentation)}`],
    ["first defrag: before -> after", `${pct(r.fragmentationBeforeDefrag)} -> ${pct(r.fragmentationAfterDefrag)}`],
    ["defragmenting collections", String(r.defragCycles)],
    ["elapsed", `${r.elapsedMs.toFixed(0)} ms`],
  ];
}

export function simJson(r: SimResult): string {
  return `${JSON.stringify({
    collections: r.collections,
    minorCollections: r.generational.minorCollections,
    majorCollections: r.generational.majorCollections,
    bytesPromoted: r.generational.bytesPromoted,
    rememberedSetMax: r.generational.rememberedSetMax,
    rememberedSetTotal: r.generational.rememberedSetTotal,
    objectsMoved: r.objectsMoved,
    maxPauseMs: Number(r.maxPauseMs.toFixed(3)),
    verifyFailures: r.verifyFailures,
    verifyFailureDetails: r.verifyFailureDetails.map(verifyFailureJson),
    fragmentation: Number(r.fragmentation.toFixed(5)),
  })}\n`;
}

/** The heap-size sweep: minimum heap, then 1x..6x of it, one row each. */
export async function heapSweep(options: SimOptions, io: CliIo): Promise<void> {
  const min = await minimumHeap(options);
  io.stdout(`minimum heap for ${options.workload} (scale ${options.scale}): ${mib(min)}\n`);
  const rows = [["heap", "x min", "collections", "GC total ms", "max pause ms", "marked MiB", "moved objects", "frag max"]];
  for (let factor = 1; factor <= 6; factor++) {
    const heapBytes = Math.ceil((min * factor) / 32768) * 32768;
    const r = await runSimulation({ ...options, heapBytes });
    rows.push([
      mib(heapBytes),
      `${factor}x`,
      String(r.collections),
      r.totalPauseMs.toFixed(1),
      r.maxPauseMs.toFixed(2),
      (r.markedBytes / 1024 / 1024).toFixed(1),
      String(r.objectsMoved),
      pct(r.maxFragmentation),
    ]);
  }
  io.stdout(table(rows));
}

export async function simCommand(options: SimOptions & { json: boolean; sweep: boolean; trace?: boolean }, io: CliIo): Promise<number> {
  if (options.sweep) {
    await heapSweep(options, io);
    return 0;
  }
  const tty = process.stderr.isTTY === true && !options.json;
  let lastShown = -1;
  const result = await runSimulation({ ...options, ...(options.trace === true ? { gcTrace: io.stderr } : {}) }, (fraction) => {
    const percent = Math.floor(fraction * 100);
    if (!options.json && percent >= lastShown + 10) {
      lastShown = percent;
      io.stderr(tty ? `\r${options.workload}: ${percent} %` : `${options.workload}: ${percent} %\n`);
    }
  });
  if (tty) io.stderr("\n");
  if (options.json) io.stdout(simJson(result));
  else {
    io.stdout(formatSummary(options, result));
    if (options.svg) io.stdout(`heap map written to ${options.svg}\n`);
  }
  if (options.report !== undefined) io.stderr(`rootwalk sim: report written to ${resolve(options.report)}\n`);
  if (result.verifyFailures > 0) io.stderr(verifyFailureReport("sim", result.verifyFailures, result.verifyFailureDetails));
  return result.verifyFailures === 0 ? 0 : 4;
}
