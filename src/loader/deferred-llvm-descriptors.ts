import { ByteView } from "../bytes/byte-view.js";
import { littleEndianWords } from "../bytes/little-endian-words.js";
import type { FrameDescriptors, FunctionInfo } from "../safepoints/frame-descriptors.js";
import type { DeferredDescriptors } from "../safepoints/registry.js";
import { StackMapBlob, type StackMapBlobIndex, indexStackMapSection, parseStackMapSection } from "../stackmap/llvm-stackmap.js";
import { buildLlvmDescriptors, buildLlvmFunctions } from "./llvm-map-loader.js";
import type { RegistrationLease } from "../safepoints/registration-pool.js";

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
 * consecutive safepoints holding it (block b: safepoints [b * blockSize, (b + 1) * blockSize)):
 * the general decoder validates and decodes just those records (StackMapBlob.parseRecords, where
 * indexStackMapSection found each record once, from the counts: the one source of record
 * semantics) and the loader lowers them (buildLlvmDescriptors, told the section's functions). A
 * report or the registry's own bookkeeping (`rootwalk safepoints`,
 * unregister, registering the same map again) takes `all()`: the whole section through the
 * general path, once; the blocks are then dropped and every lookup reads it.
 *
 * Invariant (what bounds the deferred cost): each block is decoded at most once and kept until
 * `all()`, and a section of at most `blockSize` safepoints is decoded whole. So however many
 * safepoints the collections visit, the blocks cost at most
 *   count x (the general path's cost per record) + ceil(count / blockSize) x (one decode's fixed cost)
 * (the fixed cost: the decoder's and the builder's setup, some 20 small arrays).
 * Measured with the default block of 1024 (CPU, 100k-1M records): every block once 365-570 ns per
 * record, `all()` 270-360, so the collections pay at most about 1.6x what eager registration
 * paid, and a first use 0.4-0.6 ms (blocks of 256: 2x and 0.15 ms; bench/README.md,
 * "registration through the kernel index"). `all()` then costs the general path's cost once more.
 * Since blocks are decoded where they lie (no section synthesized per block; 2026-11-28, a fresh
 * process, 100k and 1M records): the first use 14-19 and 48 ms (was 24-28 and 69: the index of
 * every record and the function list included), every block once 390-460 and 240 ns per record
 * (was 460-530 and 320). `blocksDecoded` counts the blocks.
 *
 * The section's bytes are copied once, at construction (or handed over already copied: "adopt"),
 * and the copy is what every later decode reads: a caller that reuses or overwrites its buffer after registration (the runtime reads
 * gc_init's bytes into a buffer of its own) cannot change a descriptor decoded later.
 */

/** Consecutive safepoints decoded together on the first use of one of them (the invariant above). */
export const RECORD_BLOCK_SIZE = 1024;

/** The section's blobs (each record's offset and function, found once), where each blob's first record and first function are in the section's numbering. */
interface SectionIndex {
  readonly blobs: readonly StackMapBlobIndex[];
  /** blobs.length + 1 entries each. */
  readonly firstRecordOfBlob: readonly number[];
  readonly firstFunctionOfBlob: readonly number[];
}

export class DeferredLlvmDescriptors implements DeferredDescriptors {
  private whole: FrameDescriptors | undefined;
  private functionList: readonly FunctionInfo[] | undefined;
  private sectionIndex: SectionIndex | undefined;
  private blocks: (FrameDescriptors | undefined)[] = [];
  /** Blocks decoded so far, and the safepoints they held (the invariant above: each block once). */
  blocksDecoded = 0;
  safepointsDecodedInBlocks = 0;
  /** This object's own copy of the section, and its words (what the record decoder reads). */
  private readonly bytes: Uint8Array;
  private readonly section: ByteView;
  private readonly words: Uint32Array;

  constructor(
    /** The section as registered; copied, so the caller may reuse its buffer afterwards. */
    section: Uint8Array,
    /** Safepoints (records) in the section, as the kernel counted them. */
    readonly count: number,
    private readonly loadBias: number,
    /** Safepoints per block (tests use small ones to cross functions and blobs). */
    readonly blockSize = RECORD_BLOCK_SIZE,
    /**
     * "adopt": `section` is already a copy that nobody else holds or writes (the kernel index's,
     * made in the same allocation as the table and recipes), kept as it is instead of copied again.
     */
    ownership: "copy" | "adopt" = "copy",
    /**
     * The registration's buffers when `section` lies in one (the kernel index's): once released for
     * reuse (src/safepoints/registration-pool.ts) every method throws ReleasedModuleError instead
     * of reading, decoded blocks included (they may keep views of the section).
     */
    private readonly lease?: RegistrationLease,
  ) {
    this.bytes = ownership === "adopt" ? section : section.slice();
    this.section = new ByteView(this.bytes);
    this.words = littleEndianWords(this.bytes);
  }

  /** Whether `all()` has decoded every descriptor (reports, the registry's bookkeeping). */
  get allDecoded(): boolean {
    return this.whole !== undefined;
  }

  /** Every safepoint's descriptor, as `buildLlvmDescriptors` makes them at registration (bias applied). */
  all(): FrameDescriptors {
    this.lease?.check();
    if (this.whole === undefined) {
      this.whole = buildLlvmDescriptors(parseStackMapSection(this.bytes)).withBias(this.loadBias);
      this.blocks = [];
    }
    return this.whole;
  }

  /** Every function of every blob, in the order of `all().functions`. */
  functions(): readonly FunctionInfo[] {
    this.lease?.check();
    if (this.whole !== undefined) return this.whole.functions;
    return (this.functionList ??= buildLlvmFunctions(this.index().blobs.map((blob) => this.decode(blob, 0, 0))));
  }

  /**
   * Descriptors holding safepoint `index` at row `rowOf(index)` (its block, or all of them), every
   * column equal to row `index` of `all()`, locations and pairs numbered within them, `functions`
   * the module's list. Decodes its block on first use.
   */
  descriptorsOf(index: number): FrameDescriptors {
    this.lease?.check();
    if (this.whole !== undefined) return this.whole;
    if (this.count <= this.blockSize) return this.all();
    const b = Math.floor(index / this.blockSize);
    return (this.blocks[b] ??= this.decodeBlock(b));
  }

  /** Row of safepoint `index` in what `descriptorsOf(index)` returns. */
  rowOf(index: number): number {
    return this.whole !== undefined ? index : index % this.blockSize;
  }

  /** Block `b`: its records of each blob it spans, decoded where they lie and lowered together. */
  private decodeBlock(b: number): FrameDescriptors {
    const index = this.index();
    const first = b * this.blockSize;
    const end = Math.min(first + this.blockSize, this.count);
    const firstBlob = blobOfRecord(index, first);
    const runs: StackMapBlob[] = [];
    for (let k = firstBlob; k < index.blobs.length && index.firstRecordOfBlob[k]! < end; k++) {
      const base = index.firstRecordOfBlob[k]!;
      runs.push(this.decode(index.blobs[k]!, Math.max(first - base, 0), Math.min(end - base, index.blobs[k]!.numRecords)));
    }
    const sectionFunctions = { functions: this.functions(), firstFunctionOfBlob: index.firstFunctionOfBlob, firstBlob };
    const d = buildLlvmDescriptors(runs, { sectionFunctions }).withBias(this.loadBias);
    this.blocksDecoded++;
    this.safepointsDecodedInBlocks += d.count;
    return d;
  }

  /** Records [first, end) of a blob, validated and decoded. */
  private decode(blob: StackMapBlobIndex, first: number, end: number): StackMapBlob {
    return StackMapBlob.parseRecords(this.section, blob, first, end, this.words);
  }

  /** The section's index, made on first use. */
  private index(): SectionIndex {
    if (this.sectionIndex !== undefined) return this.sectionIndex;
    const blobs = indexStackMapSection(this.bytes);
    const firstRecordOfBlob = [0];
    const firstFunctionOfBlob = [0];
    for (const blob of blobs) {
      firstRecordOfBlob.push(firstRecordOfBlob[firstRecordOfBlob.length - 1]! + blob.numRecords);
      firstFunctionOfBlob.push(firstFunctionOfBlob[firstFunctionOfBlob.length - 1]! + blob.numFunctions);
    }
    return (this.sectionIndex = { blobs, firstRecordOfBlob, firstFunctionOfBlob });
  }
}

/** The blob holding the section's record `record` (the last blob whose first record is at or before it and that has records). */
function blobOfRecord(index: SectionIndex, record: number): number {
  let lo = 0;
  let hi = index.blobs.length - 1;
  // The last k with firstRecordOfBlob[k] <= record: blobs without records before it share its first record.
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (index.firstRecordOfBlob[mid]! <= record) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
