import type { CollectionLog, CollectionRecord } from "./collection-log.js";

/** At most this many points per series: more collections are averaged in buckets (30,000 draw in well under a second). */
export const MAX_POINTS_PER_SERIES = 2000;
/** Bins of the pause histogram, which counts every collection's pause (never a bucket's mean). */
export const HISTOGRAM_BINS = 40;
/** Threads drawn one series each; the rest are summed into one "other threads" series. */
export const MAX_THREAD_SERIES = 12;

/** The numeric CollectionRecord fields drawn per collection (bucket means). */
const SERIES_FIELDS = [
  "pauseMs",
  "stopTheWorldMs",
  "scanMs",
  "traceEvacuateMs",
  "sweepMs",
  "verifyMs",
  "usedBeforeBytes",
  "usedAfterBytes",
  "liveBytes",
  "reusableLines",
  "blocksFull",
  "blocksReusable",
  "blocksFree",
  "blocksInUse",
  "evacuatedBytes",
  "promotedBytes",
  "frames",
  "framesSkipped",
  "roots",
] as const;
type SeriesField = (typeof SERIES_FIELDS)[number];

/** p50, p90, p99 and max of one phase over all collections, ms. */
export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** One thread's (or the summed other threads') series, a number per point. */
export interface ThreadSeries {
  label: string;
  frames: number[];
  framesSkipped: number[];
  roots: number[];
}

/** Everything the report page draws, as JSON (embedded in the HTML). */
export interface ReportData {
  title: string;
  parameters: [string, string][];
  summary: [string, string][];
  collections: number;
  /** Collections per point (1: a point per collection). */
  bucket: number;
  /** Each point's first collection number. */
  x: number[];
  /** Bucket means per field; promotedBytes only when the collector reported it. */
  series: Partial<Record<SeriesField, number[]>>;
  /** The longest pause in each bucket. */
  pauseMaxMs: number[];
  /** Pause histogram over every collection: bin lower edges (ms), counts. */
  histogram: { fromMs: number[]; counts: number[]; widthMs: number };
  percentiles: Record<"pauseMs" | "stopTheWorldMs" | "scanMs" | "traceEvacuateMs" | "sweepMs" | "verifyMs", Percentiles>;
  /** Collections by kind (full, or minor / major). */
  kinds: Record<string, number>;
  /** Per thread: frames walked, frames skipped (return barriers) and roots per point (bucket means; 0 where the thread was not stopped). */
  threads: ThreadSeries[];
  heapMapSvg: string;
}

/** The value at quantile q of ascending `sorted` (nearest rank), 0 when empty. */
function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

function percentilesOf(records: readonly CollectionRecord[], field: keyof ReportData["percentiles"]): Percentiles {
  const sorted = Float64Array.from(records, (r) => r[field]).sort();
  return { p50: quantile(sorted, 0.5), p90: quantile(sorted, 0.9), p99: quantile(sorted, 0.99), max: quantile(sorted, 1) };
}

/** Bucket means of `value` over `records` (bucket of `size` collections, the last may be shorter). */
function bucketMeans(records: readonly CollectionRecord[], size: number, value: (r: CollectionRecord) => number): number[] {
  const out: number[] = [];
  for (let start = 0; start < records.length; start += size) {
    const end = Math.min(records.length, start + size);
    let sum = 0;
    for (let i = start; i < end; i++) sum += value(records[i]!);
    out.push(sum / (end - start));
  }
  return out;
}

function histogramOf(records: readonly CollectionRecord[]): ReportData["histogram"] {
  const maxMs = records.reduce((m, r) => Math.max(m, r.pauseMs), 0);
  const widthMs = maxMs > 0 ? maxMs / HISTOGRAM_BINS : 1;
  const counts = new Array<number>(HISTOGRAM_BINS).fill(0);
  for (const r of records) counts[Math.min(HISTOGRAM_BINS - 1, Math.floor(r.pauseMs / widthMs))]!++;
  return { fromMs: counts.map((_, k) => k * widthMs), counts, widthMs };
}

/** Per thread, frames walked and skipped and roots per point; past MAX_THREAD_SERIES threads (by frames walked), the rest summed. */
function threadSeries(log: CollectionLog, size: number, points: number): ReportData["threads"] {
  const rows = log.threadRows;
  const totals = log.threadLabels.map(() => 0);
  for (let i = 0; i < rows.thread.length; i++) totals[rows.thread[i]!]! += rows.frames[i]!;
  const order = totals.map((_, k) => k).sort((a, b) => totals[b]! - totals[a]!);
  const shown = order.slice(0, MAX_THREAD_SERIES);
  const slotOf = new Map(shown.map((t, k) => [t, k]));
  const zeros = (): number[] => new Array<number>(points).fill(0);
  const threads: ThreadSeries[] = shown.map((t) => ({ label: log.threadLabels[t]!, frames: zeros(), framesSkipped: zeros(), roots: zeros() }));
  if (order.length > shown.length)
    threads.push({ label: `${order.length - shown.length} other threads`, frames: zeros(), framesSkipped: zeros(), roots: zeros() });
  for (let i = 0; i < rows.thread.length; i++) {
    const series = threads[slotOf.get(rows.thread[i]!) ?? shown.length]!;
    const point = Math.floor(rows.collection[i]! / size);
    const count = Math.min(size, log.records.length - point * size);
    series.frames[point]! += rows.frames[i]! / count;
    series.framesSkipped[point]! += rows.framesSkipped[i]! / count;
    series.roots[point]! += rows.roots[i]! / count;
  }
  return threads;
}

/** What the page draws for `log`'s collections, bucketed to at most MAX_POINTS_PER_SERIES points. */
export function reportData(
  log: CollectionLog,
  page: { title: string; parameters: [string, string][]; summary: [string, string][]; heapMapSvg: string },
): ReportData {
  const records = log.records;
  const bucket = Math.max(1, Math.ceil(records.length / MAX_POINTS_PER_SERIES));
  const series: ReportData["series"] = {};
  const promoted = records.some((r) => r.promotedBytes !== undefined);
  for (const field of SERIES_FIELDS) {
    if (field === "promotedBytes" && !promoted) continue;
    series[field] = bucketMeans(records, bucket, (r) => r[field] ?? 0);
  }
  const x = bucketMeans(records, bucket, (r) => r.cycle).map((_, k) => records[k * bucket]!.cycle);
  const pauseMaxMs: number[] = [];
  for (let start = 0; start < records.length; start += bucket)
    pauseMaxMs.push(records.slice(start, start + bucket).reduce((m, r) => Math.max(m, r.pauseMs), 0));
  const kinds: Record<string, number> = {};
  for (const r of records) kinds[r.kind] = (kinds[r.kind] ?? 0) + 1;
  const phases = ["pauseMs", "stopTheWorldMs", "scanMs", "traceEvacuateMs", "sweepMs", "verifyMs"] as const;
  return {
    ...page,
    collections: records.length,
    bucket,
    x,
    series,
    pauseMaxMs,
    histogram: histogramOf(records),
    percentiles: Object.fromEntries(phases.map((p) => [p, percentilesOf(records, p)])) as ReportData["percentiles"],
    kinds,
    threads: threadSeries(log, bucket, x.length),
    heapMapSvg: page.heapMapSvg,
  };
}
