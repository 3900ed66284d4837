import { PerformanceObserver } from "node:perf_hooks";
import { encodeSyntheticStackMap } from "./synthetic-stackmap.js";
import { registerStackMapBytes } from "../src/loader/register-maps.js";
import { indexStackMapInKernel } from "../src/safepoints/kernel-index.js";
import { DeferredLlvmDescriptors } from "../src/loader/deferred-llvm-descriptors.js";
import { SafepointRegistry } from "../src/safepoints/registry.js";
import { parseStackMapSection } from "../src/stackmap/llvm-stackmap.js";
import { buildLlvmDescriptors } from "../src/loader/llvm-map-loader.js";
import { scanMemory } from "../src/memory/scan-memory.js";
import { freshPageCost } from "./fresh-page-cost.js";

/*
 * Counters of registration by phase (issue 34): for each phase of `registerStackMapBytes` on the
 * bench's synthetic sections, run alone `rounds` times in a row, the wall and CPU time per record,
 * the minor page faults per run (process.resourceUsage), the garbage collector's time per run
 * (PerformanceObserver 'gc' entries) and the external memory left after the rounds. Not a ratio
 * and not part of `npm run bench`: what explains the Parse rows when they move between machines.
 *
 * usage: node dist/bench/registration-phases.js [records...]   (default 1000 10000 100000 1000000)
 */

interface PhaseCounters {
  phase: string;
  records: number;
  wallNsPerRecord: number;
  cpuNsPerRecord: number;
  minorFaultsPerRun: number;
  gcMsPerRun: number;
  gcCountPerRun: number;
  externalMiB: number;
}

let gcMs = 0;
let gcCount = 0;
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gcMs += entry.duration;
    gcCount++;
  }
});
observer.observe({ entryTypes: ["gc"] });

/** Lets the observer deliver the GC entries of what ran before. */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 5));
}

async function measure(phase: string, records: number, rounds: number, work: () => unknown): Promise<PhaseCounters> {
  for (let r = 0; r < rounds; r++) work(); // warm-up (JIT, workspace), as long as the measure
  await settle();
  gcMs = 0;
  gcCount = 0;
  const faults0 = process.resourceUsage().minorPageFault;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let r = 0; r < rounds; r++) work();
  const wallNs = Number(process.hrtime.bigint() - t0);
  const cpu = process.cpuUsage(cpu0);
  const faults = process.resourceUsage().minorPageFault - faults0;
  await settle();
  return {
    phase,
    records,
    wallNsPerRecord: wallNs / (rounds * records),
    cpuNsPerRecord: ((cpu.user + cpu.system) * 1000) / (rounds * records),
    minorFaultsPerRun: faults / rounds,
    gcMsPerRun: gcMs / rounds,
    gcCountPerRun: gcCount / rounds,
    externalMiB: process.memoryUsage().external / 2 ** 20,
  };
}

async function phasesFor(records: number): Promise<PhaseCounters[]> {
  const bytes = encodeSyntheticStackMap({ functions: records / 10, recordsPerFunction: 10, rootsPerRecord: 4 });
  const rounds = Math.max(3, Math.min(200, Math.round(2_000_000 / records)));
  const out: PhaseCounters[] = [];
  let keep: unknown;
  out.push(
    await measure("registerStackMapBytes (whole)", records, rounds, () => {
      const registry = new SafepointRegistry();
      registerStackMapBytes(registry, bytes, { name: "phases" });
      keep = registry;
    }),
  );
  const region = scanMemory().allocate(bytes.byteLength, "phases: copy in");
  out.push(await measure("copy into the scan memory (set)", records, rounds, () => scanMemory().bytes.set(bytes, region.offset)));
  region.release();
  out.push(await measure("kernel index (copy in, measure, index, copy out)", records, rounds, () => (keep = indexStackMapInKernel(bytes, 0))));
  const index = indexStackMapInKernel(bytes, 0)!;
  const cells = index.table.capacity;
  out.push(
    await measure("copy out alone (slices of the same sizes)", records, rounds, () => {
      const buffer = scanMemory().buffer;
      keep = [
        new Uint32Array(buffer, 0, 2 * cells).slice(),
        new Uint32Array(buffer, 0, 2 * cells).slice(),
        new Float64Array(buffer, 0, cells).slice(),
        new Int32Array(buffer, 0, records).slice(),
      ];
    }),
  );
  out.push(await measure("the registry's copy (DeferredLlvmDescriptors)", records, rounds, () => (keep = new DeferredLlvmDescriptors(bytes, records, 0))));
  const generalRounds = Math.max(2, Math.round(rounds / 4));
  out.push(
    await measure("general decoder (parseStackMapSection + buildLlvmDescriptors)", records, generalRounds, () => {
      keep = buildLlvmDescriptors(parseStackMapSection(bytes));
    }),
  );
  // Again, last: the same work after the phases above have churned the allocator (glibc raises its
  // mmap threshold to the size of each mmapped chunk it frees, so later big buffers may come from
  // its heap and be reused, and fault less).
  out.push(
    await measure("registerStackMapBytes (whole, again)", records, rounds, () => {
      const registry = new SafepointRegistry();
      registerStackMapBytes(registry, bytes, { name: "phases" });
      keep = registry;
    }),
  );
  // The bench's Parse cases since the registration pool (src/safepoints/registration-pool.ts): one
  // registry, the previous module unregistered with its memory released before the next one.
  const reused = new SafepointRegistry();
  let handle: number | undefined;
  out.push(
    await measure("registerStackMapBytes (whole, previous released)", records, rounds, () => {
      if (handle !== undefined) reused.unregister(handle, { release: true });
      handle = registerStackMapBytes(reused, bytes, { name: "phases" });
    }),
  );
  void keep;
  return out;
}

async function main(): Promise<void> {
  const page = freshPageCost();
  console.log(
    `a fresh 4 KiB page: ${page.freshNsPerPage.toFixed(0)} ns written first (${page.faultsPerPage.toFixed(2)} faults per page), ${page.reusedNsPerPage.toFixed(0)} ns written again`,
  );
  const sizes = process.argv.slice(2).map(Number);
  for (const records of sizes.length > 0 ? sizes : [1000, 10_000, 100_000, 1_000_000]) {
    for (const c of await phasesFor(records)) {
      console.log(
        `${String(c.records).padStart(8)}  ${c.phase.padEnd(64)} wall ${c.wallNsPerRecord.toFixed(1).padStart(7)} ns/rec  cpu ${c.cpuNsPerRecord
          .toFixed(1)
          .padStart(
            7,
          )}  faults/run ${c.minorFaultsPerRun.toFixed(0).padStart(6)}  gc ${c.gcMsPerRun.toFixed(2).padStart(6)} ms/run (${c.gcCountPerRun.toFixed(1)})  ext ${c.externalMiB.toFixed(0)} MiB`,
      );
    }
  }
  observer.disconnect();
}

await main();
