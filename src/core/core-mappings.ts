import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { architectureOfMachine } from "../arch/elf-architecture.js";
import { ByteView } from "../bytes/byte-view.js";
import { InvalidArgumentError, RootwalkError } from "../errors.js";
import type { CoreFile, CoreMappedFile } from "./core-file.js";
import { PT_DYNAMIC, PT_INTERP, PT_LOAD } from "../elf/elf-constants.js";
import { ElfFile } from "../elf/elf-file.js";

/*
 * The files mapped in a process whose core has no NT_FILE note (qemu-user writes only
 * NT_PRSTATUS, NT_PRPSINFO and NT_AUXV), rebuilt from the auxiliary vector and the core's memory:
 *
 *   the program   its file is given (EXECUTABLE); its load bias is AT_ENTRY - e_entry (0 for a
 *                 program that is not position-independent)
 *   libraries     the dynamic linker's list in memory: the program's PT_DYNAMIC (at bias +
 *                 p_vaddr) has a DT_DEBUG entry, which the linker sets to &_r_debug (LP64):
 *                   struct r_debug   +0 int r_version, +8 struct link_map *r_map
 *                   struct link_map  +0 l_addr (the load bias), +8 char *l_name, +16 l_ld,
 *                                    +24 l_next
 *                 the first entry is the program (empty name), the linker's own names its
 *                 PT_INTERP path; a statically linked program has no list (no DT_DEBUG)
 *
 * Each file becomes one mapping per PT_LOAD segment at bias + p_vaddr, from which the module map
 * computes the same bias back (src/unwind/module-map.ts). A library's path is looked for under
 * `sysroot` first (qemu-user's `-L`, gdb's `set sysroot`), then as it is; a file for another
 * machine (the host's libc at the same path) or one that cannot be read is left out: a frame in
 * it then ends the walk naming its address, as a frame in any unmapped code does.
 */

const AT_ENTRY = 9;
const DT_NULL = 0;
const DT_DEBUG = 21;
const R_MAP_OFFSET = 8;
const L_ADDR_OFFSET = 0;
const L_NAME_OFFSET = 8;
const L_NEXT_OFFSET = 24;
const DYN_ENTRY_BYTES = 16;
/** Bounds on what is followed in memory: dynamic entries, list entries, name bytes. */
const MAX_DYN_ENTRIES = 4096;
const MAX_LINK_MAP_ENTRIES = 4096;
const MAX_NAME_BYTES = 4096;

export interface CoreMappingOptions {
  /**
   * Where library paths are looked for first (qemu-user's -L directory). Without one, the
   * sysroot that holds the program's interpreter is used when there is one (interpreterSysroot).
   */
  sysroot?: string;
  readFile?: (path: string) => Uint8Array;
}

/** The mappings of a core without NT_FILE, where its libraries were looked for, and which were found nowhere. */
export interface CoreLibraries {
  mappings: CoreMappedFile[];
  /** The sysroot used: the one given, the interpreter's, or undefined (paths read as they are). */
  sysroot: string | undefined;
  /** Libraries of the dynamic linker's list that were found nowhere (their frames end a walk). */
  missing: string[];
}

/** The conventional sysroot of a machine's cross libraries (Debian's, and qemu-user's -L): /usr/aarch64-linux-gnu. */
function crossSysroot(core: CoreFile): string {
  return `/usr/${core.architecture.linuxTriple}`;
}

/**
 * The sysroot a qemu-user program ran with, found from its interpreter (PT_INTERP, e.g.
 * /lib/ld-linux-aarch64.so.1): undefined when the interpreter at its own path is of the core's
 * machine (a native core), else the cross sysroot when it holds that interpreter (of the core's
 * machine), else undefined (none installed: the libraries stay unfound and the walk says so).
 */
export function interpreterSysroot(core: CoreFile, program: ElfFile, readFile: (path: string) => Uint8Array = readMappedFile): string | undefined {
  const interp = program.programHeaders.find((p) => p.type === PT_INTERP);
  if (interp === undefined) return undefined; // statically linked: no libraries
  const bytes = program.bytes.subarray(interp.offset, interp.offset + interp.fileSize);
  const end = bytes.indexOf(0);
  const path = new TextDecoder().decode(end < 0 ? bytes : bytes.subarray(0, end));
  if (!path.startsWith("/") || libraryFile(path, core, undefined, readFile) !== undefined) return undefined;
  const sysroot = crossSysroot(core);
  return libraryFile(join(sysroot, path), core, undefined, readFile) === undefined ? undefined : sysroot;
}

/**
 * The bytes of a file a core names, a regular file's only: a core can name a device (a program's
 * private mapping of /dev/zero is in NT_FILE as "/dev/zero"), whose read never ends. Anything else
 * is an InvalidArgumentError, which every reader of mapped files takes as an unreadable file.
 */
export function readMappedFile(path: string): Uint8Array {
  if (!statSync(path).isFile()) throw new InvalidArgumentError(path, "not a regular file", "the file the core mapped");
  return readFileSync(path);
}

/** The program's and its libraries' mappings in a core without NT_FILE (see above), with the sysroot used and the libraries found nowhere. */
export function coreLibraries(core: CoreFile, executable: string, options: CoreMappingOptions = {}): CoreLibraries {
  const readFile = options.readFile ?? readMappedFile;
  const program = ElfFile.parse(readFile(executable));
  checkProgramMachine(core, executable, program.machine);
  const sysroot = options.sysroot ?? interpreterSysroot(core, program, readFile);
  const entry = core.auxv.get(AT_ENTRY);
  if (entry === undefined)
    throw new InvalidArgumentError(
      "core",
      "no NT_AUXV entry AT_ENTRY",
      "the auxiliary vector that places the program (a core without NT_FILE has nothing else)",
    );
  const programBias = entry - program.entry;
  const mappings = segmentMappings(program, programBias, executable);
  const missing: string[] = [];
  for (const library of linkMapEntries(core, program, programBias)) {
    const found = libraryFile(library.name, core, sysroot, readFile);
    if (found !== undefined) mappings.push(...segmentMappings(found.elf, library.bias, found.path));
    else missing.push(library.name);
  }
  return { mappings, sysroot, missing };
}

/** Refuses EXECUTABLE unless it is a program for the core's machine (e_machine `machine`). */
export function checkProgramMachine(core: CoreFile, executable: string, machine: number): void {
  if (architectureOfMachine(machine) !== core.architecture)
    throw new InvalidArgumentError(
      executable,
      `an ${architectureOfMachine(machine).name} program`,
      `the ${core.architecture.name} program the core was written by`,
    );
}

function segmentMappings(elf: ElfFile, bias: number, path: string): CoreMappedFile[] {
  return elf.programHeaders
    .filter((p) => p.type === PT_LOAD && p.memSize > 0)
    .map((p) => ({ start: bias + p.vaddr, end: bias + p.vaddr + p.memSize, fileOffset: p.offset, path }));
}

/**
 * The NT_FILE mappings of a kernel core with each path looked for under `sysroot` first: a core
 * written on another machine (an AArch64 board's, read on an x86-64 one) names that machine's
 * files, which a sysroot holds at the same paths (gdb's `set sysroot`). A path under which the
 * sysroot holds no file of the core's machine stays as it is (the build id check or the walk then
 * says what was found there). `keep` names the path left alone (the program, when EXECUTABLE
 * replaces it).
 */
export function mappingsUnderSysroot(
  core: CoreFile,
  sysroot: string,
  keep: string | undefined,
  readFile: (path: string) => Uint8Array = readMappedFile,
): CoreMappedFile[] {
  const found = new Map<string, string>();
  for (const path of new Set(core.files.map((f) => f.path))) if (path !== keep) found.set(path, libraryFile(path, core, sysroot, readFile)?.path ?? path);
  return core.files.map((f) => ({ ...f, path: found.get(f.path) ?? f.path }));
}

/** The file of a library named in the list: under the sysroot first, of the core's machine. */
function libraryFile(
  name: string,
  core: CoreFile,
  sysroot: string | undefined,
  readFile: (path: string) => Uint8Array,
): { path: string; elf: ElfFile } | undefined {
  for (const path of sysroot === undefined ? [name] : [join(sysroot, name), name]) {
    try {
      const elf = ElfFile.parse(readFile(path));
      if (architectureOfMachine(elf.machine) === core.architecture) return { path, elf };
    } catch (e) {
      if (e instanceof RootwalkError || (e as NodeJS.ErrnoException).code !== undefined) continue;
      throw e;
    }
  }
  return undefined;
}

/** (name, load bias) of every named entry of the dynamic linker's list, or none (static program, list not in the core). */
function linkMapEntries(core: CoreFile, program: ElfFile, programBias: number): { name: string; bias: number }[] {
  const dynamic = program.programHeaders.find((p) => p.type === PT_DYNAMIC);
  if (dynamic === undefined) return [];
  let rDebug = 0;
  for (let i = 0; i < MAX_DYN_ENTRIES; i++) {
    const at = programBias + dynamic.vaddr + i * DYN_ENTRY_BYTES;
    const tag = word(core, at);
    if (tag === undefined || tag === DT_NULL) break;
    if (tag === DT_DEBUG) rDebug = word(core, at + 8) ?? 0;
  }
  if (rDebug === 0) return [];
  const entries: { name: string; bias: number }[] = [];
  const seen = new Set<number>();
  let entry = word(core, rDebug + R_MAP_OFFSET) ?? 0;
  while (entry !== 0 && !seen.has(entry) && seen.size < MAX_LINK_MAP_ENTRIES) {
    seen.add(entry);
    const bias = word(core, entry + L_ADDR_OFFSET);
    const nameAt = word(core, entry + L_NAME_OFFSET);
    if (bias === undefined || nameAt === undefined) break;
    const name = nameAt === 0 ? "" : cString(core, nameAt);
    if (name.startsWith("/")) entries.push({ name, bias });
    entry = word(core, entry + L_NEXT_OFFSET) ?? 0;
  }
  return entries;
}

function word(core: CoreFile, address: number): number | undefined {
  const bytes = core.read(address, 8);
  return bytes === undefined ? undefined : new ByteView(bytes).u64NumberOrNaN(0);
}

/** A NUL-terminated string in the core's memory ("" when it is not there). */
function cString(core: CoreFile, address: number): string {
  const bytes: number[] = [];
  for (let at = address; bytes.length < MAX_NAME_BYTES; at++) {
    const b = core.read(at, 1)?.[0];
    if (b === undefined || b === 0) return b === undefined ? "" : new TextDecoder().decode(new Uint8Array(bytes));
    bytes.push(b);
  }
  return "";
}
