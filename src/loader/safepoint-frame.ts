import {
  DWARF_RBP,
  DWARF_RSP,
  FLAG_DYNAMIC_FRAME,
  FLAG_FRAME_POINTER_CFA,
  FLAG_FRAME_SIZE_DIFFERS,
  FLAG_NO_UNWIND_INFO,
  NO_CFA_RULE,
  calleeSavedIndex,
} from "../safepoints/frame-descriptors.js";
import type { UnwindRow } from "./unwind-row.js";

/*
 * The frame at a safepoint, for every map format: the effective frame size and CFA rule from the
 * CFI row at the return address, and where the frame saved each callee-saved register.
 *  - CFA = rsp + N: the return-address slot is at SP + N - 8, exactly, whatever was pushed for the
 *    call (LLVM's X86CallFrameOptimization pushes stack arguments; the recorded size excludes them).
 *  - CFA = rbp + N: a frame pointer; CFI no longer follows pushes, so the size is static only if
 *    DW_CFA_GNU_args_size says how much was pushed; otherwise -1 and the walker climbs by rbp.
 *  - no FDE: the recorded size is all there is (FLAG_NO_UNWIND_INFO); a dynamic frame (recorded
 *    size -1) always has a frame pointer on x86-64, so it gets the rule CFA = rbp + 16 with rbp
 *    saved at CFA - 16.
 */
/** The frame facts of one safepoint (see the rules above); `saved` is filled in place. */
export interface SafepointFrame {
  frameSizeBytes: number;
  flags: number;
  cfaRegister: number;
  cfaOffsetBytes: number;
}

/**
 * Frame size, CFA rule and flags at a safepoint from its CFI row, for a frame whose recorded
 * size is `recordedBytes` (-1: dynamic), written into `into` (a loader passes one object for
 * every safepoint) and returned. Shared by the LLVM, plimmix and OCaml loaders.
 */
export function frameAtSafepoint(
  row: UnwindRow | undefined,
  recordedBytes: number,
  saved: Int16Array,
  into: SafepointFrame = { frameSizeBytes: 0, flags: 0, cfaRegister: 0, cfaOffsetBytes: 0 },
): SafepointFrame {
  const dynamic = recordedBytes < 0;
  for (let k = 0; k < saved.length; k++) saved[k] = 0;
  let flags = dynamic ? FLAG_DYNAMIC_FRAME : 0;
  if (row === undefined) {
    flags |= FLAG_NO_UNWIND_INFO;
    if (!dynamic) return setFrame(into, recordedBytes, flags, NO_CFA_RULE, 0);
    saved[calleeSavedIndex(DWARF_RBP)] = -16;
    return setFrame(into, -1, flags | FLAG_FRAME_POINTER_CFA, DWARF_RBP, 16);
  }
  for (const [reg, offset] of row.savedRegisters) {
    const k = calleeSavedIndex(reg);
    if (k >= 0) saved[k] = offset;
  }
  let frameSizeBytes: number;
  if (row.cfaRegister === DWARF_RSP) {
    frameSizeBytes = row.cfaOffset - 8;
  } else if (row.cfaRegister === DWARF_RBP) {
    flags |= FLAG_FRAME_POINTER_CFA;
    frameSizeBytes = !dynamic && row.argsSizeBytes > 0 ? recordedBytes + row.argsSizeBytes : -1;
  } else {
    frameSizeBytes = -1;
  }
  if (!dynamic && frameSizeBytes >= 0 && frameSizeBytes !== recordedBytes) flags |= FLAG_FRAME_SIZE_DIFFERS;
  return setFrame(into, frameSizeBytes, flags, row.cfaRegister, row.cfaOffset);
}

function setFrame(into: SafepointFrame, frameSizeBytes: number, flags: number, cfaRegister: number, cfaOffsetBytes: number): SafepointFrame {
  into.frameSizeBytes = frameSizeBytes;
  into.flags = flags;
  into.cfaRegister = cfaRegister;
  into.cfaOffsetBytes = cfaOffsetBytes;
  return into;
}
