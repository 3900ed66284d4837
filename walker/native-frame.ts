import type { Memory } from "../src/memory/memory.js";
import { CALLEE_SAVED_COUNT, CALLEE_SAVED_DWARF, calleeSavedIndex } from "../src/safepoints/frame-descriptors.js";
import { X86_64_DWARF } from "../src/unwind/dwarf-registers.js";
import type { MappedModule } from "../src/unwind/module-map.js";
import type { RegisterContext } from "./register-context.js";
import { UNKNOWN_SLOT, readSlot } from "./slot.js";

/*
 * One native frame climbed by its CFI row (x86-64), for walker/unwinder.ts.
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
 * The signal trampoline (__restore_rt: `mov $15, %rax; syscall`, rt_sigreturn) is recognised by
 * its bytes, as gdb does: its SP is the kernel's ucontext (Linux x86-64 `struct ucontext`:
 * uc_flags, uc_link, uc_stack (24 bytes), then uc_mcontext.gregs[23]: r8..r15, rdi, rsi, rbp,
 * rbx, rdx, rax, rcx, rsp, rip, ...), so every register of the interrupted frame is in memory.
 */

export interface NativeStep {
  cfa: number;
  raSlot: number;
  outermost: boolean;
  /** Why the step failed (when nativeStep returns false). */
  problem: string;
}

/** Offset of uc_mcontext.gregs in the ucontext. */
export const UCONTEXT_GREGS_BYTES = 40;
const GREG_INDEX = { r12: 4, r13: 5, r14: 6, r15: 7, rbp: 10, rbx: 11, rsp: 15, rip: 16 } as const;
/** CALLEE_SAVED_DWARF order (rbx rbp r12 r13 r14 r15) -> gregs index. */
const GREG_OF_CALLEE_SAVED = [GREG_INDEX.rbx, GREG_INDEX.rbp, GREG_INDEX.r12, GREG_INDEX.r13, GREG_INDEX.r14, GREG_INDEX.r15];
export const GREG_RSP_BYTES = GREG_INDEX.rsp * 8;
export const GREG_RIP_BYTES = GREG_INDEX.rip * 8;

const SIGRETURN_X86_64 = [0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05];

export function isSigreturnTrampoline(code: Uint8Array): boolean {
  if (code.length < SIGRETURN_X86_64.length) return false;
  for (let i = 0; i < SIGRETURN_X86_64.length; i++) if (code[i] !== SIGRETURN_X86_64[i]) return false;
  return true;
}

/** The interrupted frame's callee-saved register slots, in the ucontext's gregs at `gregs`. */
export function signalFrameSlots(gregs: number, out: Float64Array): void {
  for (let k = 0; k < CALLEE_SAVED_COUNT; k++) out[k] = gregs + GREG_OF_CALLEE_SAVED[k]! * 8;
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
  if (row.cfaRegister === X86_64_DWARF.RSP) base = sp;
  else {
    const k = calleeSavedIndex(row.cfaRegister);
    base = k < 0 ? Number.NaN : readSlot(regSlots[k]!, memory, contexts);
    if (Number.isNaN(base)) {
      out.problem = `its CFA rule uses register ${row.cfaRegister}, whose value is not known here`;
      return false;
    }
  }
  out.cfa = base + row.cfaOffset;
  const raOffset = row.savedRegisters.get(X86_64_DWARF.RA);
  out.outermost = false;
  if (raOffset !== undefined) out.raSlot = out.cfa + raOffset;
  else if (row.otherRules.get(X86_64_DWARF.RA)?.kind === "undefined") out.outermost = true;
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
