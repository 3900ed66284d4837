export * from "./elf-constants.js";
export { ElfFile, type ElfProgramHeader } from "./elf-file.js";
export { ElfSection } from "./elf-section.js";
export type { ElfSymbol } from "./elf-symbol.js";
export type { ElfRelocation } from "./elf-relocation.js";
export { relocatedSection, symbolAt, functionStartingAt, type RelocatedSection, type RelocationTarget } from "./relocate.js";
