import { DWARF_CFA, type FrameDescriptorBuilder, type SafepointFields, scratchSafepointFields } from "../safepoints/frame-descriptors.js";
import { encodeLocationWord0 } from "../location/location-word.js";
import { X86_64 } from "../arch/x86-64.js";
import { LOCATION_KIND_INDIRECT } from "../stackmap/stackmap-v3-layout.js";
import { frameAtSafepoint } from "./safepoint-frame.js";
import type { UnwindRow } from "./unwind-row.js";

/*
 * The safepoints of the formats whose roots are a list of frame slots with nothing else (no deopt
 * values, no allocas, no derived pointers): `_GC_MAP_` (src/loader/plimmix-loader.ts) and OCaml
 * frame tables (src/loader/ocaml-loader.ts). Both loaders make each root an
 * `Indirect [DWARF_CFA + off]` location, 8 bytes, as a pair with base = derived (`addCfaRoot`),
 * and each safepoint from its return address, its CFI row and the recorded frame size
 * (`add`, through frameAtSafepoint, as the LLVM loader's frames are made). x86-64 only.
 */
export class RootListSafepoints {
  private readonly saved = new Int16Array(X86_64.calleeSavedDwarf.length); // _GC_MAP_ and OCaml maps are x86-64 only (requireX86_64)
  /** Refilled for every safepoint (the builder copies it). */
  private readonly fields: SafepointFields = scratchSafepointFields(this.saved);

  constructor(readonly builder: FrameDescriptorBuilder) {}

  /** Adds the root `[CFA + cfaOffsetBytes]` of `rootType` (ROOT_TYPE_*) as a location and a pair (base = derived). */
  addCfaRoot(rootType: number, cfaOffsetBytes: number): void {
    const loc = this.builder.addLocation(encodeLocationWord0(LOCATION_KIND_INDIRECT, rootType, DWARF_CFA, 8), cfaOffsetBytes);
    this.builder.addPair(loc, loc);
  }

  /**
   * Adds the safepoint at `returnAddress` (record `recordIndex` of map `blobIndex`, in function
   * `functionIndex`) whose roots are the `pairCount` pairs from `pairStart` (their locations from
   * `locStart`), its frame from `row` and the recorded size (-1: dynamic). Positional, so that
   * nothing is allocated per safepoint.
   */
  add(
    returnAddress: number,
    row: UnwindRow | undefined,
    recordedFrameBytes: number,
    functionIndex: number,
    blobIndex: number,
    recordIndex: number,
    locStart: number,
    pairStart: number,
    pairCount: number,
  ): void {
    const fields = this.fields;
    // The frame's size, CFA rule and flags straight into the fields (they have SafepointFrame's names).
    frameAtSafepoint(row, recordedFrameBytes, this.saved, fields);
    fields.stackSizeBytes = recordedFrameBytes;
    fields.returnAddress = returnAddress;
    fields.functionIndex = functionIndex;
    fields.blobIndex = blobIndex;
    fields.recordIndex = recordIndex;
    fields.locStart = locStart;
    fields.pairStart = pairStart;
    fields.pairCount = pairCount;
    this.builder.addSafepoint(fields);
  }
}
