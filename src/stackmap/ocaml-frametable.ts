import type Long from "long";
import { ByteView } from "../bytes/byte-view.js";
import { MalformedInputError, hex } from "../errors.js";

/*
 * The frame table LLVM 14's `gc "ocaml"` strategy emits (llvm/lib/CodeGen/AsmPrinter/
 * OcamlGCPrinter.cpp, built into llc), for the same gcroot IR the plimmix plugin reads. Verified
 * against `llc -O2 -filetype=obj` output (test/ll/formats/ocaml-*.ll, test/stackmap/ocaml-frametable.test.ts, test/loader/ocaml-loader.test.ts).
 *
 * Symbols, all global, named from Module::getModuleIdentifier() (the path llc was given, cut at
 * its first '.', first letter upper-cased; "foo.ll" -> "Foo", "/tmp/x.y/m.ll" -> "/tmp/x"):
 *   caml<M>__code_begin, caml<M>__code_end   start / end of the module's .text
 *   caml<M>__data_begin, caml<M>__data_end   start / end of the module's .data (before the table)
 *   caml<M>__frametable                      the table, in .data, after one zero u64 that follows
 *                                            data_end ("FIXME: Why does ocaml emit this??")
 *
 * Layout (little-endian, x86-64; offsets from the frametable label, which is 8-aligned):
 *   +0  u16  NumDescriptors D (llc aborts at 65536 or more)
 *   +2  6 zero bytes (alignment to 8; the first 8 bytes therefore also read as a u64 count, which
 *       is what the OCaml runtime reads)
 *   +8  Descriptor[D], each starting 8-aligned, in function order, then safepoint order:
 *         +0  u64  return address: the label right after the call instruction (R_X86_64_64
 *                  against `.text` + offset in a .o, R_X86_64_RELATIVE in a .so)
 *         +8  u16  FrameSize in BYTES = MachineFrameInfo::getStackSize(): the pushes of the
 *                  prologue (RBP, callee-saved registers) and the `sub rsp` area; it EXCLUDES the
 *                  return address (the OCaml runtime's own frame sizes include it) and the
 *                  outgoing arguments pushed at a call site (X86CallFrameOptimization). Always
 *                  static: a dynamic frame (variable-sized alloca, realignment) has UINT64_MAX,
 *                  and llc aborts ("too large for the ocaml GC").
 *         +10 u16  NumLive L: every gcroot of the function that is not a dead object (roots are
 *                  function-wide: the same list at each safepoint of a function)
 *         +12 u16 x L  root offsets, from TargetFrameLowering::getFrameIndexReference:
 *                  without a frame pointer, SP-relative (as if nothing were pushed): 0 <= off <
 *                  FrameSize; with a frame pointer (`"frame-pointer"="all"`, ...), RBP-relative
 *                  and negative, stored as 16-bit two's complement (0xfff0 = -16). The table does
 *                  not say which: the loader decides from the CFA rule at the safepoint.
 *         zero padding to 8: a descriptor is 8 + 8 * ceil((4 + 2L) / 8) bytes (16 for L <= 2)
 *
 * Safepoints: the return address of every call that is not a tail call (GCMachineCodeAnalysis
 * FindSafePoints), in the order the calls appear.
 *
 * Decoding is by view: `OcamlFrametable.parse` validates the counts and the padding once and
 * records where each descriptor starts; the accessors are O(1).
 */

const TABLE_NUM_DESCRIPTORS = 0;
const TABLE_PADDING = TABLE_NUM_DESCRIPTORS + 2;
export const OCAML_TABLE_HEADER_SIZE_BYTES = 8;

const DESCRIPTOR_RETURN_ADDRESS = 0;
const DESCRIPTOR_FRAME_SIZE = DESCRIPTOR_RETURN_ADDRESS + 8;
const DESCRIPTOR_NUM_LIVE = DESCRIPTOR_FRAME_SIZE + 2;
const DESCRIPTOR_LIVE_OFFSETS = DESCRIPTOR_NUM_LIVE + 2;
export const OCAML_LIVE_OFFSET_SIZE_BYTES = 2;
/** The smallest descriptor: no live roots, padded to 8. */
export const OCAML_MIN_DESCRIPTOR_SIZE_BYTES = 16;

export const OCAML_SYMBOL_PREFIX = "caml";
export const OCAML_FRAMETABLE_SUFFIX = "__frametable";

/** The one place that knows the 8-byte padding rule of the format. */
function padTo8(offset: number): number {
  return (offset + 7) & ~7;
}

/** Bytes of a descriptor with `numLive` roots. */
export function ocamlDescriptorSizeBytes(numLive: number): number {
  return padTo8(DESCRIPTOR_LIVE_OFFSETS + numLive * OCAML_LIVE_OFFSET_SIZE_BYTES);
}

export class OcamlFrametable {
  private constructor(
    /** The bytes of this table only; error offsets and `sectionOffset` use its baseOffset. */
    readonly view: ByteView,
    readonly numDescriptors: number,
    private readonly descriptorOffsets: Uint32Array,
  ) {}

  /**
   * Validates the table at `offset` of `view` (a multiple of 8) and returns a view of it. The end
   * is found by walking the descriptors, so `view` may hold more bytes after it.
   */
  static parse(view: ByteView, offset: number): OcamlFrametable {
    const at = (abs: number): number => view.baseOffset + abs;
    if (!Number.isSafeInteger(offset) || offset < 0 || offset % 8 !== 0) {
      throw new MalformedInputError("frametable label alignment", at(offset), hex(offset), "an offset that is a multiple of 8");
    }
    view.need(offset, OCAML_TABLE_HEADER_SIZE_BYTES, "frametable header");
    const numDescriptors = view.u16(offset + TABLE_NUM_DESCRIPTORS);
    requireZeros(view, offset + TABLE_PADDING, offset + OCAML_TABLE_HEADER_SIZE_BYTES, "padding after the frametable descriptor count");
    const first = offset + OCAML_TABLE_HEADER_SIZE_BYTES;
    view.need(
      first,
      numDescriptors * OCAML_MIN_DESCRIPTOR_SIZE_BYTES,
      `frametable descriptors (${numDescriptors} of at least ${OCAML_MIN_DESCRIPTOR_SIZE_BYTES} bytes)`,
    );

    const descriptorOffsets = new Uint32Array(numDescriptors);
    let cursor = first;
    for (let d = 0; d < numDescriptors; d++) {
      descriptorOffsets[d] = cursor - offset;
      view.need(cursor, DESCRIPTOR_LIVE_OFFSETS, `frametable descriptor #${d}`);
      const numLive = view.u16(cursor + DESCRIPTOR_NUM_LIVE);
      const liveEnd = cursor + DESCRIPTOR_LIVE_OFFSETS + numLive * OCAML_LIVE_OFFSET_SIZE_BYTES;
      const end = cursor + ocamlDescriptorSizeBytes(numLive);
      view.need(cursor + DESCRIPTOR_LIVE_OFFSETS, end - cursor - DESCRIPTOR_LIVE_OFFSETS, `live offsets of frametable descriptor #${d} (${numLive})`);
      requireZeros(view, liveEnd, end, `padding after frametable descriptor #${d}`);
      cursor = end;
    }
    return new OcamlFrametable(view.slice(offset, cursor - offset, "frametable"), numDescriptors, descriptorOffsets);
  }

  /** Offset of this table (its label) in the input `parse` was given, e.g. a file offset. */
  get sectionOffset(): number {
    return this.view.baseOffset;
  }
  get sizeBytes(): number {
    return this.view.lengthBytes;
  }

  /** Offset of descriptor `d` within the table. */
  descriptorOffset(d: number): number {
    return this.descriptorOffsets[d]!;
  }
  /** Offset within the table of descriptor `d`'s return address (where a relocation applies). */
  returnAddressFieldOffset(d: number): number {
    return this.descriptorOffsets[d]! + DESCRIPTOR_RETURN_ADDRESS;
  }
  returnAddressLong(d: number): Long {
    return this.view.u64Long(this.descriptorOffsets[d]! + DESCRIPTOR_RETURN_ADDRESS);
  }
  /** The return address as stored (relocated when the bytes were); NaN above 2^53. */
  returnAddress(d: number): number {
    return this.view.u64NumberOrNaN(this.descriptorOffsets[d]! + DESCRIPTOR_RETURN_ADDRESS);
  }
  /** LLVM StackSize in bytes, excluding the return address. */
  frameSizeBytes(d: number): number {
    return this.view.u16(this.descriptorOffsets[d]! + DESCRIPTOR_FRAME_SIZE);
  }
  numLive(d: number): number {
    return this.view.u16(this.descriptorOffsets[d]! + DESCRIPTOR_NUM_LIVE);
  }
  /** Offset within the table of live offset `k` of descriptor `d`. */
  liveOffsetFieldOffset(d: number, k: number): number {
    return this.descriptorOffsets[d]! + DESCRIPTOR_LIVE_OFFSETS + k * OCAML_LIVE_OFFSET_SIZE_BYTES;
  }
  /** Live offset `k` read as unsigned: the SP-relative reading (functions without a frame pointer). */
  liveOffsetU16(d: number, k: number): number {
    return this.view.u16(this.liveOffsetFieldOffset(d, k));
  }
  /** Live offset `k` read as signed: the RBP-relative reading (functions with a frame pointer). */
  liveOffsetI16(d: number, k: number): number {
    return this.view.i16(this.liveOffsetFieldOffset(d, k));
  }
}

function requireZeros(view: ByteView, from: number, to: number, what: string): void {
  for (let i = from; i < to; i++) {
    const b = view.u8(i);
    if (b !== 0) throw new MalformedInputError(what, view.baseOffset + i, hex(b), "0x0");
  }
}

/** The module name in a frametable symbol (`camlFoo__frametable` -> "Foo"), or undefined. */
export function ocamlModuleName(symbolName: string): string | undefined {
  if (!symbolName.startsWith(OCAML_SYMBOL_PREFIX) || !symbolName.endsWith(OCAML_FRAMETABLE_SUFFIX)) return undefined;
  const name = symbolName.slice(OCAML_SYMBOL_PREFIX.length, symbolName.length - OCAML_FRAMETABLE_SUFFIX.length);
  return name === "" ? undefined : name;
}
