import { UnsupportedInputError } from "../errors.js";

/*
 * The location vocabulary a stack map decoder produces and a frame descriptor stores: its kind,
 * its root type and word 0 of the two Int32 words a location is in FrameDescriptors
 * (src/safepoints/frame-descriptors.ts says the layout). Below both the decoders (src/stackmap/)
 * and the descriptors (src/safepoints/), which read and write it; it imports neither.
 *
 *   word 0: kind (bits 0-3: LocationKind 1..5) | rootType (bits 4-7: ROOT_TYPE_*) |
 *           dwarfReg (bits 8-15) | sizeBytes (bits 16-31)
 */

/**
 * Where a value lives, in StackMap v3's numbering (the same numbers as LOCATION_KIND_* of
 * src/stackmap/stackmap-v3-layout.ts, which the scan kernel reads; test/stackmap/stackmap.test.ts
 * holds the two to each other). The plimmix and OCaml loaders express their roots in it too.
 */
export const enum LocationKind {
  Register = 1,
  Direct = 2,
  Indirect = 3,
  Constant = 4,
  ConstantIndex = 5,
}

export const LOCATION_KIND_NAMES: Readonly<Record<number, string>> = {
  1: "Register",
  2: "Direct",
  3: "Indirect",
  4: "Constant",
  5: "ConstantIndex",
};

export const ROOT_TYPE_NONE = 0; // LLVM locations: untyped (a heap pointer, or a deopt value)
export const ROOT_TYPE_ATOMIC = 1; // _GC_MAP_ type 0: no pointers
export const ROOT_TYPE_TRAIT = 2; // _GC_MAP_ type 1
export const ROOT_TYPE_COMPLEX = 3; // _GC_MAP_ type 2
export const ROOT_TYPE_POINTER = 4; // _GC_MAP_ type 3

/** Word 0 of a location; a DWARF register above 255 does not fit its 8 bits and is refused by name. */
export function encodeLocationWord0(kind: number, rootType: number, dwarfReg: number, sizeBytes: number): number {
  if (dwarfReg > 0xff) {
    throw new UnsupportedInputError("DWARF register of a location", 0, dwarfReg, "registers 0..255");
  }
  return (kind & 0xf) | ((rootType & 0xf) << 4) | ((dwarfReg & 0xff) << 8) | ((sizeBytes & 0xffff) << 16);
}
export function locationKind(word0: number): number {
  return word0 & 0xf;
}
export function locationRootType(word0: number): number {
  return (word0 >>> 4) & 0xf;
}
export function locationDwarfReg(word0: number): number {
  return (word0 >>> 8) & 0xff;
}
export function locationSizeBytes(word0: number): number {
  return word0 >>> 16;
}
