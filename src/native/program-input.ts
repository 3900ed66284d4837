import { closeSync, openSync, readFileSync, readSync } from "node:fs";
import { hostArchitecture } from "../arch/host-architecture.js";
import { architectureOfMachine } from "../arch/elf-architecture.js";
import { machineName } from "../elf/elf-constants.js";
import { ElfFile } from "../elf/elf-file.js";
import { InvalidArgumentError } from "../errors.js";

/**
 * What `rootwalk run` accepts as a program file:
 *   - "source": LLVM IR (`.ll`), compiled by rootwalk (statepoint or --plimmix);
 *   - "object": an ELF relocatable object (ET_REL, `.o`) the user built, linked as is;
 *   - "shared": an ELF shared library (ET_DYN, `.so`) the user built and linked, loaded
 *     as a dependency of the program library (its gc_* references resolve to the runtime).
 * Both for the machine rootwalk runs on (src/arch/host-architecture.ts: x86-64 or AArch64).
 * Objects and libraries are recognised by their ELF header, not by their name alone: a file
 * named `.o` that is not a relocatable object for this machine is refused with a one-line message
 * that names it and says what it is.
 */
export type ProgramInputKind = "source" | "object" | "shared";

const ELF_MAGIC = [0x7f, 0x45, 0x4c, 0x46] as const;
const ELFCLASS64 = 2;
const ELFDATA2LSB = 1;
const ET_REL = 1;
const ET_DYN = 3;
const HEADER_BYTES = 20;

const HOST = hostArchitecture();
export const PROGRAM_INPUTS = `PROGRAM.ll, an ${HOST.name} ELF object (.o) or shared library (.so)`;

export function programInputKind(path: string): ProgramInputKind {
  const head = readHead(path);
  const isElf = head.length >= 4 && ELF_MAGIC.every((b, i) => head[i] === b);
  if (!isElf) {
    if (/\.(o|so(\.\d+)*)$/.test(path)) throw new InvalidArgumentError("program", path, `${PROGRAM_INPUTS}; this is not an ELF file`);
    return "source";
  }
  if (head.length < HEADER_BYTES) throw new InvalidArgumentError("program", path, `${PROGRAM_INPUTS}; this ELF header is truncated`);
  if (head[4] !== ELFCLASS64 || head[5] !== ELFDATA2LSB)
    throw new InvalidArgumentError("program", path, `${PROGRAM_INPUTS}; this is not a 64-bit little-endian ELF file`);
  const type = head[16]! | (head[17]! << 8);
  const machine = head[18]! | (head[19]! << 8);
  if (!isForHost(machine)) throw new InvalidArgumentError("program", path, `${PROGRAM_INPUTS}; this ELF file is for ${machineName(machine)}, not ${HOST.name}`);
  if (type === ET_REL) return "object";
  if (type === ET_DYN) {
    // A position-independent executable is ET_DYN too; it has a program interpreter.
    if (ElfFile.parse(readFileSync(path)).section(".interp") !== undefined) {
      throw new InvalidArgumentError("program", path, `${PROGRAM_INPUTS}; this is an executable (it has .interp): link the program with -shared`);
    }
    return "shared";
  }
  throw new InvalidArgumentError("program", path, `${PROGRAM_INPUTS}; this ELF file has type ${type} (an executable? link it with -shared)`);
}

function isForHost(machine: number): boolean {
  try {
    return architectureOfMachine(machine) === HOST;
  } catch {
    return false; // a machine rootwalk has no description for
  }
}

function readHead(path: string): Uint8Array {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new InvalidArgumentError("program", path, `an existing, readable file (${code === "ENOENT" ? "no such file" : (code ?? "unreadable")})`);
  }
  try {
    const head = new Uint8Array(HEADER_BYTES);
    const n = readSync(fd, head, 0, HEADER_BYTES, 0);
    return head.subarray(0, n);
  } catch (e) {
    throw new InvalidArgumentError("program", path, `a readable file (${(e as NodeJS.ErrnoException).code ?? "read failed"})`);
  } finally {
    closeSync(fd);
  }
}
