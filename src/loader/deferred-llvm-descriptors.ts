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
 * frames that are not plain): `record(i)` decodes safepoint i alone, with the general decoder
 * (parseStackMapSection + buildLlvmDescriptors, the `dump` decoder: the one source of record
 * semantics) run on a section of one function and that one record, and caches it (at most
 * RECORD_CACHE_LIMIT records; the cache starts again when full). A report or the registry's own
 * bookkeeping (`rootwalk safepoints`, unregister, registering the same map again) takes `all()`:
 * the whole section through the general path, once.
 *
 * The section's bytes are copied once, at construction, and the copy is what every later decode
 * reads: a caller that reuses or overwrites its buffer after registration (the runtime reads
 * gc_init's bytes into a buffer of its own) cannot change a descriptor decoded later. The copy
 * costs about a memcpy of the section (bench/README.md, "registration through the kernel index").
 */

/** Decoded single records kept per module; the cache is dropped and started again past it. */
export const RECORD_CACHE_LIMIT = 4096;

/** Where each safepoint's record lies, found by walking the records' counts (one pass, on first use). */
interface RecordIndex {
  /** Per safepoint: the record's byte offset in the section, its end, its blob, its function in that blob. */
  readonly recordAt: Uint32Array;
  readonly recordEnd: Uint32Array;
  readonly blobOf: Uint32Array;
  readonly functionInBlob: Uint32Array;
  readonly recordInBlob: Uint32Array;
  /** Per blob: its byte offset in the section, and the index of its first function in `functions`. */
  readonly blobAt: number[];
  readonly firstFunctionOfBlob: number[];
}

export class DeferredLlvmDescriptors implements DeferredDescriptors {
  private whole: FrameDescriptors | undefined;
  private functionList: readonly FunctionInfo[] | undefined;
  private recordIndex: RecordIndex | undefined;
  private readonly records = new Map<number, FrameDescriptors>();
  /** This object's own copy of the section. */
  private readonly bytes: Uint8Array;
  private readonly words: DataView;

  constructor(
    /** The section as registered; copied, so the caller may reuse its buffer afterwards. */
    section: Uint8Array,
    /** Safepoints (records) in the section, as the kernel counted them. */
    readonly count: number,
    private readonly loadBias: number,
  ) {
    this.bytes = section.slice();
    this.words = new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
  }

  /** Whether `all()` has decoded every descriptor (reports, the registry's bookkeeping). */
  get allDecoded(): boolean {
    return this.whole !== undefined;
  }
  /** Single safepoints decoded and cached (at most RECORD_CACHE_LIMIT). */
  get recordsDecoded(): number {
    return this.records.size;
  }

  /** Every safepoint's descriptor, as `buildLlvmDescriptors` makes them at registration (bias applied). */
  all(): FrameDescriptors {
    return (this.whole ??= buildLlvmDescriptors(parseStackMapSection(this.bytes)).withBias(this.loadBias));
  }

  /** Every function of every blob, in the order of `all().functions`. */
  functions(): readonly FunctionInfo[] {
    if (this.whole !== undefined) return this.whole.functions;
    return (this.functionList ??= this.decodeFunctions());
  }

  /**
   * Safepoint `index` alone: descriptors of one safepoint (row 0) whose every column equals row
   * `index` of `all()`, its locations and pairs numbered from 0, `functions` the module's list.
   */
  record(index: number): FrameDescriptors {
    let d = this.records.get(index);
    if (d === undefined) {
      if (this.records.size >= RECORD_CACHE_LIMIT) this.records.clear();
      d = this.decodeRecord(index);
      this.records.set(index, d);
    }
    return d;
  }

  private decodeRecord(index: number): FrameDescriptors {
    const at = (this.recordIndex ??= this.indexRecords());
    const blob = at.blobOf[index]!;
    const blobAt = at.blobAt[blob]!;
    const numFunctions = this.u32(blobAt + HEADER_NUM_FUNCTIONS);
    const constantsBytes = this.u32(blobAt + HEADER_NUM_CONSTANTS) * CONSTANT_SIZE_BYTES;
    const recordBytes = at.recordEnd[index]! - at.recordAt[index]!;
    // The blob's header, its record's function, its constant pool and the record: a blob of one.
    const one = new Uint8Array(HEADER_SIZE_BYTES + FUNCTION_SIZE_BYTES + constantsBytes + recordBytes);
    const functionAt = blobAt + HEADER_SIZE_BYTES + at.functionInBlob[index]! * FUNCTION_SIZE_BYTES;
    const constantsAt = blobAt + HEADER_SIZE_BYTES + numFunctions * FUNCTION_SIZE_BYTES;
    one.set(this.bytes.subarray(blobAt, blobAt + HEADER_SIZE_BYTES), 0);
    one.set(this.bytes.subarray(functionAt, functionAt + FUNCTION_SIZE_BYTES), HEADER_SIZE_BYTES);
    one.set(this.bytes.subarray(constantsAt, constantsAt + constantsBytes), HEADER_SIZE_BYTES + FUNCTION_SIZE_BYTES);
    one.set(this.bytes.subarray(at.recordAt[index]!, at.recordEnd[index]!), HEADER_SIZE_BYTES + FUNCTION_SIZE_BYTES + constantsBytes);
    const view = new DataView(one.buffer);
    view.setUint32(HEADER_NUM_FUNCTIONS, 1, true);
    view.setUint32(HEADER_NUM_RECORDS, 1, true);
    view.setBigUint64(HEADER_SIZE_BYTES + FUNCTION_RECORD_COUNT, 1n, true);
    const d = buildLlvmDescriptors(parseStackMapSection(one)).withBias(this.loadBias);
    return new FrameDescriptors(
      1,
      d.returnAddress,
      d.frameSizeBytes,
      d.stackSizeBytes,
      d.cfaRegister,
      d.cfaOffsetBytes,
      d.savedRegOffsets,
      d.flags,
      Uint32Array.of(at.firstFunctionOfBlob[blob]! + at.functionInBlob[index]!),
      Uint32Array.of(blob),
      Uint32Array.of(at.recordInBlob[index]!),
      d.locStart,
      d.deoptCount,
      d.pairStart,
      d.pairCount,
      d.allocaCount,
      d.locations,
      d.pairs,
      this.functions(),
      d.architecture,
    );
  }

  /** Each blob's functions through the general path: the blob's header and function table with no records. */
  private decodeFunctions(): FunctionInfo[] {
    const at = (this.recordIndex ??= this.indexRecords());
    const functions: FunctionInfo[] = [];
    for (const blobAt of at.blobAt) {
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

  /** Walks every blob's records by their counts (the section was checked at registration). */
  private indexRecords(): RecordIndex {
    const n = this.count;
    const index: RecordIndex = {
      recordAt: new Uint32Array(n),
      recordEnd: new Uint32Array(n),
      blobOf: new Uint32Array(n),
      functionInBlob: new Uint32Array(n),
      recordInBlob: new Uint32Array(n),
      blobAt: [],
      firstFunctionOfBlob: [],
    };
    let offset = 0;
    let safepoint = 0;
    let functions = 0;
    while (offset < this.bytes.byteLength) {
      const blob = index.blobAt.length;
      const numFunctions = this.u32(offset + HEADER_NUM_FUNCTIONS);
      index.blobAt.push(offset);
      index.firstFunctionOfBlob.push(functions);
      let cursor = offset + HEADER_SIZE_BYTES + numFunctions * FUNCTION_SIZE_BYTES + this.u32(offset + HEADER_NUM_CONSTANTS) * CONSTANT_SIZE_BYTES;
      let r = 0;
      for (let f = 0; f < numFunctions; f++) {
        const records = this.u32(offset + HEADER_SIZE_BYTES + f * FUNCTION_SIZE_BYTES + FUNCTION_RECORD_COUNT);
        for (let k = 0; k < records; k++, r++, safepoint++) {
          const liveOuts = liveOutsOffset(cursor, this.u16(cursor + RECORD_NUM_LOCATIONS));
          index.recordAt[safepoint] = cursor;
          index.blobOf[safepoint] = blob;
          index.functionInBlob[safepoint] = f;
          index.recordInBlob[safepoint] = r;
          cursor = recordEndOffset(liveOuts, this.u16(liveOuts + LIVE_OUTS_COUNT));
          index.recordEnd[safepoint] = cursor;
        }
      }
      functions += numFunctions;
      offset = cursor;
    }
    return index;
  }

  private u32(offset: number): number {
    return this.words.getUint32(offset, true);
  }
  private u16(offset: number): number {
    return this.words.getUint16(offset, true);
  }
}
