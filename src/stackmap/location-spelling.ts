import type { Architecture } from "../arch/architecture.js";

function plusOffset(offset: number): string {
  return offset === 0 ? "" : offset > 0 ? `+${offset}` : `${offset}`;
}

/**
 * The spelling used by `rootwalk dump` for a location: `[sp+16]` (Indirect: the value is in that
 * slot), `sp+16` (Direct: the value is that address), `rbx` (Register), `const 0` (Constant and
 * ConstantIndex; the value as a decimal string), with the architecture's register names.
 */
export function spellLocation(architecture: Architecture, kind: number, dwarfReg: number, offsetBytes: number, constant: string): string {
  switch (kind) {
    case 1:
      return architecture.registerName(dwarfReg);
    case 2:
      return `${architecture.registerName(dwarfReg)}${plusOffset(offsetBytes)}`;
    case 3:
      return `[${architecture.registerName(dwarfReg)}${plusOffset(offsetBytes)}]`;
    default:
      return `const ${constant}`;
  }
}
