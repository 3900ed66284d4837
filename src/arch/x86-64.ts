import type { Architecture } from "./architecture.js";

/*
 * x86-64 on Linux (System V psABI).
 *
 * DWARF numbers (psABI Figure 3.36): 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp,
 * 8-15 r8-r15, 16 the return-address column (rip), 17-32 xmm0-xmm15 (stack map live-outs and
 * vector locations use them).
 *
 * Callee-saved (psABI §3.2.1): rbx, rbp, r12-r15, in DWARF order. The runtime's trampoline
 * (src/native/runtime-entry.S) pushes r15 first and rbx last, so its frame holds them in this
 * order from its lowest address up.
 *
 * Signal frames (Linux arch/x86/include/uapi/asm/sigcontext.h, glibc <sys/ucontext.h>):
 * `struct ucontext` is uc_flags, uc_link, uc_stack (24 bytes), then uc_mcontext.gregs[23] at
 * byte 40: r8 r9 r10 r11 r12 r13 r14 r15 rdi rsi rbp rbx rdx rax rcx rsp rip ... (REG_R8 = 0).
 * The trampoline `__restore_rt` is `mov $15, %rax; syscall` (rt_sigreturn).
 *
 * Core files (Linux elf_prstatus): pr_reg at byte 112 is `struct user_regs_struct`, 27 u64.
 */

export const X86_64_DWARF = {
  RAX: 0,
  RDX: 1,
  RCX: 2,
  RBX: 3,
  RSI: 4,
  RDI: 5,
  RBP: 6,
  RSP: 7,
  R8: 8,
  R9: 9,
  R10: 10,
  R11: 11,
  R12: 12,
  R13: 13,
  R14: 14,
  R15: 15,
  RA: 16,
} as const;

/** DWARF number -> name, 0..16. */
const NAMES = ["rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"] as const;
const FIRST_XMM = 17;
const LAST_XMM = 32;
/** rootwalk's pseudo register for CFA-relative locations (src/safepoints/frame-descriptors.ts DWARF_CFA). */
const CFA_PSEUDO_REGISTER = 254;

const CALLEE_SAVED_DWARF = [X86_64_DWARF.RBX, X86_64_DWARF.RBP, X86_64_DWARF.R12, X86_64_DWARF.R13, X86_64_DWARF.R14, X86_64_DWARF.R15] as const;
const CALLEE_SAVED_NAMES = ["rbx", "rbp", "r12", "r13", "r14", "r15"] as const;

/** uc_mcontext.gregs, by name (glibc REG_*). */
const GREGS = ["r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rdi", "rsi", "rbp", "rbx", "rdx", "rax", "rcx", "rsp", "rip"] as const;
/** struct user_regs_struct, in order. */
const USER_REGS = [
  "r15",
  "r14",
  "r13",
  "r12",
  "rbp",
  "rbx",
  "r11",
  "r10",
  "r9",
  "r8",
  "rax",
  "rcx",
  "rdx",
  "rsi",
  "rdi",
  "orig_rax",
  "rip",
  "cs",
  "eflags",
  "rsp",
  "ss",
  "fs_base",
  "gs_base",
  "ds",
  "es",
  "fs",
  "gs",
] as const;

export type X86_64CalleeSavedName = (typeof CALLEE_SAVED_NAMES)[number];
export type X86_64UserRegister = (typeof USER_REGS)[number];

/** rootwalk's spelling of an x86-64 DWARF register: `rbx`, `sp`, `r12`, `xmm3`, `cfa`; `R#n` otherwise. */
function registerName(dwarf: number): string {
  if (dwarf === X86_64_DWARF.RSP) return "sp";
  if (dwarf === CFA_PSEUDO_REGISTER) return "cfa";
  if (dwarf >= 0 && dwarf < NAMES.length) return NAMES[dwarf]!;
  if (dwarf >= FIRST_XMM && dwarf <= LAST_XMM) return `xmm${dwarf - FIRST_XMM}`;
  return `R#${dwarf}`;
}

/** The name llvm-dwarfdump prints for an x86-64 DWARF register, or `reg<N>`. */
function dwarfdumpName(dwarf: number): string {
  return NAMES[dwarf]?.toUpperCase() ?? `reg${dwarf}`;
}

export const X86_64 = {
  name: "x86-64",
  nodeArch: "x64",
  linuxTriple: "x86_64-linux-gnu",
  wordBytes: 8,
  dwarf: { sp: X86_64_DWARF.RSP, fp: X86_64_DWARF.RBP, returnAddress: X86_64_DWARF.RA },
  calleeSavedDwarf: CALLEE_SAVED_DWARF,
  calleeSavedNames: CALLEE_SAVED_NAMES,
  framePointerIndex: CALLEE_SAVED_DWARF.indexOf(X86_64_DWARF.RBP),
  callPushBytes: 8,
  returnAddressCfaOffsetBytes: -8,
  spFixedInFixedSizeFrame: false,
  noUnwindFramePointerRule: { cfaOffsetBytes: 16, savedFpCfaOffsetBytes: -16 },
  cfiNegateRaState: false,
  signedAddressBits: undefined,
  registerName,
  dwarfdumpName,
  signalContext: {
    sigreturnCode: [0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05],
    ucontextOffsetBytes: 0,
    registersOffsetBytes: 40,
    spIndex: GREGS.indexOf("rsp"),
    pcIndex: GREGS.indexOf("rip"),
    calleeSavedIndex: CALLEE_SAVED_NAMES.map((name) => GREGS.indexOf(name)),
  },
  coreRegisters: { offsetBytes: 112, names: USER_REGS, sp: "rsp", pc: "rip" },
} as const satisfies Architecture;
