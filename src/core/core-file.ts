import { type ByteSource, FileSource, bytesSource } from "../bytes/byte-source.js";
import type { Architecture } from "../arch/architecture.js";
import { architectureOfMachine } from "../arch/elf-architecture.js";
import { ByteView } from "../bytes/byte-view.js";
import { MalformedInputError, TruncatedInputError, hex } from "../errors.js";
import { type CoreSegment, CoreMemory } from "./core-memory.js";
import { ET_CORE, PT_LOAD, PT_NOTE } from "../elf/elf-constants.js";
import { E_MACHINE } from "../elf/elf-file.js";
import { buildIdOfNotes, readNotes } from "../elf/elf-notes.js";

/*
 * An ELF core file (ET_CORE, from `gcore`, the kernel or qemu-user), x86-64 or AArch64 Linux
 * (the architecture by e_machine: src/arch/elf-architecture.ts):
 *
 *   PT_NOTE   notes, each: u32 namesz, u32 descsz, u32 type, name (padded to 4), desc (padded to 4)
 *     "CORE" NT_PRSTATUS (1), one per thread, struct elf_prstatus:
 *         +32  u32 pr_pid (the thread id)
 *         +112 pr_reg: x86-64 struct user_regs_struct, 27 u64; AArch64 struct user_pt_regs,
 *              34 u64 (the architecture's coreRegisters)
 *     "CORE" NT_FILE (absent from qemu-user's cores) (0x46494c45): u64 count, u64 page_size, count x (u64 start, u64 end,
 *         u64 file offset in pages), then count NUL-terminated paths
 *     "CORE" NT_AUXV (6): the auxiliary vector, (u64 type, u64 value) pairs up to AT_NULL (0);
 *         AT_PHDR (3) and AT_ENTRY (9) are the main executable's program headers and entry point
 *         as the kernel loaded it (they name its mapping, whatever the layout); AT_SYSINFO_EHDR
 *         (33) is the address of the vDSO's ELF header (the vDSO has no file, so NT_FILE does
 *         not list it; its image is in the core's memory)
 *   PT_LOAD   the process's memory: [p_vaddr, p_vaddr + p_filesz) from the file at p_offset
 *             (p_filesz < p_memsz when the dumper left pages out)
 *
 * A core can be larger than memory (a process with a 1 GiB thread stack dumps 2.6 GB): headers
 * and notes are read at open, the memory by positioned reads as a walk uses it (CoreMemory).
 *
 * GNU build ids (NT_GNU_BUILD_ID, type 3, name "GNU") of a mapped file are read from the core's
 * memory at the file's PT_NOTE address when the dumper kept that page.
 */

const NT_PRSTATUS = 1;
const NT_FILE = 0x46494c45;
const NT_AUXV = 6;
const AT_PHDR = 3;
const AT_ENTRY = 9;
const AT_SYSINFO_EHDR = 33;
/** Bounds on what is read whole: a core's notes, and the vDSO image (two pages on today's kernels). */
const MAX_NOTES_BYTES = 64 * 1024 * 1024;
const MAX_VDSO_BYTES = 1024 * 1024;
const PR_PID_OFFSET = 32;

export interface CoreThread {
  tid: number;
  /** pr_reg by the architecture's coreRegisters names (`rip`, `x30`). */
  registers: Record<string, bigint>;
}

export interface CoreMappedFile {
  start: number;
  end: number;
  fileOffset: number;
  path: string;
}

export class CoreFile {
  private constructor(
    /** The machine of the core (e_machine): whose registers the threads hold. */
    readonly architecture: Architecture,
    readonly threads: readonly CoreThread[],
    readonly files: readonly CoreMappedFile[],
    /** The dumped memory, read from the file by position as it is used. */
    readonly memory: CoreMemory,
    /** The auxiliary vector (NT_AUXV), type -> value; empty when the core has none. */
    readonly auxv: ReadonlyMap<number, number>,
    private readonly source: ByteSource,
  ) {}

  /** Opens a core file for positioned reads: headers and notes now, memory as a walk reads it. */
  static open(path: string): CoreFile {
    const source = new FileSource(path);
    try {
      return CoreFile.fromSource(source);
    } catch (e) {
      source.close();
      throw e;
    }
  }

  static parse(bytes: Uint8Array): CoreFile {
    return CoreFile.fromSource(bytesSource(bytes));
  }

  static fromSource(source: ByteSource): CoreFile {
    // Program headers only: gdb's cores also carry section headers, with addresses such as the
    // vsyscall page (0xffffffffff600000) that ElfFile rightly refuses for a program.
    const view = new ByteView(source.readAt(0, Math.min(64, source.sizeBytes), "ELF header"));
    view.need(0, 64, "ELF header");
    if (view.u32(0) !== 0x464c457f || view.u8(4) !== 2 || view.u8(5) !== 1)
      throw new MalformedInputError("ELF header", 0, "not a 64-bit little-endian ELF file", "an x86-64 or AArch64 core file");
    const type = view.u16(16);
    if (type !== ET_CORE) throw new MalformedInputError("ELF header e_type", 16, type, `${ET_CORE} (ET_CORE, a core file)`);
    // The registers are the machine's: a machine rootwalk does not know is refused, not misread.
    const architecture = architectureOfMachine(view.u16(E_MACHINE));
    const phoff = view.u64Number(32, "e_phoff");
    const phnum = view.u16(56);
    const headers = new ByteView(source.readAt(phoff, phnum * 56, "program headers"), phoff);
    const threads: CoreThread[] = [];
    const files: CoreMappedFile[] = [];
    const segments: CoreSegment[] = [];
    const auxv = new Map<number, number>();
    for (let i = 0; i < phnum; i++) {
      const at = i * 56;
      const ptype = headers.u32(at);
      const offset = headers.u64Number(at + 8, "p_offset");
      const vaddrHi = headers.u32(at + 20);
      const fileSize = headers.u64Number(at + 32, "p_filesz");
      if (offset + fileSize > source.sizeBytes) throw new TruncatedInputError(`segment ${i}`, offset, fileSize, source.sizeBytes - offset);
      if (ptype === PT_LOAD && fileSize > 0 && vaddrHi < 0x200000)
        segments.push({ vaddr: headers.u64Number(at + 16, "p_vaddr"), fileOffset: offset, fileSizeBytes: fileSize });
      if (ptype !== PT_NOTE) continue;
      if (fileSize > MAX_NOTES_BYTES)
        throw new MalformedInputError(`PT_NOTE segment ${i}`, offset, `${fileSize} bytes`, `at most ${MAX_NOTES_BYTES} bytes of notes`);
      for (const note of readNotes(source.readAt(offset, fileSize, `PT_NOTE segment ${i}`), offset)) {
        if (note.name !== "CORE") continue;
        if (note.type === NT_PRSTATUS) threads.push(readPrstatus(architecture, note.desc, note.descOffset));
        if (note.type === NT_FILE) files.push(...readNtFile(note.desc, note.descOffset));
        if (note.type === NT_AUXV) readAuxv(note.desc, auxv);
      }
    }
    return new CoreFile(architecture, threads, files, new CoreMemory(source, segments), auxv, source);
  }

  /** Closes the file; the memory can no longer be read. */
  close(): void {
    this.source.close();
  }

  /** Where the vDSO's ELF image starts (AT_SYSINFO_EHDR), when the core has an NT_AUXV note. */
  get vdsoAddress(): number | undefined {
    return this.auxv.get(AT_SYSINFO_EHDR);
  }

  /**
   * The path of the main executable: the NT_FILE mapping that holds the program headers the
   * kernel loaded it with (AT_PHDR) or its entry point (AT_ENTRY). Never the first mapping:
   * under a legacy layout (`ulimit -s unlimited`) libraries map below the program.
   */
  executablePath(): string | undefined {
    for (const type of [AT_PHDR, AT_ENTRY]) {
      const address = this.auxv.get(type);
      if (address === undefined || address === 0) continue;
      const file = this.files.find((f) => address >= f.start && address < f.end);
      if (file !== undefined) return file.path;
    }
    return undefined;
  }

  /** The dumped bytes [address, address + n), or undefined when the core does not hold them all. */
  read(address: number, n: number): Uint8Array | undefined {
    return this.memory.readBytes(address, n);
  }

  /**
   * The vDSO's image as the core holds it: from its ELF header to the end of the dumped segment
   * holding it (the vDSO is one small mapping), or undefined (no NT_AUXV, or not dumped).
   */
  vdsoImage(): { start: number; bytes: Uint8Array } | undefined {
    const start = this.vdsoAddress;
    if (start === undefined || start === 0) return undefined;
    const range = this.memory.ranges.find((r) => start >= r.base && start + 64 <= r.base + r.sizeBytes);
    if (range === undefined) return undefined;
    const bytes = this.read(start, Math.min(range.base + range.sizeBytes - start, MAX_VDSO_BYTES))!;
    return bytes[0] === 0x7f && bytes[1] === 0x45 && bytes[2] === 0x4c && bytes[3] === 0x46 ? { start, bytes } : undefined;
  }

  /** The GNU build id (hex) of the ELF image mapped at `start`, read from the core's memory. */
  buildIdAt(start: number): string | undefined {
    const header = this.read(start, 64);
    if (header === undefined || header[0] !== 0x7f || header[1] !== 0x45) return undefined;
    const view = new ByteView(header);
    const phoff = Number(view.u64Number(32, "e_phoff"));
    const phnum = view.u16(56);
    const table = this.read(start + phoff, phnum * 56);
    if (table === undefined) return undefined;
    const ph = new ByteView(table);
    const firstVaddr = Math.min(...[...Array(phnum).keys()].filter((i) => ph.u32(i * 56) === PT_LOAD).map((i) => Number(ph.u64Number(i * 56 + 16, "p_vaddr"))));
    for (let i = 0; i < phnum; i++) {
      if (ph.u32(i * 56) !== PT_NOTE) continue;
      const vaddr = Number(ph.u64Number(i * 56 + 16, "p_vaddr"));
      const size = Number(ph.u64Number(i * 56 + 32, "p_filesz"));
      const bytes = this.read(start - (Number.isFinite(firstVaddr) ? firstVaddr : 0) + vaddr, size);
      if (bytes === undefined) continue;
      const id = buildIdOfNotes(bytes);
      if (id !== undefined) return id;
    }
    return undefined;
  }
}

/** The auxiliary vector's entries into `out`: pairs of u64 (type, value) up to AT_NULL. */
function readAuxv(desc: Uint8Array, out: Map<number, number>): void {
  const view = new ByteView(desc);
  for (let at = 0; at + 16 <= desc.length; at += 16) {
    const t = view.u64NumberOrNaN(at);
    if (t === 0) return;
    const value = view.u64NumberOrNaN(at + 8);
    if (!Number.isNaN(t) && !Number.isNaN(value)) out.set(t, value);
  }
}

function readPrstatus(architecture: Architecture, desc: Uint8Array, offset: number): CoreThread {
  const { offsetBytes, names } = architecture.coreRegisters;
  if (desc.length < offsetBytes + names.length * 8) {
    throw new MalformedInputError(
      "NT_PRSTATUS",
      offset,
      `${desc.length} bytes`,
      `at least ${offsetBytes + names.length * 8} (${architecture.name} elf_prstatus)`,
    );
  }
  const view = new ByteView(desc);
  const registers: Record<string, bigint> = {};
  names.forEach((name, i) => {
    registers[name] = view.u64BigInt(offsetBytes + i * 8);
  });
  return { tid: view.u32(PR_PID_OFFSET), registers };
}

function readNtFile(desc: Uint8Array, offset: number): CoreMappedFile[] {
  const view = new ByteView(desc);
  const count = view.u64Number(0, "NT_FILE count");
  const pageSize = view.u64Number(8, "NT_FILE page size");
  let names = 16 + count * 24;
  if (names > desc.length)
    throw new MalformedInputError("NT_FILE", offset, `${count} entries`, `at most ${Math.floor((desc.length - 16) / 24)} in ${desc.length} bytes`);
  const out: CoreMappedFile[] = [];
  for (let i = 0; i < count; i++) {
    const end = desc.indexOf(0, names);
    if (end < 0) throw new MalformedInputError("NT_FILE path", offset + names, "no NUL", "a NUL-terminated path");
    const path = new TextDecoder().decode(desc.subarray(names, end));
    names = end + 1;
    const at = 16 + i * 24;
    out.push({
      start: view.u64Number(at, "NT_FILE start"),
      end: view.u64Number(at + 8, "NT_FILE end"),
      fileOffset: view.u64Number(at + 16, "NT_FILE offset") * pageSize,
      path,
    });
  }
  if (out.some((f) => f.end < f.start))
    throw new MalformedInputError("NT_FILE", offset, "an entry with end < start", `ranges (${out.map((f) => hex(f.start)).join(", ")})`);
  return out;
}
