import { FrameDescriptors, type FunctionInfo } from "../safepoints/frame-descriptors.js";
import type { DeferredDescriptors } from "../safepoints/registry.js";
import { liveOutsOffset, parseStackMapSection, recordEndOffset } from "../stackmap/llvm-stackmap.js";
import {
  CONSTANT_SIZE_BYTES,
  FUNCTION_RECORD_COUNT,
  FUNCTION_SIZE_BYTES,
  HEADER_NUM_CONSTANTS,
  HEADER_NUM_FUNCTIONS,
  HEADER_NUM_RECORDS,
  HEADER_SIZE_BYTES,
  LIVE_OUTS_COUNT,
  RECORD_NUM_LOCATIONS,
} from "../stackmap/stackmap-v3-layout.js";
import { buildLlvmDescriptors } from "./llvm-map-loader.js";

/*
 * The frame descriptors of a `.llvm_stackmaps` section registered through the scan kernel's index
 * (src/loader/register-maps.ts `registerStackMapBytes`), decoded when first needed rather than at
 * registration, as LLVM's StackMapParser decodes a record when it is asked for it.
 *
 * Registration has already checked the whole section (the kernel indexes only sections the general
 * path accepts, and the section fuzzer compares the two on every mutation) and built the table and
 * scan recipes, which are all the scan kernel reads. The general unwinder needs a frame's
 * descriptor only for the frames the kernel hands it (the first managed frame of a native scan,
 * frames that are not plain). Its first use of a safepoint decodes the block of `blockSize`
 * consecutive safepoints holding it (block b: safepoints [b * blockSize, (b + 1) * blockSize)),
 * with the general decoder (parseStackMapSection + buildLlvmDescriptors, the `dump` decoder: the
 * one source of record semantics) run on a section made of those records alone, their functions
 * and constant pools. A report or the registry's own bookkeeping (`rootwalk safepoints`,
 * unregister, registering the same map again) takes `all()`: the whole section through the
 * general path, once; the blocks are then dropped and every lookup reads it.
 *
 * Invariant (what bounds the deferred cost): each block is decoded at most once and kept until
 * `all()`, and a section of at most `blockSize` safepoints is decoded whole. So however many
 * safepoints the collections visit, the blocks cost at most
 *   count x (the general path's cost per record) + ceil(count / blockSize) x (one decode's fixed cost)
 * (the fixed cost: some 30 small arrays, the decoder's setup and the garbage they make, 30-80 us).
 * Measured with the default block of 1024 (CPU, 100k-1M records): every block once 365-570 ns per
 * record, `all()` 270-360, so the collections pay at most about 1.6x what eager registration
 * paid, and a first use 0.4-0.6 ms (blocks of 256: 2x and 0.15 ms; bench/README.md,
 * "registration through the kernel index"). `all()` then costs the general path's cost once more.
 * `blocksDecoded` counts the blocks.
 *
 * The section's bytes are copied once, at construction, and the copy is what every later decode
 * reads: a caller that reuses or overwrites its buffer after registration (the runtime reads
 * gc_init's bytes into a buffer of its own) cannot change a descriptor decoded later.
 */

/** Consecutive safepoints decoded together on the first use of one of them (the invariant above). */
export const RECORD_BLOCK_SIZE = 1024;

/** Where a record lies: record `k` of function `f` (of its blob), the blob's record `r`, at byte `at`. */
interface RecordPlace {
  blob: number;
  f: number;
  k: number;
  r: number;
  at: number;
}

/** The blobs, and where each block's first record lies (one pass over the records' counts, on first use). */
interface SectionIndex {
  /** Per blob: its byte offset in the section, and the index of its first function in `functions`. */
  readonly blobAt: number[];
  readonly firstFunctionOfBlob: number[];
  /** Per block: its first record's place. */
  readonly blockStart: RecordPlace[];
}

/** The records of one blob that a block holds: functions from `firstFunction`, records per function, bytes [start, end). */
interface BlobRun {
  readonly blob: number;
  readonly firstFunction: number;
  readonly recordsOfFunction: number[];
  readonly start: number;
  end: number;
}

export class DeferredLlvmDescriptors implements DeferredDescriptors {
  private whole: FrameDescriptors | undefined;
  private functionList: readonly FunctionInfo[] | undefined;
  private sectionIndex: SectionIndex | undefined;
  private blocks: (FrameDescriptors | undefined)[] = [];
  /** Blocks decoded so far, and the safepoints they held (the invariant above: each block once). */
  blocksDecoded = 0;
  safepointsDecodedInBlocks = 0;
  /** This object's own copy of the section. */
  private readonly bytes: Uint8Array;
  private readonly words: DataView;

  constructor(
    /** The section as registered; copied, so the caller may reuse its buffer afterwards. */
    section: Uint8Array,
    /** Safepoints (records) in the section, as the kernel counted them. */
    readonly count: number,
    private readonly loadBias: number,
    /** Safepoints per block (tests use small ones to cross functions and blobs). */
    readonly blockSize = RECORD_BLOCK_SIZE,
  ) {
    this.bytes = section.slice();
    this.words = new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
  }

  /** Whether `all()` has decoded every descriptor (reports, the registry's bookkeeping). */
  get allDecoded(): boolean {
    return this.whole !== undefined;
  }

  /** Every safepoint's descriptor, as `buildLlvmDescriptors` makes them at registration (bias applied). */
  all(): FrameDescriptors {
    if (this.whole === undefined) {
      this.whole = buildLlvmDescriptors(parseStackMapSection(this.bytes)).withBias(this.loadBias);
      this.blocks = [];
    }
    return this.whole;
  }

  /** Every function of every blob, in the order of `all().functions`. */
  functions(): readonly FunctionInfo[] {
    if (this.whole !== undefined) return this.whole.functions;
    return (this.functionList ??= this.decodeFunctions());
  }

  /**
   * Descriptors holding safepoint `index` at row `rowOf(index)` (its block, or all of them), every
   * column equal to row `index` of `all()`, locations and pairs numbered within them, `functions`
   * the module's list. Decodes its block on first use.
   */
  descriptorsOf(index: number): FrameDescriptors {
    if (this.whole !== undefined) return this.whole;
    if (this.count <= this.blockSize) return this.all();
    const b = Math.floor(index / this.blockSize);
    return (this.blocks[b] ??= this.decodeBlock(b));
  }

  /** Row of safepoint `index` in what `descriptorsOf(index)` returns. */
  rowOf(index: number): number {
    return this.whole !== undefined ? index : index % this.blockSize;
  }

  /** Block `b` through the general decoder: a section of its records, their functions and constants. */
  private decodeBlock(b: number): FrameDescriptors {
    const index = (this.sectionIndex ??= this.indexSection());
    const first = b * this.blockSize;
    const n = Math.min(this.blockSize, this.count - first);
    const functionIndex = new Uint32Array(n);
    const blobIndex = new Uint32Array(n);
    const recordIndex = new Uint32Array(n);
    const runs: BlobRun[] = [];
    const place = { ...index.blockStart[b]! };
    for (let i = 0; i < n; i++) {
      this.settle(place, index);
      let run = runs[runs.length - 1];
      if (run?.blob !== place.blob) runs.push((run = { blob: place.blob, firstFunction: place.f, recordsOfFunction: [], start: place.at, end: place.at }));
      while (run.firstFunction + run.recordsOfFunction.length <= place.f) run.recordsOfFunction.push(0);
      run.recordsOfFunction[place.f - run.firstFunction]!++;
      functionIndex[i] = index.firstFunctionOfBlob[place.blob]! + place.f;
      blobIndex[i] = place.blob;
      recordIndex[i] = place.r;
      place.at = this.recordEnd(place.at);
      run.end = place.at;
      place.k++;
      place.r++;
    }
    const d = buildLlvmDescriptors(parseStackMapSection(this.sectionOf(runs, index))).withBias(this.loadBias);
    this.blocksDecoded++;
    this.safepointsDecodedInBlocks += n;
    return new FrameDescriptors(n, { ...d.columns, functionIndex, blobIndex, recordIndex }, this.functions(), d.architecture);
  }

  /** Moves `place` past functions with no record left and past the end of its blob's records, to the record it names. */
  private settle(place: RecordPlace, index: SectionIndex): void {
    for (;;) {
      const blobAt = index.blobAt[place.blob]!;
      const numFunctions = this.u32(blobAt + HEADER_NUM_FUNCTIONS);
      while (place.f < numFunctions && place.k >= this.recordsOfFunction(blobAt, place.f)) {
        place.f++;
        place.k = 0;
      }
      if (place.f < numFunctions) return;
      place.blob++;
      place.f = place.k = place.r = 0;
      place.at = this.recordsAt(index.blobAt[place.blob]!);
    }
  }

  /** One blob per run: its header and constants, the run's functions with their record counts in the run, its records. */
  private sectionOf(runs: readonly BlobRun[], index: SectionIndex): Uint8Array {
    const sizes = runs.map((run) => {
      const blobAt = index.blobAt[run.blob]!;
      return HEADER_SIZE_BYTES + run.recordsOfFunction.length * FUNCTION_SIZE_BYTES + this.constantsBytes(blobAt) + run.end - run.start;
    });
    const section = new Uint8Array(sizes.reduce((a, b) => a + b, 0));
    const view = new DataView(section.buffer);
    let out = 0;
    runs.forEach((run, k) => {
      const blobAt = index.blobAt[run.blob]!;
      const functionsAt = blobAt + HEADER_SIZE_BYTES + run.firstFunction * FUNCTION_SIZE_BYTES;
      const functionsBytes = run.recordsOfFunction.length * FUNCTION_SIZE_BYTES;
      const constantsAt = blobAt + HEADER_SIZE_BYTES + this.u32(blobAt + HEADER_NUM_FUNCTIONS) * FUNCTION_SIZE_BYTES;
      const constantsBytes = this.constantsBytes(blobAt);
      section.set(this.bytes.subarray(blobAt, blobAt + HEADER_SIZE_BYTES), out);
      section.set(this.bytes.subarray(functionsAt, functionsAt + functionsBytes), out + HEADER_SIZE_BYTES);
      section.set(this.bytes.subarray(constantsAt, constantsAt + constantsBytes), out + HEADER_SIZE_BYTES + functionsBytes);
      section.set(this.bytes.subarray(run.start, run.end), out + HEADER_SIZE_BYTES + functionsBytes + constantsBytes);
      view.setUint32(out + HEADER_NUM_FUNCTIONS, run.recordsOfFunction.length, true);
      view.setUint32(
        out + HEADER_NUM_RECORDS,
        run.recordsOfFunction.reduce((a, b) => a + b, 0),
        true,
      );
      run.recordsOfFunction.forEach((records, f) => {
        view.setBigUint64(out + HEADER_SIZE_BYTES + f * FUNCTION_SIZE_BYTES + FUNCTION_RECORD_COUNT, BigInt(records), true);
      });
      out += sizes[k]!;
    });
    return section;
  }

  /** Each blob's functions through the general path: the blob's header and function table with no records. */
  private decodeFunctions(): FunctionInfo[] {
    const index = (this.sectionIndex ??= this.indexSection());
    const functions: FunctionInfo[] = [];
    for (const blobAt of index.blobAt) {
      const numFunctions = this.u32(blobAt + HEADER_NUM_FUNCTIONS);
      const table = new Uint8Array(HEADER_SIZE_BYTES + numFunctions * FUNCTION_SIZE_BYTES);
      table.set(this.bytes.subarray(blobAt, blobAt + table.byteLength));
      const view = new DataView(table.buffer);
      view.setUint32(HEADER_NUM_CONSTANTS, 0, true);
      view.setUint32(HEADER_NUM_RECORDS, 0, true);
      for (let f = 0; f < numFunctions; f++) view.setBigUint64(HEADER_SIZE_BYTES + f * FUNCTION_SIZE_BYTES + FUNCTION_RECORD_COUNT, 0n, true);
      functions.push(...buildLlvmDescriptors(parseStackMapSection(table)).functions);
    }
    return functions;
  }

  /** Walks every blob's records by their counts (the section was checked at registration), noting each block's first. */
  private indexSection(): SectionIndex {
    const index: SectionIndex = { blobAt: [], firstFunctionOfBlob: [], blockStart: [] };
    let offset = 0;
    let safepoint = 0;
    let functions = 0;
    while (offset < this.bytes.byteLength) {
      const blob = index.blobAt.length;
      const numFunctions = this.u32(offset + HEADER_NUM_FUNCTIONS);
      index.blobAt.push(offset);
      index.firstFunctionOfBlob.push(functions);
      let at = this.recordsAt(offset);
      let r = 0;
      for (let f = 0; f < numFunctions; f++) {
        const records = this.recordsOfFunction(offset, f);
        for (let k = 0; k < records; k++, r++, safepoint++) {
          if (safepoint % this.blockSize === 0) index.blockStart.push({ blob, f, k, r, at });
          at = this.recordEnd(at);
        }
      }
      functions += numFunctions;
      offset = at;
    }
    return index;
  }

  /** Where the record at `at` ends (the next record's start). */
  private recordEnd(at: number): number {
    const liveOuts = liveOutsOffset(at, this.u16(at + RECORD_NUM_LOCATIONS));
    return recordEndOffset(liveOuts, this.u16(liveOuts + LIVE_OUTS_COUNT));
  }
  private recordsAt(blobAt: number): number {
    return blobAt + HEADER_SIZE_BYTES + this.u32(blobAt + HEADER_NUM_FUNCTIONS) * FUNCTION_SIZE_BYTES + this.constantsBytes(blobAt);
  }
  private constantsBytes(blobAt: number): number {
    return this.u32(blobAt + HEADER_NUM_CONSTANTS) * CONSTANT_SIZE_BYTES;
  }
  private recordsOfFunction(blobAt: number, f: number): number {
    return this.u32(blobAt + HEADER_SIZE_BYTES + f * FUNCTION_SIZE_BYTES + FUNCTION_RECORD_COUNT);
  }
  private u32(offset: number): number {
    return this.words.getUint32(offset, true);
  }
  private u16(offset: number): number {
    return this.words.getUint16(offset, true);
  }
}
