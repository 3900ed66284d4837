import { ByteView } from "../bytes/byte-view.js";
import { SHF_ALLOC, SHT_NOBITS, SHT_NULL } from "./elf-constants.js";

/**
 * ELF64 section header, 64 bytes (gABI "Sections"), little-endian:
 *
 *   0  u32 sh_name       offset of the name in the section-name string table (e_shstrndx)
 *   4  u32 sh_type       SHT_*
 *   8  u64 sh_flags      SHF_*
 *  16  u64 sh_addr       link-time address when SHF_ALLOC (0 in a .o)
 *  24  u64 sh_offset     file offset of the contents (meaningless for SHT_NOBITS / SHT_NULL)
 *  32  u64 sh_size       size in bytes (in memory for SHT_NOBITS)
 *  40  u32 sh_link       type-dependent: string table of a symbol table, symbol table of a rela
 *  44  u32 sh_info       type-dependent: section a rela section applies to, first non-local symbol
 *  48  u64 sh_addralign  0 or a power of two
 *  56  u64 sh_entsize    size of one entry for tables (24 for ELF64 symbols and Rela entries)
 *
 * Section 0 is the null section; when the file has more than 0xfeff sections it also carries
 * the real section count (sh_size) and the real e_shstrndx (sh_link).
 */
export const SH_NAME = 0;
export const SH_TYPE = SH_NAME + 4;
export const SH_FLAGS = SH_TYPE + 4;
export const SH_ADDR = SH_FLAGS + 8;
export const SH_OFFSET = SH_ADDR + 8;
export const SH_SIZE = SH_OFFSET + 8;
export const SH_LINK = SH_SIZE + 8;
export const SH_INFO = SH_LINK + 4;
export const SH_ADDRALIGN = SH_INFO + 4;
export const SH_ENTSIZE = SH_ADDRALIGN + 8;
export const SECTION_HEADER_SIZE_BYTES = SH_ENTSIZE + 8; // 64

/** One section of an `ElfFile`. Its contents are a window onto the file's bytes, never a copy. */
export class ElfSection {
  constructor(
    private readonly fileBytes: Uint8Array,
    /** Position in the section header table. */
    readonly index: number,
    /** File offset of this section's header (for error messages about its fields). */
    readonly headerOffset: number,
    readonly name: string,
    readonly type: number,
    readonly flags: number,
    readonly addr: number,
    readonly offset: number,
    readonly size: number,
    readonly link: number,
    readonly info: number,
    readonly entsize: number,
    readonly addrAlign: number,
  ) {}

  /** True when the section has bytes in the file (not SHT_NOBITS like .bss, not SHT_NULL). */
  get hasFileBytes(): boolean {
    return this.type !== SHT_NOBITS && this.type !== SHT_NULL;
  }

  get isAlloc(): boolean {
    return (this.flags & SHF_ALLOC) !== 0;
  }

  /** The contents as a zero-copy view of the file (empty for SHT_NOBITS and SHT_NULL). */
  bytes(): Uint8Array {
    if (!this.hasFileBytes) return this.fileBytes.subarray(0, 0);
    return this.fileBytes.subarray(this.offset, this.offset + this.size);
  }

  /** The contents as a reader whose error messages name file offsets. */
  view(): ByteView {
    return new ByteView(this.bytes(), this.hasFileBytes ? this.offset : 0);
  }

  /** True when `address` lies in `[addr, addr + size)` (meaningful for SHF_ALLOC sections). */
  containsAddress(address: number): boolean {
    return address >= this.addr && address < this.addr + this.size;
  }

  /** "section 5 (.rela.dyn)" — how messages name a section. */
  describe(): string {
    return `section ${this.index} (${this.name === "" ? "<no name>" : this.name})`;
  }
}
