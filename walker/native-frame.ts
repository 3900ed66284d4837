import type { Architecture } from "../src/arch/architecture.js";
import type { Memory } from "../src/memory/memory.js";
import { calleeSavedIndex } from "../src/safepoints/frame-descriptors.js";
import type { MappedModule } from "../src/unwind/module-map.js";
import type { RegisterContext } from "./register-context.js";
import { UNKNOWN_SLOT, readSlot, readSlotExact } from "./slot.js";

/*
 * One native frame climbed by its CFI row, for walker/unwinder.ts, on the walk's architecture.
 *
 *   CFA          = register + offset: the SP register is the frame's SP; any callee-saved
 *                  register is read from its slot (rbp or x29 in frame-pointer code); other
 *                  registers are not tracked
 *   return addr  at CFA + offset (rule offset(N) of the return-address column: x86-64 16, AArch64
 *                30); an undefined rule marks the outermost frame (clone3, _start); no rule at
 *                all, where the column is a tracked register (AArch64 x30), means the return
 *                address is still in that register (a frame that has not saved x30)
 *   signed       the row says the return address is signed (AArch64 negate_ra_state): the
 *                unwinder strips the signature (stripSignature) when it reads it
 *   caller's callee-saved register k:
 *       offset(N)       the save slot CFA + N
 *       same / none     where it was for this frame
 *       register(r)     where register r was for this frame (when r is callee-saved)
 *       undefined, val_offset, r not callee-saved   unknown
 *
 * The signal trampoline (x86-64 __restore_rt, AArch64 __kernel_rt_sigreturn) is recognised by its
 * bytes, as gdb does: the kernel's ucontext lies at a fixed offset from its SP, so every register
 * of the interrupted frame is in memory (the layout is the architecture's signalContext).
 */

export interface NativeStep {
  cfa: number;
  /** A walker/slot.ts slot: a stack address, or the register that still holds the return address. */
  raSlot: number;
  raSigned: boolean;
  outermost: boolean;
  /** Why the step failed (when nativeStep returns false). */
  problem: string;
}

export function isSigreturnTrampoline(architecture: Architecture, code: Uint8Array): boolean {
  const expected = architecture.signalContext.sigreturnCode;
  if (code.length < expected.length) return false;
  for (let i = 0; i < expected.length; i++) if (code[i] !== expected[i]) return false;
  return true;
}

/** The interrupted frame's callee-saved register slots, in the ucontext's registers at `gregs`. */
export function signalFrameSlots(architecture: Architecture, gregs: number, out: Float64Array): void {
  const index = architecture.signalContext.calleeSavedIndex;
  for (let k = 0; k < index.length; k++) out[k] = gregs + index[k]! * architecture.wordBytes;
}

/**
 * The return address in `slot` without its pointer-authentication signature: the low
 * architecture.signedAddressBits bits, read exactly (a signed address is above 2^53). NaN for a
 * register no context holds.
 */
export function stripSignature(architecture: Architecture, slot: number, memory: Memory, contexts: readonly (RegisterContext | undefined)[]): number {
  const exact = readSlotExact(slot, memory, contexts);
  if (exact === undefined) return Number.NaN;
  const bits = architecture.signedAddressBits;
  return Number(bits === undefined ? exact : exact & ((1n << BigInt(bits)) - 1n));
}

/**
 * Computes the frame at (`pc` in `module`, `sp`) from its CFI row into `out`, and the caller's
 * register slots into `nextSlots`. False (with out.problem) when the row cannot be applied.
 * May throw a RootwalkError for unwind information it cannot read.
 */
export function nativeStep(
  architecture: Architecture,
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
  if (row.cfaRegister === architecture.dwarf.sp) base = sp;
  else {
    const k = calleeSavedIndex(row.cfaRegister, architecture);
    base = k < 0 ? Number.NaN : readSlot(regSlots[k]!, memory, contexts);
    if (Number.isNaN(base)) {
      out.problem = `its CFA rule uses register ${architecture.registerName(row.cfaRegister)}, whose value is not known here`;
      return false;
    }
  }
  out.cfa = base + row.cfaOffset;
  const raColumn = architecture.dwarf.returnAddress;
  const raOffset = row.savedRegisters.get(raColumn);
  const raRule = row.otherRules.get(raColumn);
  const raRegister = calleeSavedIndex(raColumn, architecture);
  out.outermost = false;
  out.raSigned = row.returnAddressSigned;
  if (raOffset !== undefined) out.raSlot = out.cfa + raOffset;
  else if (raRule?.kind === "undefined") out.outermost = true;
  else if (raRegister >= 0 && (raRule === undefined || raRule.kind === "sameValue") && regSlots[raRegister] !== UNKNOWN_SLOT)
    out.raSlot = regSlots[raRegister]!;
  else {
    out.problem = raRegister >= 0 ? "its return address is in a register whose value is not known here" : "its CFI row has no rule for the return address";
    return false;
  }
  const calleeSaved = architecture.calleeSavedDwarf;
  for (let k = 0; k < calleeSaved.length; k++) {
    const register = calleeSaved[k]!;
    const offset = row.savedRegisters.get(register);
    if (offset !== undefined) {
      nextSlots[k] = out.cfa + offset;
      continue;
    }
    const rule = row.otherRules.get(register);
    if (rule === undefined || rule.kind === "sameValue") nextSlots[k] = regSlots[k]!;
    else if (rule.kind === "register") {
      const from = calleeSavedIndex(rule.register, architecture);
      nextSlots[k] = from < 0 ? UNKNOWN_SLOT : regSlots[from]!;
    } else nextSlots[k] = UNKNOWN_SLOT;
  }
  return true;
}
