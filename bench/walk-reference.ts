import { readFileSync } from "node:fs";
import { readU64 } from "../src/bytes/word-codec.js";
import { hex } from "../src/errors.js";
import { runTool, writeFileAtomic } from "../src/toolchain/llvm-toolchain.js";
import { scanStackRoots } from "../walker/fast-scan.js";
import { ScanKernel } from "../walker/kernel-binding.js";
import { RootPairs } from "../walker/frame-roots.js";
import { Unwinder } from "../walker/unwinder.js";
import { type NativeSamples, buildReference, inputPath } from "./native-refs.js";
import { type StackCorpus, stackCorpusFile } from "./stack-corpus.js";

/*
 * The Walk cases' two sides and the check that they produce the same output.
 *
 * The contract (bench/README.md, "The walk's output contract"): what a moving collector needs from
 * a stack scan, as rootwalk's RootPairs holds it (walker/frame-roots.ts): for every (base, derived)
 * root pair in walk order, the base slot's address, the derived slot's address and the value in
 * the base slot; for every frame with pairs, its index and its first pair; and the number of
 * frames walked. rootwalk's
 * fast loop (walker/fast-scan.ts) writes exactly that; bench/native/walk-ref.c writes the same
 * columns and hands its last walk's output back in a file. Every bench run compares the two value
 * by value: a reference that does less work than rootwalk makes a ratio that flatters neither.
 */

/** A walk's output: the frame count and the RootPairs columns (the C side's as read back). */
export interface WalkOutput {
  frames: number;
  pairs: number;
  baseSlots: ArrayLike<number>;
  derivedSlots: ArrayLike<number>;
  baseValues: ArrayLike<number>;
  /** Frame records, RootPairs.frameRecords' layout: [2k] frame index, [2k + 1] first pair. */
  frameRecordCount: number;
  frameRecords: ArrayLike<number>;
}

/** The C reference's output does not equal rootwalk's: the bench fails with exit code 4. */
export class ReferenceMismatchError extends Error {}

/** rootwalk's side of a Walk case: the walk and the output of its last call. */
export interface RootwalkWalk {
  /** One walk as the collector runs it, then every root's value visited; returns a checksum. */
  walk: () => number;
  /** The output of the last `walk()`. */
  output: () => WalkOutput;
}

/**
 * One walk with the real walker as the collector runs it (StackRootScanner): the fast scan loop
 * (walker/fast-scan.ts, the general Unwinder for frames it does not take) into a reused
 * RootPairs, then every root's value read. The checksum is frames + root values + pairs.
 */
export function rootwalkWalk(c: StackCorpus): RootwalkWalk {
  const u = new Unwinder(c.snapshot, c.memory, { mode: "strict" });
  const pairs = new RootPairs();
  const kernel = new ScanKernel();
  let frames = 0;
  const walk = (): number => {
    pairs.clear();
    frames = scanStackRoots(u, c.start, pairs, kernel);
    // The count is read once, as the C loop does: re-read in the loop condition, TurboFan kept
    // `sum` boxed (a heap number per root) in some compilations and not others, about 110 more
    // instructions per frame (bench/HISTORY.md, "Issue 19: where the 16-site walk and the native
    // scan spend their time").
    const count = pairs.count;
    return frames + visitRootValues(pairs.baseValues, count) + count;
  };
  const output = (): WalkOutput => ({
    frames,
    pairs: pairs.count,
    baseSlots: pairs.baseSlots,
    derivedSlots: pairs.derivedSlots,
    baseValues: pairs.baseValues,
    frameRecordCount: pairs.frameCount,
    frameRecords: pairs.frameRecords,
  });
  return { walk, output };
}

/**
 * The collector's visit of the roots as the Walk cases model it: every base value read and added
 * (walk-ref.c's visit_roots adds them as u64). Four sums, not one: a float64 add waits 3 cycles
 * for the one before it, so a single sum cost 12 cycles per 4-root frame against C's integer adds
 * at 1 cycle (bench/HISTORY.md, "Issue 19: the 16-site walk's kernel loop and the harness's visit").
 * Every partial sum stays exact on the bench's corpora (the values are multiples of 8 and every
 * sum is below 2^56, where doubles are 8 apart at most), so the result is the sequential sum's.
 */
function visitRootValues(values: Float64Array, count: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  // The bound of the four-at-a-time loop computed once (the same elements as `i + 4 <= count`):
  // tested as `i + 4 <= count`, the loop ran 1.5x slower (bench/HISTORY.md, issue 34).
  const end = count & ~3;
  for (let i = 0; i < end; i += 4) {
    s0 += values[i]!;
    s1 += values[i + 1]!;
    s2 += values[i + 2]!;
    s3 += values[i + 3]!;
  }
  for (let i = end; i < count; i++) s0 += values[i]!;
  return s0 + s1 + (s2 + s3);
}

/**
 * Runs bench/native/walk-ref.c (or `executable`, an altered build of it) on `c`, `iterations`
 * walks per sample, and reads back the output of its last walk.
 */
export function referenceWalk(
  c: StackCorpus,
  iterations: number,
  repeats: number,
  executable = buildReference("walk-ref.c"),
): { samples: NativeSamples; output: WalkOutput } {
  const input = inputPath(`stack-${c.name}.bin`);
  const outputFile = inputPath(`stack-${c.name}.out`);
  writeFileAtomic(input, stackCorpusFile(c, new Float64Array(0)));
  const samples = JSON.parse(runTool(executable, ["walk", input, String(iterations), String(repeats), outputFile]).trim()) as NativeSamples;
  return { samples, output: readReferenceOutput(readFileSync(outputFile)) };
}

/** Decodes walk-ref.c's output file (layout in its header comment). */
function readReferenceOutput(file: Uint8Array): WalkOutput {
  const bytes = new Uint8Array(file); // a copy at offset 0: the columns are read as aligned arrays
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2);
  const frames = readU64(words, 0);
  const pairs = readU64(words, 2);
  const records = readU64(words, 4);
  const expectedBytes = 24 + pairs * 24 + records * 8;
  if (bytes.byteLength !== expectedBytes)
    throw new ReferenceMismatchError(
      `the C walker's output has ${bytes.byteLength} bytes, expected ${expectedBytes} for ${pairs} pairs and ${records} frame records`,
    );
  const column = (start: number): number[] => Array.from({ length: pairs }, (_, i) => readU64(words, start + 2 * i));
  return {
    frames,
    pairs,
    baseSlots: column(6),
    derivedSlots: column(6 + 2 * pairs),
    baseValues: column(6 + 4 * pairs),
    frameRecordCount: records,
    frameRecords: new Int32Array(bytes.buffer, bytes.byteOffset + 24 + 24 * pairs, 2 * records),
  };
}

/** The first difference between the two outputs, in one line; undefined when they are equal. */
export function firstWalkDifference(rootwalk: WalkOutput, reference: WalkOutput): string | undefined {
  if (rootwalk.frames !== reference.frames) return `frame count: C ${reference.frames}, rootwalk ${rootwalk.frames}`;
  if (rootwalk.pairs !== reference.pairs) return `root pair count: C ${reference.pairs}, rootwalk ${rootwalk.pairs}`;
  if (rootwalk.frameRecordCount !== reference.frameRecordCount)
    return `frame record count: C ${reference.frameRecordCount}, rootwalk ${rootwalk.frameRecordCount}`;
  const pair = (o: WalkOutput, i: number): string => `(base ${hex(o.baseSlots[i]!)}, derived ${hex(o.derivedSlots[i]!)}, value ${hex(o.baseValues[i]!)})`;
  for (let i = 0; i < rootwalk.pairs; i++) {
    if (
      rootwalk.baseSlots[i] !== reference.baseSlots[i] ||
      rootwalk.derivedSlots[i] !== reference.derivedSlots[i] ||
      rootwalk.baseValues[i] !== reference.baseValues[i]
    ) {
      return `root pair ${i}: C ${pair(reference, i)}, rootwalk ${pair(rootwalk, i)}`;
    }
  }
  const record = (o: WalkOutput, k: number): string => `(frame #${o.frameRecords[2 * k]}, first pair ${o.frameRecords[2 * k + 1]})`;
  for (let k = 0; k < rootwalk.frameRecordCount; k++) {
    if (rootwalk.frameRecords[2 * k] !== reference.frameRecords[2 * k] || rootwalk.frameRecords[2 * k + 1] !== reference.frameRecords[2 * k + 1]) {
      return `frame record ${k}: C ${record(reference, k)}, rootwalk ${record(rootwalk, k)}`;
    }
  }
  return undefined;
}

/** Throws ReferenceMismatchError naming the case and the first difference, if there is one. */
export function checkWalkOutputs(caseName: string, rootwalk: WalkOutput, reference: WalkOutput): void {
  const difference = firstWalkDifference(rootwalk, reference);
  if (difference !== undefined) throw new ReferenceMismatchError(`${caseName}: the C walker's output differs from rootwalk's at ${difference}`);
}
