/** The CFI facts the loaders need at one address (see src/unwind/cfi.ts; made by loader/elf-unwind.ts). */
export interface UnwindRow {
  /** DWARF register of the CFA rule: 7 rsp, 6 rbp. */
  cfaRegister: number;
  cfaOffset: number;
  /** DWARF register -> offset from the CFA of its save slot. */
  savedRegisters: ReadonlyMap<number, number>;
  /** DW_CFA_GNU_args_size in force, 0 if none. */
  argsSizeBytes: number;
  /** AArch64 pointer authentication: the saved return address is signed here (negate_ra_state). */
  returnAddressSigned?: boolean;
}
