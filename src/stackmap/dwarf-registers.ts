/** DWARF register numbers of x86-64 (System V psABI, figure 3.36), as stack maps use them. */
const X86_64_NAMES: readonly string[] = [
  "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "sp",
  "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
  "rip",
];

/** A short register name: `rbx`, `sp`, `r12`, `xmm3`; `R#n` for numbers without one. */
export function dwarfRegisterName(reg: number): string {
  if (reg < X86_64_NAMES.length) return X86_64_NAMES[reg]!;
  if (reg >= 17 && reg <= 32) return `xmm${reg - 17}`;
  return `R#${reg}`;
}

function plusOffset(offset: number): string {
  return offset === 0 ? "" : offset > 0 ? `+${offset}` : `${offset}`;
}

/**
 * The spelling used by `rootwalk dump` for a location: `[sp+16]` (Indirect: the value is in that
 * slot), `sp+16` (Direct: the value is that address), `rbx` (Register), `const 0` (Constant and
 * ConstantIndex; the value as a decimal string).
 */
export function spellLocation(kind: number, dwarfReg: number, offsetBytes: number, constant: string): string {
  switch (kind) {
    case 1:
      return dwarfRegisterName(dwarfReg);
    case 2:
      return `${dwarfRegisterName(dwarfReg)}${plusOffset(offsetBytes)}`;
    case 3:
      return `[${dwarfRegisterName(dwarfReg)}${plusOffset(offsetBytes)}]`;
    default:
      return `const ${constant}`;
  }
}
