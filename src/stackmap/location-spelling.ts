import { X86_64 } from "../arch/x86-64.js";

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
      return X86_64.registerName(dwarfReg);
    case 2:
      return `${X86_64.registerName(dwarfReg)}${plusOffset(offsetBytes)}`;
    case 3:
      return `[${X86_64.registerName(dwarfReg)}${plusOffset(offsetBytes)}]`;
    default:
      return `const ${constant}`;
  }
}
