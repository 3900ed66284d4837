import { MalformedInputError } from "../errors.js";
import {
  CALLEE_SAVED_COUNT,
  FLAG_STATEPOINT,
  FrameDescriptorBuilder,
  FrameDescriptors,
  ROOT_TYPE_NONE,
  encodeLocationWord0,
} from "../safepoints/frame-descriptors.js";
import { LocationKind, LocationView, type StackMapBlob } from "../stackmap/llvm-stackmap.js";
import { DEFAULT_STATEPOINT_RECOGNITION, decodeStatepoint, type StatepointRecognition } from "../stackmap/statepoint.js";
import { frameAtSafepoint } from "./safepoint-frame.js";

/** The CFI facts the loader needs at one address (see src/unwind/cfi.ts). */
export interface UnwindRow {
  /** DWARF register of the CFA rule: 7 rsp, 6 rbp. */
  cfaRegister: number;
  cfaOffset: number;
  /** DWARF register -> offset from the CFA of its save slot. */
  savedRegisters: ReadonlyMap<number, number>;
  /** DW_CFA_GNU_args_size in force, 0 if none. */
  argsSizeBytes: number;
}

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
  // Size the columns once: every record is a safepoint; a statepoint has at most as many pairs as
  // locations, a plain record exactly as many.
  let records = 0;
  let locations = 0;
  for (const blob of blobs) {
    records += blob.numRecords;
    for (let r = 0; r < blob.numRecords; r++) locations += blob.numLocations(r);
  }
  const builder = new FrameDescriptorBuilder({ safepoints: records, locations, pairs: locations });
  const loc = new LocationView();
  const saved = new Int16Array(CALLEE_SAVED_COUNT);
  const recognition = options.recognition ?? DEFAULT_STATEPOINT_RECOGNITION;

  blobs.forEach((blob, b) => {
    for (let f = 0; f < blob.numFunctions; f++) {
      const resolved = options.resolveFunction?.(b, f) ?? {
        address: blob.functionAddressRaw(f),
        name: undefined,
        sectionIndex: undefined,
      };
      if (!Number.isSafeInteger(resolved.address)) {
        throw new MalformedInputError(
          `address of function #${f}`,
          blob.sectionOffset + blob.functionAddressFieldOffset(f),
          blob.functionAddressLong(f).toString(),
          "an address below 2^53",
        );
      }
      const dynamic = blob.hasDynamicFrame(f);
      const stackSize = dynamic ? -1 : blob.stackSizeBytes(f);
      if (!dynamic && !(stackSize >= 0 && stackSize < 2 ** 31)) {
        throw new MalformedInputError(`stack size of function #${f}`, blob.sectionOffset + blob.functionAddressFieldOffset(f) + 8, blob.stackSizeLong(f).toString(), "below 2^31, or UINT64_MAX for a dynamic frame");
      }
      const functionIndex = builder.addFunction({ name: resolved.name, address: resolved.address, stackSizeBytes: stackSize });

      const first = blob.firstRecordOf(f);
      for (let r = first; r < first + blob.recordCountOf(f); r++) {
        const returnAddress = resolved.address + blob.instructionOffset(r);
        const lookupAt = returnAddress > resolved.address ? returnAddress - 1 : returnAddress;
        const row = options.unwindRowAt?.(lookupAt, resolved.sectionIndex);

        const frame = frameAtSafepoint(row, stackSize, saved);
        let flags = frame.flags;
        const frameSize = frame.frameSizeBytes;
        const cfaRegister = frame.cfaRegister;
        const cfaOffset = frame.cfaOffsetBytes;

        const statepoint = decodeStatepoint(blob, r, recognition);
        const locStart = builder.nextLocationIndex;
        const n = blob.numLocations(r);
        for (let i = 0; i < n; i++) {
          blob.location(r, i, loc);
          const word1 = loc.kind === LocationKind.ConstantIndex ? loc.constantIndex | 0 : loc.offsetBytes;
          builder.addLocation(encodeLocationWord0(loc.kind, ROOT_TYPE_NONE, loc.dwarfReg, loc.sizeBytes), word1);
        }
        const pairStart = builder.nextPairIndex;
        let pairCount: number;
        let deoptCount = 0;
        let allocaCount = 0;
        if (statepoint !== undefined) {
          flags |= FLAG_STATEPOINT;
          deoptCount = statepoint.deoptCount;
          allocaCount = statepoint.allocaCount;
          pairCount = statepoint.pairCount;
          for (let p = 0; p < pairCount; p++) {
            const base = locStart + statepoint.pairsStart + 2 * p;
            builder.addPair(base, base + 1);
          }
        } else {
          // A stackmap or patchpoint record: every location is a live value of the runtime's
          // choosing; each is offered as a root of its own (base = derived).
          pairCount = n;
          for (let i = 0; i < n; i++) builder.addPair(locStart + i, locStart + i);
        }
        builder.addSafepoint({
          returnAddress,
          frameSizeBytes: frameSize,
          stackSizeBytes: stackSize,
          cfaRegister,
          cfaOffsetBytes: cfaOffset,
          savedRegOffsets: saved,
          flags,
          functionIndex,
          blobIndex: b,
          recordIndex: r,
          // Statepoints keep their three header constants out of the deopt slice.
          locStart: statepoint !== undefined ? locStart + statepoint.deoptStart : locStart,
          deoptCount,
          pairStart,
          pairCount,
          allocaCount,
        });
      }
    }
  });
  return builder.finish();
}
