import type { Architecture } from "../arch/architecture.js";
import { X86_64 } from "../arch/x86-64.js";
import {
  FLAG_DYNAMIC_FRAME,
  FLAG_FRAME_POINTER_CFA,
  FLAG_FRAME_SIZE_DIFFERS,
  FLAG_NO_UNWIND_INFO,
  FLAG_RETURN_ADDRESS_SIGNED,
  NO_CFA_RULE,
  calleeSavedIndex,
} from "../safepoints/frame-descriptors.js";
import type { UnwindRow } from "./unwind-row.js";

/*
 * The frame at a safepoint, for every map format: the effective frame size and CFA rule from the
 * CFI row at the return address, and where the frame saved each callee-saved register. The
 * frame size is CFA - SP - what the call pushed (architecture.callPushBytes: x86-64 8, AArch64 0).
 *  - CFA = sp + N: the size is N - callPushBytes, exactly, whatever was pushed for the call
 *    (LLVM's X86CallFrameOptimization pushes stack arguments; the recorded size excludes them).
 *  - CFA = fp + N: a frame pointer (rbp, x29). On x86-64 CFI no longer follows pushes, so the size
 *    is static only if DW_CFA_GNU_args_size says how much was pushed; otherwise -1 and the walker
 *    climbs by rbp. On AArch64 SP does not move in a fixed-size frame's body
 *    (spFixedInFixedSizeFrame), so the recorded size is the frame size.
 *  - no FDE: the recorded size is all there is (FLAG_NO_UNWIND_INFO); a dynamic frame (recorded
 *    size -1) on x86-64 always has a frame pointer, so it gets the rule CFA = rbp + 16 with rbp
 *    saved at CFA - 16 (noUnwindFramePointerRule); on AArch64 it has no rule.
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
 * every safepoint) and returned. Shared by the LLVM, plimmix and OCaml loaders; `saved` is in
 * `architecture.calleeSavedDwarf` order.
 */
export function frameAtSafepoint(
  row: UnwindRow | undefined,
  recordedBytes: number,
  saved: Int16Array,
  into: SafepointFrame = { frameSizeBytes: 0, flags: 0, cfaRegister: 0, cfaOffsetBytes: 0 },
  architecture: Architecture = X86_64,
): SafepointFrame {
  const dynamic = recordedBytes < 0;
  const { sp, fp } = architecture.dwarf;
  for (let k = 0; k < saved.length; k++) saved[k] = 0;
  let flags = dynamic ? FLAG_DYNAMIC_FRAME : 0;
  if (row?.returnAddressSigned === true) flags |= FLAG_RETURN_ADDRESS_SIGNED;
  if (row === undefined) {
    flags |= FLAG_NO_UNWIND_INFO;
    const assumed = architecture.noUnwindFramePointerRule;
    if (!dynamic || assumed === undefined) return setFrame(into, recordedBytes, flags, NO_CFA_RULE, 0);
    saved[calleeSavedIndex(fp, architecture)] = assumed.savedFpCfaOffsetBytes;
    return setFrame(into, -1, flags | FLAG_FRAME_POINTER_CFA, fp, assumed.cfaOffsetBytes);
  }
  for (const [reg, offset] of row.savedRegisters) {
    const k = calleeSavedIndex(reg, architecture);
    if (k >= 0) saved[k] = offset;
  }
  let frameSizeBytes: number;
  if (row.cfaRegister === sp) {
    frameSizeBytes = row.cfaOffset - architecture.callPushBytes;
  } else if (row.cfaRegister === fp) {
    flags |= FLAG_FRAME_POINTER_CFA;
    if (dynamic) frameSizeBytes = -1;
    else if (architecture.spFixedInFixedSizeFrame) frameSizeBytes = recordedBytes;
    else frameSizeBytes = row.argsSizeBytes > 0 ? recordedBytes + row.argsSizeBytes : -1;
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
