/**
 * DWARF register numbers used by call-frame information.
 *
 * x86-64 (System V psABI, Figure 3.36): 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp,
 * 8-15 r8-r15, 16 the return address column (RIP).
 * AArch64 (DWARF for the Arm 64-bit Architecture, §4.1): 0-30 x0-x30 (29 fp, 30 lr), 31 sp.
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

export const AARCH64_DWARF = {
  FP: 29,
  LR: 30,
  SP: 31,
} as const;

const X86_64_NAMES = ["rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"];
/** 17-32 are xmm0-xmm15 (stack map live-outs and vector locations use them). */
const X86_64_FIRST_XMM = 17;
const X86_64_LAST_XMM = 32;

/** The x86-64 name of a DWARF register (as llvm-dwarfdump prints it), or `reg<N>`. */
export function x86_64RegisterName(register: number): string {
  return X86_64_NAMES[register]?.toUpperCase() ?? `reg${register}`;
}

/** rootwalk's spelling of an x86-64 DWARF register: `rbx`, `sp`, `r12`, `xmm3`; `R#n` otherwise. */
export function dwarfRegisterName(register: number): string {
  if (register === X86_64_DWARF.RSP) return "sp";
  if (register === 254) return "cfa"; // DWARF_CFA, rootwalk's pseudo register (frame-descriptors.ts)
  if (register < X86_64_NAMES.length) return X86_64_NAMES[register]!;
  if (register >= X86_64_FIRST_XMM && register <= X86_64_LAST_XMM) return `xmm${register - X86_64_FIRST_XMM}`;
  return `R#${register}`;
}
