import { TWO_32 } from "../src/bytes/word-codec.js";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DeferredLlvmDescriptors, RECORD_BLOCK_SIZE } from "../src/loader/deferred-llvm-descriptors.js";
import { registerStackMapBytes } from "../src/loader/register-maps.js";
import { scanMemory } from "../src/memory/scan-memory.js";
import { RECIPE_NOT_FOUND } from "../src/safepoints/recipe-record.js";
import { indexStackMapInKernel } from "../src/safepoints/kernel-index.js";
import { type RegistrySnapshot, SafepointRegistry } from "../src/safepoints/registry.js";
import { safepointAt } from "../src/safepoints/safepoint-info.js";
import { repoRoot, writeFileAtomic } from "../src/toolchain/llvm-toolchain.js";
import { findRecipes } from "../walker/scan-kernel/recipe-lookup.js";
import { buildHeapCorpus, heapCorpusFile } from "./heap-corpus.js";
import { buildReferenceLibrary, inputPath, runReference } from "./native-refs.js";
import { type StackCorpus, buildStackCorpus, scanPathBytesPerSafepoint, stackCorpusFile, tableBytesPerSafepoint } from "./stack-corpus.js";
import { encodeSyntheticStackMap } from "./synthetic-stackmap.js";
import { type TimingOptions, median, timeBatches } from "./timing.js";
import { freshPageCost } from "./fresh-page-cost.js";
import { checkRegistrationOutputs } from "./parse-reference.js";
import { ReferenceMismatchError, checkWalkOutputs, referenceWalk, rootwalkWalk } from "./walk-reference.js";

/*
 * The benchmark corpus: every case is named `Layer/operation`, times a batch of operations on
 * the TypeScript side and the C/C++ reference on the SAME bytes (written to a file), and reports
 * ns per operation for both and their ratio (rootwalk / reference; lower is better).
 */

export interface CaseResult {
  name: string;
  /** What one operation is: a frame walked, a lookup, a record parsed + indexed, an object marked. */
  unit: string;
  /** Input size (frames, keys, records, objects), for the chart's x axis. */
  size: number;
  rootwalkNsPerOp: number;
  referenceNsPerOp: number;
  ratio: number;
  rootwalkSamples: number[];
  referenceSamples: number[];
  iterations: number;
  reference: string;
  extra?: Record<string, number | string>;
}

export interface BenchCase {
  name: string;
  /** Run with --quick. */
  quick: boolean;
  run(timing: TimingOptions): CaseResult | { name: string; skipped: string };
}

function result(
  name: string,
  unit: string,
  size: number,
  reference: string,
  ts: { iterations: number; samplesNsPerOp: number[] },
  ref: { samplesNsPerOp: number[] },
  extra?: CaseResult["extra"],
): CaseResult {
  const rootwalkNsPerOp = median(ts.samplesNsPerOp);
  const referenceNsPerOp = median(ref.samplesNsPerOp);
  return {
    name,
    unit,
    size,
    reference,
    rootwalkNsPerOp,
    referenceNsPerOp,
    ratio: rootwalkNsPerOp / referenceNsPerOp,
    rootwalkSamples: ts.samplesNsPerOp,
    referenceSamples: ref.samplesNsPerOp,
    iterations: ts.iterations,
    ...(extra ? { extra } : {}),
  };
}

// ---- Walk and Lookup ---------------------------------------------------------------------------

const FEW_SITES = { functions: 4, recordsPerFunction: 4, rootsPerRecord: 4 };
const MANY_SITES = { functions: 2_000, recordsPerFunction: 10, rootsPerRecord: 4 };
const LOOKUP_QUERIES = 1 << 20;

const stacks = new Map<string, StackCorpus>();
function stack(frames: number, many: boolean): StackCorpus {
  const key = `${frames}-${many}`;
  let c = stacks.get(key);
  if (c === undefined) {
    c = buildStackCorpus(key, many ? MANY_SITES : FEW_SITES, frames, many ? LOOKUP_QUERIES : 0, 0x5eed + frames);
    stacks.set(key, c);
  }
  return c;
}

/*
 * NOT rootwalk's number: a sketch of the walker's fast path, to show where the real walker's time
 * goes (bench/HISTORY.md, "Why the walk was slow"). Same table (SafepointTable.find) and the same
 * descriptor columns, but monomorphic direct Uint32Array reads instead of Memory.readWord, no
 * Unwinder/RootPairs object traffic, and only the frame shape of this corpus (static frame size,
 * SP-relative Indirect roots; anything else throws). Reported as `sketchNsPerOp` only.
 */
function makeSketchWalk(c: StackCorpus): () => number {
  const words = c.memory.words;
  const base = c.memory.base;
  const end = base + c.memory.sizeBytes;
  const table = c.snapshot.table;
  const d = c.snapshot.moduleBySlot[0]!.descriptors;
  const slots = new Float64Array(c.roots + 16);
  const INDIRECT_RSP = 3 | (7 << 8);
  return () => {
    let sp = c.start.sp;
    let ra = c.start.ra;
    const top = c.start.stackTop!;
    let frames = 0;
    let n = 0;
    let sum = 0;
    while (sp < top) {
      const t = table.find(ra);
      if (t < 0) throw new Error("sketch: unknown return address");
      const i = table.descriptorAt(t);
      const frameSize = d.frameSizeBytes[i]!;
      if (frameSize < 0 || (sp & 7) !== 0 || sp < base || sp + frameSize + 8 > end) throw new Error("sketch: frame shape not handled");
      const pairStart = d.pairStart[i]!;
      const pairCount = d.pairCount[i]!;
      for (let p = 0; p < pairCount; p++) {
        const loc = d.pairs[(pairStart + p) * 2 + 1]!;
        if ((d.locations[loc * 2]! & 0xff0f) !== INDIRECT_RSP) throw new Error("sketch: location not handled");
        const slot = sp + d.locations[loc * 2 + 1]!;
        slots[n++] = slot;
        const w = (slot - base) >>> 2;
        sum += words[w + 1]! * TWO_32 + words[w]!;
      }
      const r = (sp + frameSize - base) >>> 2;
      ra = words[r + 1]! * TWO_32 + words[r]!;
      sp += frameSize + 8;
      frames++;
    }
    return frames + sum + n;
  };
}

/**
 * NOT rootwalk's number: the sketch above plus the second suggestion, 64-bit values kept as two
 * uint32 halves end to end: the return address read as (lo, hi) from the stack words, hashed
 * and compared as int32s against a table whose keys are two Uint32Arrays (built here from the
 * real table's entries, same hash and probing). No double is built per frame.
 */
function makeSplitKeySketchWalk(c: StackCorpus): () => number {
  const words = c.memory.words;
  const base = c.memory.base;
  const end = base + c.memory.sizeBytes;
  const d = c.snapshot.moduleBySlot[0]!.descriptors;
  const capacity = c.snapshot.table.capacity;
  const log = Math.log2(capacity);
  const mask = capacity - 1;
  const keyLo = new Uint32Array(capacity);
  const keyHi = new Uint32Array(capacity);
  const value = new Int32Array(capacity).fill(-1);
  const slotOf = (lo: number, hi: number): number => Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1) >>> (32 - log);
  for (const [ra, , index] of c.snapshot.table.entriesInOrder()) {
    const lo = ra >>> 0;
    const hi = (ra / TWO_32) >>> 0;
    let t = slotOf(lo, hi);
    while (value[t] !== -1) t = (t + 1) & mask;
    keyLo[t] = lo;
    keyHi[t] = hi;
    value[t] = index;
  }
  const slots = new Float64Array(c.roots + 16);
  const INDIRECT_RSP = 3 | (7 << 8);
  return () => {
    let sp = c.start.sp;
    let raLo = c.start.ra >>> 0;
    let raHi = (c.start.ra / TWO_32) >>> 0;
    const top = c.start.stackTop!;
    let frames = 0;
    let n = 0;
    let sum = 0;
    while (sp < top) {
      let t = slotOf(raLo, raHi);
      let i = -1;
      for (;;) {
        const v = value[t]!;
        if (v < 0) break;
        if (keyLo[t] === raLo && keyHi[t] === raHi) {
          i = v;
          break;
        }
        t = (t + 1) & mask;
      }
      if (i < 0) throw new Error("sketch: unknown return address");
      const frameSize = d.frameSizeBytes[i]!;
      if (frameSize < 0 || (sp & 7) !== 0 || sp < base || sp + frameSize + 8 > end) throw new Error("sketch: frame shape not handled");
      const pairStart = d.pairStart[i]!;
      const pairCount = d.pairCount[i]!;
      const w0 = (sp - base) >>> 2;
      for (let p = 0; p < pairCount; p++) {
        const loc = d.pairs[(pairStart + p) * 2 + 1]!;
        if ((d.locations[loc * 2]! & 0xff0f) !== INDIRECT_RSP) throw new Error("sketch: location not handled");
        const offset = d.locations[loc * 2 + 1]!;
        slots[n++] = sp + offset;
        const w = w0 + (offset >> 2);
        sum += words[w + 1]! * TWO_32 + words[w]!;
      }
      const r = w0 + (frameSize >> 2);
      raLo = words[r]!;
      raHi = words[r + 1]!;
      sp += frameSize + 8;
      frames++;
    }
    return frames + sum + n;
  };
}

function walkCase(frames: number, many: boolean, quick: boolean): BenchCase {
  const sites = many ? "20k-sites" : "16-sites";
  const name = `Walk/${frames / 1000}k-frames-${sites}`;
  return {
    name,
    quick,
    run(timing) {
      const c = stack(frames, many);
      const rootwalk = rootwalkWalk(c);
      const walk = rootwalk.walk;
      // Check once that the walk saw every frame and read every root.
      const check = walk();
      const expected = c.frames + c.rootValueSum + c.roots;
      if (check !== expected) throw new Error(`${name}: walk checksum ${check}, expected ${expected}`);
      const ts = timeBatches(walk, c.frames, timing);
      const { samples: ref, output } = referenceWalk(c, ts.iterations, timing.repeats);
      // Both sides' last walks, value by value: the ratio is only honest on the same output.
      checkWalkOutputs(name, rootwalk.output(), output);
      const sketch = makeSketchWalk(c);
      if (sketch() !== expected) throw new Error(`${name}: sketch checksum differs`);
      const sketchNsPerOp = median(timeBatches(sketch, c.frames, timing).samplesNsPerOp);
      const split = makeSplitKeySketchWalk(c);
      if (split() !== expected) throw new Error(`${name}: split-key sketch checksum differs`);
      const splitKeySketchNsPerOp = median(timeBatches(split, c.frames, timing).samplesNsPerOp);
      return result(name, "frame", frames, "C walker (bench/native/walk-ref.c), same output checked value by value", ts, ref, {
        rootsPerFrame: c.roots / c.frames,
        rootwalkFramesPerSec: 1e9 / median(ts.samplesNsPerOp),
        rootwalkRootsPerSec: (1e9 * c.roots) / c.frames / median(ts.samplesNsPerOp),
        referenceFramesPerSec: 1e9 / median(ref.samplesNsPerOp),
        sketchNsPerOp,
        sketchRatio: sketchNsPerOp / median(ref.samplesNsPerOp),
        splitKeySketchNsPerOp,
        splitKeySketchRatio: splitKeySketchNsPerOp / median(ref.samplesNsPerOp),
      });
    },
  };
}

/*
 * Lookup: the scan kernel's table probe (walker/scan-kernel/recipe-lookup.ts, the probe a scan runs
 * per frame) over 2^20 addresses in one call, each answered with its recipe index in place, against
 * walk-ref.c's `find` writing one i32 per address: same table, hash, probe and one load of the
 * payload. `jsFindNsPerOp` is SafepointTable.find per address in JavaScript (the general unwinder's
 * and the registry's single lookups; it returns the slot, no payload), against the same C median.
 */
function lookupCase(hits: boolean): BenchCase {
  const name = `Lookup/${hits ? "hit" : "miss"}-20k-keys`;
  return {
    name,
    quick: true,
    run(timing) {
      const c = stack(10_000, true);
      const queries = hits ? c.hitQueries : c.missQueries;
      const n = queries.length;
      const memory = scanMemory();
      const region = memory.allocate(12 * n, "the Lookup case's addresses and answers");
      try {
        const words = new Uint32Array(memory.buffer, region.offset, 2 * n);
        for (let q = 0; q < n; q++) {
          words[2 * q] = queries[q]! >>> 0;
          words[2 * q + 1] = Math.floor(queries[q]! / TWO_32);
        }
        const answers = new Int32Array(memory.buffer, region.offset + 8 * n, n);
        const layout = c.snapshot.scanLayout;
        const kernelLookups = (): number => {
          findRecipes(layout, words, answers);
          return answers[n - 1]!;
        };
        const table = c.snapshot.table;
        const jsFinds = (): number => {
          let acc = 0;
          for (let q = 0; q < n; q++) acc += table.find(queries[q]!);
          return acc;
        };
        const file = inputPath(`lookup-${hits ? "hit" : "miss"}.bin`);
        writeFileAtomic(file, stackCorpusFile(c, queries));
        const ts = timeBatches(kernelLookups, n, timing);
        const ref = runReference("walk-ref.c", ["lookup", file, ts.iterations, timing.repeats]);
        let found = 0;
        for (let q = 0; q < n; q++) if (answers[q] !== RECIPE_NOT_FOUND) found++;
        if (found !== ref["found"] || found !== (hits ? n : 0)) {
          throw new ReferenceMismatchError(
            `${name}: rootwalk found ${found} of ${n} addresses, the C reference ${String(ref["found"])}, expected ${hits ? n : 0}`,
          );
        }
        const jsFindNsPerOp = median(timeBatches(jsFinds, n, timing).samplesNsPerOp);
        return result(name, "lookup", c.sites.length, "C open-addressing table (bench/native/walk-ref.c), one answer per address", ts, ref, {
          queries: n,
          jsFindNsPerOp,
          jsFindRatio: jsFindNsPerOp / median(ref.samplesNsPerOp),
          tableBytesPerSafepoint: c.tableBytesPerSafepoint,
          scanPathBytesPerSafepoint: scanPathBytesPerSafepoint(c.snapshot),
        });
      } finally {
        region.release();
      }
    },
  };
}

const publicLookupCorpora = new Map<number, StackCorpus>();
/** 20k keys: the Lookup cases' corpus; 100k: a map of 100,000 call sites, one frame of stack (only its table and queries are used). */
function publicLookupCorpus(keys: number): StackCorpus {
  if (keys === 20_000) return stack(10_000, true);
  let c = publicLookupCorpora.get(keys);
  if (c === undefined) {
    c = buildStackCorpus(`lookup-${keys}`, { functions: keys / 10, recordsPerFunction: 10, rootsPerRecord: 4 }, 1, LOOKUP_QUERIES, 0x10c4 + keys);
    publicLookupCorpora.set(keys, c);
  }
  return c;
}

/*
 * PublicLookup: what an embedder's own walker calls per frame, `RegistrySnapshot.find` (one address,
 * a number, answered with the safepoint's index in the snapshot or -1; no allocation), once per
 * address over 2^20 addresses, each answer stored in an Int32Array. The reference is the Lookup
 * cases' C `find` (bench/native/walk-ref.c): the same open-addressing table (same hash, capacity
 * rule and keys), the same addresses, one i32 answer per address, the site index (the cell's
 * payload) or -1. The synthetic map lists its call sites in record order, so a hit's site index in
 * C is its safepoint index in rootwalk: the counts found and, for hits, the sums of the answers
 * must be equal. Extras: the same lookups with bigint addresses (`bigintNsPerOp`), the allocating
 * `snapshot.lookup` and `safepointAt` (on the first 4,096 addresses), against the same C median.
 */
function publicLookupCase(hits: boolean, keys: number): BenchCase {
  const name = `PublicLookup/${hits ? "hit" : "miss"}-${keys / 1000}k-keys`;
  return {
    name,
    quick: true,
    run(timing) {
      const c = publicLookupCorpus(keys);
      const queries = hits ? c.hitQueries : c.missQueries;
      const n = queries.length;
      const snapshot = c.snapshot;
      const answers = new Int32Array(n);
      const finds = (): number => findEach(snapshot, queries, answers);
      const file = inputPath(`public-lookup-${keys}-${hits ? "hit" : "miss"}.bin`);
      writeFileAtomic(file, stackCorpusFile(c, queries));
      const ts = timeBatches(finds, n, timing);
      const ref = runReference("walk-ref.c", ["lookup", file, ts.iterations, timing.repeats]);
      checkPublicAnswers(name, answers, hits, ref);
      const refNs = median(ref.samplesNsPerOp);
      const extras = allocatingLookupCosts(snapshot, queries, timing);
      return result(name, "lookup", keys, "C open-addressing table (bench/native/walk-ref.c), one answer per address", ts, ref, {
        queries: n,
        bigintNsPerOp: extras.bigintNsPerOp,
        bigintRatio: extras.bigintNsPerOp / refNs,
        allocatingLookupNsPerOp: extras.lookupNsPerOp,
        allocatingLookupRatio: extras.lookupNsPerOp / refNs,
        safepointAtNsPerOp: extras.safepointAtNsPerOp,
        safepointAtRatio: extras.safepointAtNsPerOp / refNs,
      });
    },
  };
}

/**
 * The timed loop of the PublicLookup cases: `snapshot.find` per address, each answer stored. A
 * module-level function over its arguments, as an embedder's walker holds its snapshot in a local:
 * a loop in the case's closure reads snapshot, queries and answers from the closure's context on
 * every call, and TurboFan makes them constants only for the first case that runs (its code is
 * specialized to that closure), so the closure loop timed the cases unequally (first 100k-key hit
 * case alone 3.0-3.5 ns per lookup, after another case 5.8-6.5; process CPU time, load 4-5).
 */
function findEach(snapshot: RegistrySnapshot, queries: Float64Array, answers: Int32Array): number {
  const n = queries.length;
  for (let q = 0; q < n; q++) answers[q] = snapshot.find(queries[q]!);
  return answers[n - 1]!;
}

/** rootwalk's answers against the C lookup's line: the counts found, and for hits the sums of the indices. */
function checkPublicAnswers(name: string, answers: Int32Array, hits: boolean, ref: Record<string, unknown>): void {
  let found = 0;
  let sum = 0;
  for (const a of answers) {
    if (a >= 0) found++;
    sum += a;
  }
  const expected = hits ? answers.length : 0;
  if (found !== ref["found"] || found !== expected) {
    throw new ReferenceMismatchError(
      `${name}: rootwalk found ${found} of ${answers.length} addresses, the C reference ${String(ref["found"])}, expected ${expected}`,
    );
  }
  if (hits && sum !== ref["checksum"]) {
    throw new ReferenceMismatchError(`${name}: the sum of rootwalk's answers is ${sum}, of the C reference's ${String(ref["checksum"])}`);
  }
}

/** The other ways to look an address up, per address: bigint addresses through `find`, `snapshot.lookup`, `safepointAt`. */
function allocatingLookupCosts(
  snapshot: RegistrySnapshot,
  queries: Float64Array,
  timing: TimingOptions,
): { bigintNsPerOp: number; lookupNsPerOp: number; safepointAtNsPerOp: number } {
  const n = queries.length;
  const big = Array.from(queries, (q) => BigInt(q));
  const short = { ...timing, repeats: Math.min(3, timing.repeats) };
  const bigints = (): number => {
    let acc = 0;
    for (let q = 0; q < n; q++) acc += snapshot.find(big[q]!);
    return acc;
  };
  const lookups = (): number => {
    let acc = 0;
    for (let q = 0; q < n; q++) acc += snapshot.lookup(queries[q]!)?.index ?? -1;
    return acc;
  };
  const few = Math.min(4096, n);
  const infos = (): number => {
    let acc = 0;
    for (let q = 0; q < few; q++) acc += safepointAt(snapshot, queries[q]!)?.roots.length ?? -1;
    return acc;
  };
  return {
    bigintNsPerOp: median(timeBatches(bigints, n, short).samplesNsPerOp),
    lookupNsPerOp: median(timeBatches(lookups, n, short).samplesNsPerOp),
    safepointAtNsPerOp: median(timeBatches(infos, few, short).samplesNsPerOp),
  };
}

// ---- Parse + index -----------------------------------------------------------------------------

function parseCase(records: number, quick: boolean): BenchCase {
  const label = records >= 1_000_000 ? `${records / 1_000_000}M` : `${records / 1000}k`;
  const name = `Parse/index-${label}-records`;
  return {
    name,
    quick,
    run(timing) {
      const bytes = encodeSyntheticStackMap({ functions: records / 10, recordsPerFunction: 10, rootsPerRecord: 4 });
      const file = inputPath(`stackmap-${label}.bin`);
      writeFileAtomic(file, bytes);
      const last = new SafepointRegistry();
      let handle: number | undefined;
      let registrations = 0;
      const parseAndIndex = (): number => {
        registrations++;
        // The previous registration is unregistered and its memory released for reuse, as the C
        // reference frees its own before the next one (the same work: a runtime unloading a
        // module; src/safepoints/registration-pool.ts), then the runtime's path (gc_init's
        // bytes): the scan kernel's index (every record checked, recipes, table), the
        // descriptors deferred to their first use.
        if (handle !== undefined) last.unregister(handle, { release: true });
        handle = registerStackMapBytes(last, bytes, { name: "bench" });
        return last.snapshot().safepointCount;
      };
      const faultsBefore = process.resourceUsage().minorPageFault;
      const ts = timeBatches(parseAndIndex, records, timing);
      // Fresh pages written per registration (warm-up and sizing calls included): with the
      // machine's price of one (freshPageNs), what moves this case between machines.
      const faultsPerRegistration = (process.resourceUsage().minorPageFault - faultsBefore) / registrations;
      const deferred = deferredDescriptorCosts(last.snapshot(), bytes);
      // After the timing: counting the descriptors' bytes decodes them all.
      const lastSafepointBytes = tableBytesPerSafepoint(last.snapshot());
      // The same registration in C (checks, recipes, table, the section's copy), its output
      // compared with rootwalk's; and, for comparison, LLVM's parser + an unordered_map (the
      // reference before issue 34, which checks no location and builds no recipe).
      const ref = runReference("parse-ref.cpp", [file, ts.iterations, timing.repeats, "index"]);
      const lastModule = last.snapshot().moduleBySlot[0]!;
      checkRegistrationOutputs(name, last.snapshot().safepointCount, lastModule.recipes, ref);
      const parserOnly = runReference("parse-ref.cpp", [file, ts.iterations, timing.repeats, "parse"]);
      // The scan kernel's index alone (copy in, index, copy out), what registration is built on.
      const kernelIndex = (): number => {
        const indexed = indexStackMapInKernel(bytes, 0)!;
        indexed.lease.release("bench kernel index", 0);
        return indexed.safepoints;
      };
      const kernel = timeBatches(kernelIndex, records, { ...timing, repeats: Math.min(3, timing.repeats) });
      const parserOnlyNsPerRecord = median(parserOnly.samplesNsPerOp);
      return result(name, "record", records, "the same registration in C (bench/native/parse-ref.cpp index)", ts, ref, {
        mapBytes: bytes.length,
        tableBytesPerSafepoint: lastSafepointBytes,
        kernelIndexNsPerRecord: median(kernel.samplesNsPerOp),
        minorFaultsPerRegistration: faultsPerRegistration,
        referenceMinorFaultsPerRegistration: ref["minorFaultsPerOp"] as number,
        freshPageNs: freshPageCost().freshNsPerPage,
        parserOnlyNsPerRecord,
        parserOnlyRatio: median(ts.samplesNsPerOp) / parserOnlyNsPerRecord,
        ...deferred,
      });
    },
  };
}

/**
 * What registration defers, paid when first needed (src/loader/deferred-llvm-descriptors.ts):
 * the general unwinder's first visit of a safepoint, which decodes its block (`recordDecodeNs`:
 * the median over up to 1000 safepoints in distinct blocks spread over the map, the first of them
 * paying for the block offsets and the functions; a map of one block is decoded whole), every
 * block once (`blockDescriptorsNsPerRecord`: the most the collections can pay) and every
 * descriptor at once (`allDescriptorsNsPerRecord`: a report), per record, each on a fresh copy
 * of the section made outside the timing.
 */
function deferredDescriptorCosts(
  snapshot: RegistrySnapshot,
  bytes: Uint8Array,
): { recordDecodeNs: number; blockDescriptorsNsPerRecord: number; allDescriptorsNsPerRecord: number } {
  const deferred = snapshot.moduleBySlot[0]!.deferred!;
  const step = Math.max(RECORD_BLOCK_SIZE, Math.floor(deferred.count / 1000));
  const samples: number[] = [];
  for (let i = 0; i < deferred.count; i += step) samples.push(elapsedNs(() => deferred.descriptorsOf(i)));
  const blocks = new DeferredLlvmDescriptors(bytes, deferred.count, 0);
  const blocksNs = elapsedNs(() => {
    for (let i = 0; i < blocks.count; i += RECORD_BLOCK_SIZE) blocks.descriptorsOf(i);
  });
  const whole = new DeferredLlvmDescriptors(bytes, deferred.count, 0);
  const allNs = elapsedNs(() => whole.all());
  return { recordDecodeNs: median(samples), blockDescriptorsNsPerRecord: blocksNs / deferred.count, allDescriptorsNsPerRecord: allNs / deferred.count };
}

function elapsedNs(work: () => unknown): number {
  const start = process.hrtime.bigint();
  work();
  return Number(process.hrtime.bigint() - start);
}

// ---- Collector ---------------------------------------------------------------------------------

/**
 * rootwalk's mark: the roots visited and the graph traced (CycleStats.phaseMs scan +
 * traceEvacuate, timed by the collector in each collection; nothing moves, defrag is off), per
 * marked object, one sample per timed batch (the last `repeats` x `iterations` collections).
 * Not in it: preparing the mark bits (the C loop clears its bitmap and line marks inside its
 * timing, under 1 % of it) and the sweep.
 */
function markPhaseSamples(markMs: readonly number[], iterations: number, repeats: number, marked: number): number[] {
  const timed = markMs.slice(markMs.length - iterations * repeats);
  return Array.from(
    { length: repeats },
    (_, r) => (timed.slice(r * iterations, (r + 1) * iterations).reduce((a, b) => a + b, 0) * 1e6) / (iterations * marked),
  );
}

function collectorCase(objects: number, quick: boolean): BenchCase {
  const name = `Collector/mark-${objects / 1000}k-objects`;
  return {
    name,
    quick,
    run(timing) {
      const h = buildHeapCorpus(objects, 256, 0xc011ec7);
      const first = h.collector.collect("bench warm-up");
      const marked = first.markedObjects;
      const file = inputPath(`heap-${objects}.bin`);
      writeFileAtomic(file, heapCorpusFile(h));
      const pauses: number[] = [];
      const markMs: number[] = [];
      const collect = (): number => {
        const cycle = h.collector.collect("bench");
        pauses.push(cycle.pauseMs);
        markMs.push(cycle.phaseMs.scan + cycle.phaseMs.traceEvacuate);
        if (cycle.markedObjects !== marked) throw new Error(`${name}: marked ${cycle.markedObjects}, first collection ${marked}`);
        return cycle.markedObjects;
      };
      const whole = timeBatches(collect, marked, { ...timing, batchMs: Math.max(timing.batchMs, 1) });
      const ts = { iterations: whole.iterations, samplesNsPerOp: markPhaseSamples(markMs, whole.iterations, timing.repeats, marked) };
      const ref = runReference("mark-ref.c", [file, ts.iterations, timing.repeats]);
      if (ref["objects"] !== marked) throw new Error(`${name}: C marked ${String(ref["objects"])} objects, the collector ${marked}`);
      return result(name, "marked object", objects, "C mark loop (bench/native/mark-ref.c): mark bits + line marks, from the roots", ts, ref, {
        markedObjects: marked,
        markedBytes: first.markedBytes,
        rootwalkPauseMs: median(pauses),
        referenceMarkMs: (median(ref.samplesNsPerOp) * marked) / 1e6,
        rootwalkMarkedObjectsPerSec: 1e9 / median(ts.samplesNsPerOp),
        wholeCollectionNsPerOp: median(whole.samplesNsPerOp),
        wholeCollectionRatio: median(whole.samplesNsPerOp) / median(ref.samplesNsPerOp),
        note: "ratio = rootwalk's mark (roots + trace phases of ImmixCollector.collect(), phaseMs.scan + traceEvacuate) / the C mark loop; wholeCollectionRatio = a whole collect() (prepare, mark, line marks, sweep) / the same C loop",
      });
    },
  };
}

// ---- Verify ------------------------------------------------------------------------------------

/**
 * The heap verifier (gc/heap-verifier.ts, what `--verify` runs after each collection) over the
 * Collector case's graph: per reachable object, its checks, the traversal index and the graph
 * hash. The reference is the C mark loop over the same bytes (a traversal of the same graph with
 * no checks and no hashing: the floor for one pass like a mark); `verifyOverCollect` is the
 * verification's time over the collection's own, the "verify adds at most 1x".
 */
function verifyCase(objects: number, quick: boolean): BenchCase {
  const name = `Verify/graph-${objects / 1000}k-objects`;
  return {
    name,
    quick,
    run(timing) {
      const h = buildHeapCorpus(objects, 256, 0xc011ec7);
      const cycle = h.collector.collect("bench warm-up");
      const reachable = h.collector.verifyHeap();
      if (reachable.failures !== 0) throw new Error(`${name}: ${reachable.failures} verify failures: ${reachable.messages[0]}`);
      if (reachable.objects !== cycle.markedObjects) throw new Error(`${name}: verified ${reachable.objects} objects, marked ${cycle.markedObjects}`);
      const file = inputPath(`heap-${objects}.bin`);
      writeFileAtomic(file, heapCorpusFile(h));
      const verify = (): number => h.collector.verifyHeap().objects;
      const ts = timeBatches(verify, reachable.objects, { ...timing, batchMs: Math.max(timing.batchMs, 1) });
      const collectNs = timeBatches(() => h.collector.collect("bench").markedObjects, reachable.objects, { ...timing, batchMs: Math.max(timing.batchMs, 1) });
      const ref = runReference("mark-ref.c", [file, ts.iterations, timing.repeats]);
      if (ref["objects"] !== reachable.objects)
        throw new Error(`${name}: C marked ${String(ref["objects"])} objects, the verifier reached ${reachable.objects}`);
      return result(name, "reached object", objects, "C mark loop (bench/native/mark-ref.c) over the same graph: traversal only", ts, ref, {
        reachableObjects: reachable.objects,
        verifyOverCollect: median(ts.samplesNsPerOp) / median(collectNs.samplesNsPerOp),
        note: "rootwalk = gc/heap-verifier.ts inspectGraph after a collection (checks, traversal index, graph hash); verifyOverCollect = its time / ImmixCollector.collect()'s",
      });
    },
  };
}

// ---- Native scan -------------------------------------------------------------------------------

export interface NativeScanResult {
  /** rootwalk's scan rate, median over the runs (frames / scan time). */
  framesPerSec: number;
  /** The C reference's rate on the same scans, median over the runs. */
  referenceFramesPerSec: number;
  /** Frames, scan ms and collections of the median run (by rootwalk ns/frame). */
  frames: number;
  scanMs: number;
  collections: number;
  /** The collector's root visits after each scan (root values read, each traced), ns per frame, median. */
  rootVisitNsPerFrame: number;
  program: string;
  /** The case as a ratio row (rootwalk ns/frame vs the C walk's, one sample per run). */
  case: CaseResult;
}

interface NativeScanRun {
  result: string;
  collections: number;
  scanMs: number;
  scanFrames: number;
  rootVisitMs: number;
  reference: { ms: number; frames: number; pairs: number; scans: number };
}

/**
 * A full safepoint scan of a real native stack: test/native-programs/sp-deep-recursion.ll (100,001
 * frames, llc -O2) run by the native runtime with a collection at every safepoint and allocation
 * (22 collections, 1,000,043 frames); the runtime times every stack scan as a whole (thread
 * records read, each stopped stack seen in place in the scan memory, every frame walked, every
 * root slot recorded; not the collector's visits of the roots, reported apart). With `stacks`
 * "copy", the measured alternative: each stack seen through a koffi view, which the scan kernel
 * copies into the scan memory at every scan (bench/HISTORY.md, "Native stacks"). After each scan the C reference
 * (bench/native/native-scan-ref.c, loaded into the same process) scans the same stopped stacks
 * with a copy of the same table and recipes, timed in C, and must find the same frames and root
 * pairs (the run fails otherwise). One sample per run: each run is its own process, so every
 * sample includes the JIT's warm-up on the first scans.
 */
export async function measureNativeScan(runs: number, stacks: "in-place" | "copy" = "in-place"): Promise<NativeScanResult> {
  const { compileProgram } = await import("../src/toolchain/compile-program.js");
  const { buildRuntime, linkProgram } = await import("../src/native/build-runtime.js");
  const source = join(repoRoot(), "test", "native-programs", "sp-deep-recursion.ll");
  const runtime = buildRuntime();
  const program = linkProgram([await compileProgram(source, { mode: "statepoint" })], runtime);
  const reference = buildReferenceLibrary("native-scan-ref.c");
  const entry = join(dirname(fileURLToPath(import.meta.url)), "native-scan-entry.js");
  const results: NativeScanRun[] = [];
  for (let i = 0; i < runs; i++) {
    const child = spawnSync(process.execPath, [entry, program, runtime, reference, stacks], { encoding: "utf8", timeout: 120_000 });
    if (child.status !== 0) throw new Error(`native scan failed (exit ${child.status}): ${child.stderr}`);
    const r = JSON.parse(child.stdout) as NativeScanRun;
    if (r.result !== "100001") throw new Error(`native scan: sp-deep-recursion returned ${r.result}, expected 100001`);
    if (r.reference.frames !== r.scanFrames) throw new Error(`native scan: the C reference walked ${r.reference.frames} frames, rootwalk ${r.scanFrames}`);
    results.push(r);
  }
  const tsNs = results.map((r) => (r.scanMs * 1e6) / r.scanFrames);
  const refNs = results.map((r) => (r.reference.ms * 1e6) / r.reference.frames);
  const medianRun = results[tsNs.indexOf([...tsNs].sort((a, b) => a - b)[Math.floor((tsNs.length - 1) / 2)]!)]!;
  const visitNs = median(results.map((r) => (r.rootVisitMs * 1e6) / r.scanFrames));
  const row = result(
    stacks === "copy" ? "NativeScan/frames-stack-copied" : "NativeScan/frames",
    "frame",
    100_001,
    "bench/native/native-scan-ref.c: the same stopped stacks and the same table + recipes, in C, in the same collections",
    { iterations: medianRun.collections, samplesNsPerOp: tsNs },
    { samplesNsPerOp: refNs },
    {
      rootwalkFramesPerSec: 1e9 / median(tsNs),
      referenceFramesPerSec: 1e9 / median(refNs),
      rootVisitNsPerFrame: visitNs,
      framesPerRun: medianRun.scanFrames,
      rootPairsPerRun: medianRun.reference.pairs,
    },
  );
  return {
    framesPerSec: 1e9 / median(tsNs),
    referenceFramesPerSec: 1e9 / median(refNs),
    frames: medianRun.scanFrames,
    scanMs: medianRun.scanMs,
    collections: medianRun.collections,
    rootVisitNsPerFrame: visitNs,
    program: "sp-deep-recursion (100,001 frames)",
    case: row,
  };
}

export function corpus(): BenchCase[] {
  return [
    walkCase(10_000, false, true),
    walkCase(10_000, true, true),
    walkCase(100_000, false, false),
    walkCase(100_000, true, false),
    lookupCase(true),
    lookupCase(false),
    publicLookupCase(true, 20_000),
    publicLookupCase(false, 20_000),
    publicLookupCase(true, 100_000),
    publicLookupCase(false, 100_000),
    parseCase(1_000, true),
    parseCase(10_000, true),
    parseCase(100_000, true),
    parseCase(1_000_000, false),
    collectorCase(100_000, true),
    collectorCase(1_000_000, false),
    verifyCase(100_000, true),
    verifyCase(1_000_000, false),
  ];
}
