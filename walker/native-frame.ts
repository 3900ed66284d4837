import type { Memory } from "../src/memory/memory.js";
import { CALLEE_SAVED_COUNT, CALLEE_SAVED_DWARF, calleeSavedIndex } from "../src/safepoints/frame-descriptors.js";
import { X86_64 } from "../src/arch/x86-64.js";
import type { MappedModule } from "../src/unwind/module-map.js";
import type { RegisterContext } from "./register-context.js";
import { UNKNOWN_SLOT, readSlot } from "./slot.js";

/*
 * One native frame climbed by its CFI row, for walker/unwinder.ts.
 *
 *   CFA          = register + offset: rsp is the frame's SP; any callee-saved register is read
 *                  from its slot (rbp in frame-pointer code); other registers are not tracked
 *   return addr  at CFA + offset (rule offset(N) of column 16); an undefined rule marks the
 *                outermost frame (clone3, _start)
 *   caller's callee-saved register k:
 *       offset(N)       the save slot CFA + N
 *       same / none     where it was for this frame
 *       register(r)     where register r was for this frame (when r is callee-saved)
 *       undefined, val_offset, r not callee-saved   unknown
 *
 * The signal trampoline (__restore_rt, rt_sigreturn) is recognised by its bytes, as gdb does: its
 * SP is the kernel's ucontext, so every register of the interrupted frame is in memory (the layout
 * is the architecture's: src/arch/x86-64.ts signalContext).
 */

export interface NativeStep {
  cfa: number;
  raSlot: number;
  outermost: boolean;
  /** Why the step failed (when nativeStep returns false). */
  problem: string;
}

const SIGNAL = X86_64.signalContext;
const WORD_BYTES = X86_64.wordBytes;
/** Offset of the saved general registers (uc_mcontext.gregs) in the ucontext. */
export const UCONTEXT_GREGS_BYTES = SIGNAL.registersOffsetBytes;
/** Offsets of the interrupted SP and PC in those registers. */
export const GREG_SP_BYTES = SIGNAL.spIndex * WORD_BYTES;
export const GREG_PC_BYTES = SIGNAL.pcIndex * WORD_BYTES;
/** Bytes of the sigreturn trampoline's code that identify it. */
export const SIGRETURN_CODE_BYTES = SIGNAL.sigreturnCode.length;

export function isSigreturnTrampoline(code: Uint8Array): boolean {
  const expected = SIGNAL.sigreturnCode;
  if (code.length < expected.length) return false;
  for (let i = 0; i < expected.length; i++) if (code[i] !== expected[i]) return false;
  return true;
}

/** The interrupted frame's callee-saved register slots, in the ucontext's gregs at `gregs`. */
export function signalFrameSlots(gregs: number, out: Float64Array): void {
  for (let k = 0; k < CALLEE_SAVED_COUNT; k++) out[k] = gregs + SIGNAL.calleeSavedIndex[k]! * WORD_BYTES;
}

/**
 * Computes the frame at (`pc` in `module`, `sp`) from its CFI row into `out`, and the caller's
 * register slots into `nextSlots`. False (with out.problem) when the row cannot be applied.
 * May throw a RootwalkError for unwind information it cannot read.
 */
export function nativeStep(
  module: MappedModule,
  pc: number,
  sp: number,
  regSlots: Float64Array,
  memory: Memory,
  contexts: readonly (RegisterContext | undefined)[],
  out: NativeStep,
  nextSlots: Float64Array,
): boolean {
  const row = module.rowAt(pc);
  if (row === undefined) {
    out.problem = `no CFI in ${module.name} covers it`;
    return false;
  }
  let base: number;
  if (row.cfaRegister === X86_64.dwarf.sp) base = sp;
  else {
    const k = calleeSavedIndex(row.cfaRegister);
    base = k < 0 ? Number.NaN : readSlot(regSlots[k]!, memory, contexts);
    if (Number.isNaN(base)) {
      out.problem = `its CFA rule uses register ${row.cfaRegister}, whose value is not known here`;
      return false;
    }
  }
  out.cfa = base + row.cfaOffset;
  const raOffset = row.savedRegisters.get(X86_64.dwarf.returnAddress);
  out.outermost = false;
  if (raOffset !== undefined) out.raSlot = out.cfa + raOffset;
  else if (row.otherRules.get(X86_64.dwarf.returnAddress)?.kind === "undefined") out.outermost = true;
  else {
    out.problem = "its CFI row has no rule for the return address";
    return false;
  }
  for (let k = 0; k < CALLEE_SAVED_COUNT; k++) {
    const register = CALLEE_SAVED_DWARF[k]!;
    const offset = row.savedRegisters.get(register);
    if (offset !== undefined) {
      nextSlots[k] = out.cfa + offset;
      continue;
    }
    const rule = row.otherRules.get(register);
    if (rule === undefined || rule.kind === "sameValue") nextSlots[k] = regSlots[k]!;
    else if (rule.kind === "register") {
      const from = calleeSavedIndex(rule.register);
      nextSlots[k] = from < 0 ? UNKNOWN_SLOT : regSlots[from]!;
    } else nextSlots[k] = UNKNOWN_SLOT;
  }
  return true;
}
