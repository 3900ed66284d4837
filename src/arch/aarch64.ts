import type { Architecture } from "./architecture.js";

/*
 * AArch64 on Linux (AAPCS64, DWARF for the Arm 64-bit Architecture "aadwarf64").
 *
 * DWARF numbers (aadwarf64 §4.1): 0-30 x0-x30 (x29 the frame pointer, x30 the link register
 * LR), 31 sp, 64-95 v0-v31. LLVM's stack maps and CFI use the same numbers: spilled roots are
 * `Indirect [R#31 + off]`; the CIE's return-address column is 30.
 *
 * Calls: `bl` pushes nothing; it writes the return address to x30. A frame saves x30 like any other
 * callee-saved register (at the offset its CFI rule for column 30 says), and an innermost frame
 * interrupted before its prologue may still hold it in x30 only. The caller's SP is the CFA.
 * llc reserves the outgoing-argument area in the prologue, so SP does not move in the body of a
 * fixed-size frame: the CFA is SP + StackSize there, whether or not the frame has a frame record.
 * With a frame record (`-frame-pointer=all`) the (x29, x30) pair may sit at the bottom of the frame
 * or above the locals (llc does both), so x29 is not a chain a walker may climb without the CFI.
 *
 * Pointer authentication (Armv8.3 PAC, `-mbranch-protection=pac-ret`): `paciasp` signs x30 before
 * it is saved, `autiasp` checks it before `ret`; the CFI marks the signed span with
 * DW_CFA_AARCH64_negate_ra_state (0x2d), so an unwinder knows to strip the signature (the bits
 * above the virtual address size, USER_ADDRESS_BITS) from a saved return address.
 *
 * Callee-saved (AAPCS64 §6.1.1): x19-x28, plus x29 and x30, which every non-leaf frame saves and
 * restores as well; the walker tracks all twelve so that roots in callee-saved registers of outer
 * frames, and return addresses saved in x30, resolve. (d8-d15 are callee-saved too but hold no
 * GC pointers.)
 *
 * Signal frames (Linux arch/arm64/include/uapi/asm/ucontext.h, sigcontext.h): `struct ucontext` is
 * uc_flags, uc_link, uc_stack (24 bytes), uc_sigmask (sigset_t padded to 128 bytes), then
 * uc_mcontext at byte 176 (16-aligned): fault_address, regs[31] (x0-x30), sp, pc, pstate. The
 * trampoline `__kernel_rt_sigreturn` (vDSO) is `mov x8, #139; svc #0`.
 *
 * Core files (Linux elf_prstatus for arm64): pr_reg at byte 112 is `struct user_pt_regs`:
 * x0-x30, sp, pc, pstate (34 u64).
 */

export const AARCH64_DWARF = {
  X0: 0,
  FP: 29,
  LR: 30,
  SP: 31,
  V0: 64,
} as const;

const LAST_X = 30;
const LAST_V = 95;
/** rootwalk's pseudo register for CFA-relative locations (src/safepoints/frame-descriptors.ts DWARF_CFA). */
const CFA_PSEUDO_REGISTER = 254;

const CALLEE_SAVED_DWARF = [19, 20, 21, 22, 23, 24, 25, 26, 27, 28, AARCH64_DWARF.FP, AARCH64_DWARF.LR] as const;
const CALLEE_SAVED_NAMES = ["x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29", "x30"] as const;

/** struct user_pt_regs, in order. */
const USER_PT_REGS = [...Array.from({ length: LAST_X + 1 }, (_, n) => `x${n}`), "sp", "pc", "pstate"] as const;
/** uc_mcontext: fault_address (8 bytes), then regs[31], sp, pc, pstate. */
const MCONTEXT_OFFSET_BYTES = 176;
const MCONTEXT_REGS_OFFSET_BYTES = MCONTEXT_OFFSET_BYTES + 8;
/** struct rt_sigframe starts with a siginfo_t (128 bytes); the ucontext follows it. */
const SIGINFO_BYTES = 128;
/** User-space virtual addresses on AArch64 Linux (VA_BITS 48; 52-bit addresses are opt-in per mmap). */
const USER_ADDRESS_BITS = 48;

export type Aarch64CalleeSavedName = (typeof CALLEE_SAVED_NAMES)[number];

/** rootwalk's spelling of an AArch64 DWARF register: `x19`, `sp`, `v3`, `cfa`; `R#n` otherwise. */
function registerName(dwarf: number): string {
  if (dwarf === AARCH64_DWARF.SP) return "sp";
  if (dwarf === CFA_PSEUDO_REGISTER) return "cfa";
  if (dwarf >= AARCH64_DWARF.X0 && dwarf <= LAST_X) return `x${dwarf}`;
  if (dwarf >= AARCH64_DWARF.V0 && dwarf <= LAST_V) return `v${dwarf - AARCH64_DWARF.V0}`;
  return `R#${dwarf}`;
}

/** The name llvm-dwarfdump (14 and 19) prints for an AArch64 DWARF register: `W19`, `WSP`, or `reg<N>`. */
function dwarfdumpName(dwarf: number): string {
  if (dwarf === AARCH64_DWARF.SP) return "WSP";
  if (dwarf >= AARCH64_DWARF.X0 && dwarf <= LAST_X) return `W${dwarf}`;
  return `reg${dwarf}`;
}

export const AARCH64 = {
  name: "AArch64",
  nodeArch: "arm64",
  linuxTriple: "aarch64-linux-gnu",
  wordBytes: 8,
  dwarf: { sp: AARCH64_DWARF.SP, fp: AARCH64_DWARF.FP, returnAddress: AARCH64_DWARF.LR },
  calleeSavedDwarf: CALLEE_SAVED_DWARF,
  calleeSavedNames: CALLEE_SAVED_NAMES,
  framePointerIndex: CALLEE_SAVED_DWARF.indexOf(AARCH64_DWARF.FP),
  callPushBytes: 0,
  returnAddressCfaOffsetBytes: undefined,
  spFixedInFixedSizeFrame: true,
  noUnwindFramePointerRule: undefined,
  cfiNegateRaState: true,
  signedAddressBits: USER_ADDRESS_BITS,
  registerName,
  dwarfdumpName,
  signalContext: {
    sigreturnCode: [0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4],
    ucontextOffsetBytes: SIGINFO_BYTES,
    registersOffsetBytes: MCONTEXT_REGS_OFFSET_BYTES,
    spIndex: USER_PT_REGS.indexOf("sp"),
    pcIndex: USER_PT_REGS.indexOf("pc"),
    // regs[n] is xn, and xn's DWARF number is n.
    calleeSavedIndex: CALLEE_SAVED_DWARF.map((dwarf) => dwarf),
  },
  coreRegisters: { offsetBytes: 112, names: USER_PT_REGS, sp: "sp", pc: "pc" },
} as const satisfies Architecture;
