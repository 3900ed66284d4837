import { dwarfRegisterName } from "../unwind/dwarf-registers.js";

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
