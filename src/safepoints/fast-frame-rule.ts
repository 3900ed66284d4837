import { LocationKind, ROOT_TYPE_NONE, ROOT_TYPE_POINTER } from "../location/location-word.js";
import type { Architecture } from "../arch/architecture.js";
import { DWARF_RSP, RA_CFA_OFFSET_BYTES } from "./frame-descriptors.js";
import { FAST_FRAME_ALIGN_BYTES, FAST_FRAME_GC_ALLOCAS, FAST_ROOT_SLOT_BYTES } from "./fast-frame-numbers.js";

/*
 * Which frames and roots the fast scan loop takes (walker/fast-scan.ts), stated once: the scan
 * recipes compile it at registration (src/safepoints/scan-recipes.ts) and the general path's
 * common case uses the same test (walker/frame-roots.ts collectFrameRoots), so the two paths agree
 * by construction on which roots are plain slots; the cross-check (walker/scan-cross-check.ts)
 * compares their results on every stack the tests walk.
 *
 * A fast frame: a frame of x86-64 (see admitsFastFrames), a static frame size, a multiple of 8
 * (the caller's SP stays 8-aligned), no gc allocas, and every root location (base and derived) a
 * fast root location.
 * A fast root location: `Indirect [rsp + off]`, untyped or a plimmix POINTER root, with `off`
 * 8-aligned and the slot inside the frame [sp, cfa): 0 <= off and off + 8 <= cfa - sp.
 * The numbers (8, no allocas) live in fast-frame-numbers.ts, which the scan kernel's parse reads too.
 */

/** Word 0 of a location (frame-descriptors.ts), size bits masked off: Indirect via rsp, untyped. */
const SP_INDIRECT_UNTYPED = LocationKind.Indirect | (ROOT_TYPE_NONE << 4) | (DWARF_RSP << 8);
/** The same, a plimmix POINTER root. */
const SP_INDIRECT_POINTER = LocationKind.Indirect | (ROOT_TYPE_POINTER << 4) | (DWARF_RSP << 8);
/** The bits of word 0 that say kind, root type and register. */
export const LOCATION_SHAPE_MASK = 0xffff;

/** The span [sp, cfa) of a frame whose static size (SP to the return-address slot) is `frameSizeBytes`. */
export function frameSpanBytes(frameSizeBytes: number): number {
  return frameSizeBytes - RA_CFA_OFFSET_BYTES;
}

/**
 * The fast loop is written for x86-64's frames: the return address pushed by the call at CFA - 8
 * (it reads it two words below the CFA) and roots `Indirect [R#7 + off]`. No frame of another
 * architecture is fast (AArch64: the return address is wherever the frame saved x30, and R#7 is
 * x7): the general unwinder takes every one.
 */
export function admitsFastFrames(architecture: Architecture): boolean {
  return (
    architecture.returnAddressCfaOffsetBytes === RA_CFA_OFFSET_BYTES &&
    architecture.callPushBytes === -RA_CFA_OFFSET_BYTES &&
    architecture.dwarf.sp === DWARF_RSP
  );
}

/** True when a safepoint's frame itself qualifies (its roots are checked one by one). */
export function isFastFrame(frameSizeBytes: number, allocaCount: number, architecture: Architecture): boolean {
  return (
    admitsFastFrames(architecture) && frameSizeBytes >= 0 && (frameSizeBytes & (FAST_FRAME_ALIGN_BYTES - 1)) === 0 && allocaCount === FAST_FRAME_GC_ALLOCAS
  );
}

/**
 * True when a location (word 0 masked with LOCATION_SHAPE_MASK, word 1 = offset) is a plain stack
 * slot of a frame spanning `spanBytes` from its SP to its CFA.
 */
export function isFastRootLocation(shape: number, offsetBytes: number, spanBytes: number): boolean {
  return (
    (shape === SP_INDIRECT_UNTYPED || shape === SP_INDIRECT_POINTER) &&
    offsetBytes >= 0 &&
    offsetBytes + FAST_ROOT_SLOT_BYTES <= spanBytes &&
    (offsetBytes & (FAST_ROOT_SLOT_BYTES - 1)) === 0
  );
}
