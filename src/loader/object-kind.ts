import { ET_DYN, ET_EXEC, ET_REL } from "../elf/elf-constants.js";
import type { ElfFile } from "../elf/elf-file.js";
import { UnsupportedInputError } from "../errors.js";

/** What kind of ELF file a map was loaded from: decides how its addresses are relocated. */
export type ObjectKind = "relocatable" | "shared" | "executable";

export function elfObjectKind(elf: ElfFile): ObjectKind {
  if (elf.type === ET_REL) return "relocatable";
  if (elf.type === ET_DYN) return "shared";
  if (elf.type === ET_EXEC) return "executable";
  throw new UnsupportedInputError("ELF file type (e_type)", 16, elf.type, "1 relocatable, 2 executable, 3 shared object");
}
