/*
 * Timing for the TypeScript side: warm up (JIT) for `warmupMs`, size a batch so it lasts about
 * `batchMs`, then time `repeats` batches. The same iteration count is handed to the C reference,
 * so both sides time the same amount of work per sample. Every call's result is added to `sink`,
 * which is printed, so nothing is optimised away.
 */

export interface TimingOptions {
  warmupMs: number;
  batchMs: number;
  repeats: number;
}

export interface Timed {
  iterations: number;
  samplesNsPerOp: number[];
}

let sinkValue = 0;
/** Everything the benchmarks computed, folded together (reported, never used). */
export function sink(): number {
  return sinkValue;
}

export function timeBatches(fn: () => number, opsPerCall: number, o: TimingOptions): Timed {
  let calls = 0;
  const warmStart = performance.now();
  let elapsed: number;
  do {
    sinkValue = (sinkValue + fn()) % 2 ** 48;
    calls++;
    elapsed = performance.now() - warmStart;
  } while (elapsed < o.warmupMs || calls < 2);
  const iterations = Math.max(1, Math.round(o.batchMs / (elapsed / calls)));
  const samplesNsPerOp: number[] = [];
  for (let r = 0; r < o.repeats; r++) {
    let acc = 0;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) acc += fn();
    const t1 = process.hrtime.bigint();
    sinkValue = (sinkValue + acc) % 2 ** 48;
    samplesNsPerOp.push(Number(t1 - t0) / (iterations * opsPerCall));
  }
  return { iterations, samplesNsPerOp };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
