import { statSync } from "node:fs";
import { FileSource } from "../bytes/byte-source.js";
import { ByteView } from "../bytes/byte-view.js";
import { InvalidArgumentError, MalformedInputError } from "../errors.js";
import { buildIdOfNotes } from "./elf-notes.js";
import { ELF_MAGIC, PN_XNUM, PT_NOTE } from "./elf-constants.js";
import { E_MACHINE, E_PHNUM, E_PHOFF, E_SHOFF, ELF_HEADER_SIZE_BYTES, P_FILESZ, P_OFFSET, PROGRAM_HEADER_SIZE_BYTES } from "./elf-file.js";
import { SH_INFO } from "./elf-section.js";

/*
 * What a core's reader needs to know of a file the core names before anything else: is it a
 * 64-bit little-endian ELF, for which machine, with which GNU build id. Read by position, never
 * whole (a core can name a data file of many GiB, or a device): the 64-byte header, the program
 * header table (e_phoff, e_phnum x 56; PN_XNUM's real count in section 0's sh_info, the u32 at
 * +44 of the section header at e_shoff) and each PT_NOTE segment (p_offset, p_filesz) up to
 * MAX_NOTE_SEGMENT_BYTES; a larger one is passed over (a build id note is 36 bytes).
 */

const MAX_NOTE_SEGMENT_BYTES = 1 << 20;
/** PN_XNUM's count is a u32; more program headers than this is no ELF a linker wrote. */
const MAX_PROGRAM_HEADERS = 1 << 16;

export interface ElfIdentity {
  /** e_machine (src/arch/elf-architecture.ts names it). */
  machine: number;
  /** The GNU build id (hex), or undefined when the notes hold none. */
  buildId: string | undefined;
}

/**
 * The identity of the ELF file at `path`. A file that is not a regular file is an
 * InvalidArgumentError (a device's read never ends), one that is not a 64-bit little-endian ELF
 * a MalformedInputError, one that cannot be opened a Node system error (ENOENT, EACCES).
 */
export function readElfIdentity(path: string): ElfIdentity {
  if (!statSync(path).isFile()) throw new InvalidArgumentError(path, "not a regular file", "an ELF file");
  const source = new FileSource(path);
  try {
    const header = new ByteView(source.readAt(0, Math.min(ELF_HEADER_SIZE_BYTES, source.sizeBytes), "ELF header"));
    header.need(0, ELF_HEADER_SIZE_BYTES, "ELF header");
    if (!ELF_MAGIC.every((b, i) => header.u8(i) === b) || header.u8(4) !== 2 || header.u8(5) !== 1)
      throw new MalformedInputError("ELF header", 0, "not a 64-bit little-endian ELF file", "a 64-bit little-endian ELF file");
    const phoff = header.u64Number(E_PHOFF, "e_phoff");
    let count = header.u16(E_PHNUM);
    if (count === PN_XNUM) count = new ByteView(source.readAt(header.u64Number(E_SHOFF, "e_shoff") + SH_INFO, 4, "section 0 sh_info")).u32(0);
    if (count > MAX_PROGRAM_HEADERS)
      throw new MalformedInputError("section 0 sh_info (e_phnum is PN_XNUM)", 0, count, `at most ${MAX_PROGRAM_HEADERS} program headers`);
    const table = new ByteView(source.readAt(phoff, count * PROGRAM_HEADER_SIZE_BYTES, "program header table"), phoff);
    let buildId: string | undefined;
    for (let at = 0; at < count * PROGRAM_HEADER_SIZE_BYTES && buildId === undefined; at += PROGRAM_HEADER_SIZE_BYTES) {
      const size = table.u64Number(at + P_FILESZ, "p_filesz");
      if (table.u32(at) !== PT_NOTE || size > MAX_NOTE_SEGMENT_BYTES) continue;
      buildId = buildIdOfNotes(source.readAt(table.u64Number(at + P_OFFSET, "p_offset"), size, "PT_NOTE segment"));
    }
    return { machine: header.u16(E_MACHINE), buildId };
  } finally {
    source.close();
  }
}
