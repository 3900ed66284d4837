import { UnsupportedInputError } from "../errors.js";
import { EM_AARCH64, EM_X86_64, machineName } from "../elf/elf-constants.js";
import { E_MACHINE } from "../elf/elf-file.js";
import { AARCH64 } from "./aarch64.js";
import type { Architecture } from "./architecture.js";
import { X86_64 } from "./x86-64.js";

/** Every architecture rootwalk knows. */
export const ARCHITECTURES: readonly Architecture[] = [X86_64, AARCH64];

/**
 * The most callee-saved registers any architecture tracks (x86-64 6, AArch64 12): the stride of
 * walker/slot.ts register slots and the size of register-slot arrays that serve every architecture.
 */
export const MAX_CALLEE_SAVED_COUNT = Math.max(...ARCHITECTURES.map((a) => a.calleeSavedDwarf.length));

/**
 * The architecture description of an ELF file's e_machine: the one place that maps machines to
 * descriptions. Any other machine is refused by name rather than read with the wrong registers.
 */
export function architectureOfMachine(machine: number): Architecture {
  if (machine === EM_X86_64) return X86_64;
  if (machine === EM_AARCH64) return AARCH64;
  throw new UnsupportedInputError(
    "ELF header e_machine",
    E_MACHINE,
    machineName(machine),
    `${machineName(EM_X86_64)} or ${machineName(EM_AARCH64)}: rootwalk reads x86-64 and AArch64 stack maps, registers and unwind info only`,
  );
}
