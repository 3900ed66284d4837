import { MalformedInputError, UnsupportedInputError } from "../errors.js";
import type { Architecture } from "../arch/architecture.js";
import { X86_64 } from "../arch/x86-64.js";
import {
  FLAG_STATEPOINT,
  FrameDescriptorBuilder,
  FrameDescriptors,
  type FunctionInfo,
  type SafepointFields,
  scratchSafepointFields,
} from "../safepoints/frame-descriptors.js";
import type { StackMapBlob } from "../stackmap/llvm-stackmap.js";
import {
  DEFAULT_STATEPOINT_RECOGNITION,
  SHAPE_ALLOCA_COUNT,
  SHAPE_DEOPT_COUNT,
  SHAPE_PAIRS_START,
  SHAPE_PAIR_COUNT,
  SHAPE_SLOTS,
  STATEPOINT_DEOPT_START,
  StatepointIdMatcher,
  type StatepointRecognition,
  matchStatepoint,
} from "../stackmap/statepoint.js";
import { type SafepointFrame, frameAtSafepoint } from "./safepoint-frame.js";
import type { UnwindRow } from "./unwind-row.js";

export type { UnwindRow } from "./unwind-row.js";

export interface ResolvedFunction {
  /** Relocated address: link-time virtual address, or the offset in its section for a .o. */
  address: number;
  name: string | undefined;
  /** For a .o: the section the function lies in (addresses are offsets within it). */
  sectionIndex: number | undefined;
}

export interface LlvmLoadOptions {
  /** Where function `f` of blob `b` is (after relocation). Default: the address in the bytes. */
  resolveFunction?: (blobIndex: number, functionIndex: number) => ResolvedFunction;
  /** The CFI row that applies at `address` of `sectionIndex`, if unwind info covers it. */
  unwindRowAt?: (address: number, sectionIndex: number | undefined) => UnwindRow | undefined;
  recognition?: StatepointRecognition;
  /** Whose registers the maps and unwind rows name (the ELF file's e_machine). Default x86-64. */
  architecture?: Architecture;
  /**
   * For blobs that are a run of a section's blobs with a range of their records decoded (the
   * deferred path, src/loader/deferred-llvm-descriptors.ts): the section's functions, made
   * before (`buildLlvmFunctions` of all its blobs), where each blob's first one is, and the index
   * of the first blob of the run. The descriptors then number functions and blobs as the whole
   * section's do and carry its function list; no function is built again.
   */
  sectionFunctions?: { functions: readonly FunctionInfo[]; firstFunctionOfBlob: readonly number[]; firstBlob: number };
}

/**
 * Builds the frame descriptors of every record of every blob (addresses before any load bias).
 *
 * Effective frame size, per record, from the CFI row at the return address (looked up at RA - 1,
 * the last byte of the call instruction, as unwinders do, so that a call at the very end of a
 * function still finds its FDE):
 *  - CFA = rsp + N: the return-address slot is at SP + N - 8, exactly, whatever was pushed for the
 *    call (LLVM's X86CallFrameOptimization pushes stack arguments and StackSize does not include
 *    them; CFI does).
 *  - CFA = rbp + N: the frame has a frame pointer and CFI no longer follows pushes, so the size is
 *    static only if DW_CFA_GNU_args_size says how much was pushed; otherwise it is left unknown
 *    (-1) and the walker climbs by rbp, which is exact.
 *  - no FDE: the recorded StackSize is all there is (FLAG_NO_UNWIND_INFO).
 */
export function buildLlvmDescriptors(blobs: readonly StackMapBlob[], options: LlvmLoadOptions = {}): FrameDescriptors {
  const loader = new LlvmDescriptorLoader(blobs, options);
  for (let b = 0; b < blobs.length; b++) loader.addBlob(blobs[b]!, b);
  const d = loader.builder.finish();
  return options.sectionFunctions === undefined ? d : new FrameDescriptors(d.count, d.columns, options.sectionFunctions.functions, d.architecture);
}

/** Every function of every blob, in order, as buildLlvmDescriptors lists them (nothing of the records is read). */
export function buildLlvmFunctions(blobs: readonly StackMapBlob[], options: Pick<LlvmLoadOptions, "resolveFunction"> = {}): FunctionInfo[] {
  const functions: FunctionInfo[] = [];
  blobs.forEach((blob, b) => {
    for (let f = 0; f < blob.numFunctions; f++) functions.push(functionInfo(blob, f, options.resolveFunction?.(b, f)));
  });
  return functions;
}

/** Function `f` of `blob` (where `resolved` says it is, if given), its address and stack size checked. */
function functionInfo(blob: StackMapBlob, f: number, resolved: ResolvedFunction | undefined): FunctionInfo {
  const address = resolved !== undefined ? resolved.address : blob.functionAddressRaw(f);
  if (!Number.isSafeInteger(address)) {
    throw new MalformedInputError(
      `address of function #${f}`,
      blob.sectionOffset + blob.functionAddressFieldOffset(f),
      blob.functionAddressLong(f).toString(),
      "an address below 2^53",
    );
  }
  const dynamic = blob.hasDynamicFrame(f);
  const stackSizeBytes = dynamic ? -1 : blob.stackSizeBytes(f);
  if (!dynamic && !(stackSizeBytes >= 0 && stackSizeBytes < 2 ** 31)) {
    throw new MalformedInputError(
      `stack size of function #${f}`,
      blob.sectionOffset + blob.functionAddressFieldOffset(f) + 8,
      blob.stackSizeLong(f).toString(),
      "below 2^31, or UINT64_MAX for a dynamic frame",
    );
  }
  return { name: resolved?.name, address, stackSizeBytes };
}

/**
 * The state of one `buildLlvmDescriptors`: the builder, with its columns sized once from the
 * blobs' counts, and scratch refilled for every record (nothing is allocated per record or per
 * location). The loops over functions and over records each end their method: V8 compiles a
 * long first loop on stack and reuses that code on later calls, and code after the loop that had
 * not run yet would deoptimize every time (see src/safepoints/scan-recipes.ts).
 */
class LlvmDescriptorLoader {
  readonly builder: FrameDescriptorBuilder;
  private readonly statepointIds: StatepointIdMatcher;
  private readonly architecture: Architecture;
  private readonly saved: Int16Array;
  private readonly frame: SafepointFrame = { frameSizeBytes: 0, flags: 0, cfaRegister: 0, cfaOffsetBytes: 0 };
  private readonly shape = new Int32Array(SHAPE_SLOTS);
  private readonly safepoint: SafepointFields;

  constructor(
    blobs: readonly StackMapBlob[],
    private readonly options: LlvmLoadOptions,
  ) {
    // Every record is a safepoint. A statepoint of N locations has at most (N - 3) / 2 pairs
    // (exactly that without deopt values and allocas), a plain record N (the pair column grows
    // for those). A single blob's decoded locations become the location column as they are.
    let records = 0;
    let locations = 0;
    for (const blob of blobs) {
      records += blob.endDecodedRecord - blob.firstDecodedRecord;
      locations += blob.totalLocations;
    }
    this.architecture = options.architecture ?? X86_64;
    this.saved = new Int16Array(this.architecture.calleeSavedDwarf.length);
    this.safepoint = scratchSafepointFields(this.saved);
    this.builder = new FrameDescriptorBuilder({
      architecture: this.architecture,
      safepoints: records,
      locations: blobs.length === 1 ? 0 : locations,
      pairs: Math.max(0, (locations - 3 * records) >> 1),
    });
    this.statepointIds = new StatepointIdMatcher(options.recognition ?? DEFAULT_STATEPOINT_RECOGNITION);
  }

  /** Blob `b`'s functions and its decoded records (all of them, unless `sectionFunctions` says it is a run of a section). */
  addBlob(blob: StackMapBlob, b: number): void {
    // The blob's locations, decoded when it was parsed, in record order: record r's are at
    // blobLocations + blob.firstLocation(r).
    const blobLocations = this.builder.addLocationWords(blob.locationWords);
    const known = this.options.sectionFunctions;
    const blobIndex = b + (known?.firstBlob ?? 0);
    const endFunction = blob.endDecodedFunction;
    for (let f = blob.firstDecodedFunction; f < endFunction; f++) {
      const resolved = this.options.resolveFunction?.(b, f);
      const fn = functionInfo(blob, f, resolved);
      const functionIndex = known !== undefined ? known.firstFunctionOfBlob[blobIndex]! + f : this.builder.addFunction(fn);
      // The function's records that were decoded (all of them, unless the blob is a range).
      const first = Math.max(blob.firstRecordOf(f), blob.firstDecodedRecord);
      const end = Math.min(blob.firstRecordOf(f) + blob.recordCountOf(f), blob.endDecodedRecord);
      this.addRecords(blob, blobIndex, first, end, functionIndex, fn.address, fn.stackSizeBytes, resolved?.sectionIndex, blobLocations);
    }
  }

  /** One safepoint per record [first, end) of blob `b`, all of one function. */
  private addRecords(
    blob: StackMapBlob,
    b: number,
    first: number,
    end: number,
    functionIndex: number,
    functionAddress: number,
    stackSize: number,
    sectionIndex: number | undefined,
    blobLocations: number,
  ): void {
    const { builder, frame, saved, shape, safepoint, statepointIds, architecture } = this;
    const unwindRowAt = this.options.unwindRowAt;
    // Imported functions in locals: V8 reads an import's binding and checks the callee at every
    // call, which cost a fifth of this loop; a local is checked once.
    const frameAt = frameAtSafepoint;
    const statepointShape = matchStatepoint;
    // Without unwind rows every record of the function has the same frame.
    if (unwindRowAt === undefined) frameAt(undefined, stackSize, saved, frame, architecture);
    for (let r = first; r < end; r++) {
      const returnAddress = functionAddress + blob.instructionOffset(r);
      const lookupAt = returnAddress > functionAddress ? returnAddress - 1 : returnAddress;
      if (unwindRowAt !== undefined) frameAt(unwindRowAt(lookupAt, sectionIndex), stackSize, saved, frame, architecture);

      const isStatepoint = statepointShape(blob, r, statepointIds.claims(blob, r), shape);
      if (r === blob.wideRegisterRecord) {
        throw new UnsupportedInputError("DWARF register of a location", 0, blob.wideRegister, "registers 0..255");
      }
      const locStart = blobLocations + blob.firstLocation(r);
      const pairStart = builder.nextPairIndex;
      safepoint.frameSizeBytes = frame.frameSizeBytes;
      safepoint.stackSizeBytes = stackSize;
      safepoint.cfaRegister = frame.cfaRegister;
      safepoint.cfaOffsetBytes = frame.cfaOffsetBytes;
      safepoint.flags = frame.flags;
      if (isStatepoint) {
        const pairCount = shape[SHAPE_PAIR_COUNT]!;
        const firstBase = locStart + shape[SHAPE_PAIRS_START]!;
        for (let p = 0; p < pairCount; p++) builder.addPair(firstBase + 2 * p, firstBase + 2 * p + 1);
        safepoint.flags |= FLAG_STATEPOINT;
        // Statepoints keep their three header constants out of the deopt slice.
        safepoint.locStart = locStart + STATEPOINT_DEOPT_START;
        safepoint.deoptCount = shape[SHAPE_DEOPT_COUNT]!;
        safepoint.pairCount = pairCount;
        safepoint.allocaCount = shape[SHAPE_ALLOCA_COUNT]!;
      } else {
        // A stackmap or patchpoint record: every location is a live value of the runtime's
        // choosing; each is offered as a root of its own (base = derived).
        const n = blob.numLocations(r);
        for (let i = 0; i < n; i++) builder.addPair(locStart + i, locStart + i);
        safepoint.locStart = locStart;
        safepoint.deoptCount = 0;
        safepoint.pairCount = n;
        safepoint.allocaCount = 0;
      }
      safepoint.returnAddress = returnAddress;
      safepoint.functionIndex = functionIndex;
      safepoint.blobIndex = b;
      safepoint.recordIndex = r;
      safepoint.pairStart = pairStart;
      builder.addSafepoint(safepoint);
    }
  }
}
