/**
 * Builds the unwind test corpus from test/unwind/fixtures with the real toolchain (llc, llvm-mc,
 * gcc, g++) into the git-ignored .cache/unwind-test/, and reads the two reference dumps:
 * `llvm-dwarfdump --eh-frame` (instructions and the CFA rule table) and `readelf -wF` (GNU's
 * interpretation, used for the CFA where LLVM 14 is wrong after DW_CFA_restore_state).
 *
 * Artifacts are keyed by a hash of their command and inputs, and written via rename, so parallel
 * test files and reruns reuse them.
 */
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type EhFrame, parseEhFrame } from "../../../src/unwind/eh-frame.js";
import { R_X86_64_PC32, R_X86_64_PLT32, SHT_SYMTAB, elfSections, relaFor, relas, section, symbolValues, symbols } from "./elf-sections.js";

const HERE = dirname(fileURLToPath(import.meta.url));
export const FIXTURES = resolve(HERE, "../fixtures");
export const CACHE = resolve(HERE, "../../../.cache/unwind-test");

interface Build {
  name: string;
  inputs: string[];
  /** argv with `$OUT` for the output path. */
  command: (out: string) => [string, ...string[]];
}

function fixture(name: string): string {
  return join(FIXTURES, name);
}

function build({ name, inputs, command }: Build): string {
  mkdirSync(CACHE, { recursive: true });
  const hash = createHash("sha256");
  hash.update(JSON.stringify(command("$OUT")));
  for (const input of inputs) hash.update(readFileSync(input));
  const out = join(CACHE, `${hash.digest("hex").slice(0, 12)}-${name}`);
  if (!existsSync(out)) {
    const tmp = `${out}.${process.pid}.tmp`;
    const [tool, ...args] = command(tmp);
    execFileSync(tool, args, { stdio: ["ignore", "ignore", "pipe"] });
    renameSync(tmp, out);
  }
  return out;
}

const LLVM_IR = fixture("llvm-frames.ll");
const C_FRAMES = fixture("gcc-frames.c");
const CXX = fixture("gcc-exceptions.cc");
const DRAP = fixture("gcc-drap.c");
const ASM = fixture("all-rules.s");

export const corpus = {
  llvmObject: () => build({ name: "llvm-frames.o", inputs: [LLVM_IR], command: (o) => ["llc", "-O2", "-filetype=obj", LLVM_IR, "-o", o] }),
  gccObject: () => build({ name: "gcc-frames.o", inputs: [C_FRAMES], command: (o) => ["gcc", "-O2", "-c", C_FRAMES, "-o", o] }),
  gccFramePointerObject: () =>
    build({ name: "gcc-frames-fp.o", inputs: [C_FRAMES], command: (o) => ["gcc", "-O2", "-fno-omit-frame-pointer", "-c", C_FRAMES, "-o", o] }),
  cxxObject: () => build({ name: "gcc-exceptions.o", inputs: [CXX], command: (o) => ["g++", "-O2", "-c", CXX, "-o", o] }),
  drapObject: () => build({ name: "gcc-drap.o", inputs: [DRAP], command: (o) => ["gcc", "-O2", "-c", DRAP, "-o", o] }),
  asmObject: () => build({ name: "all-rules.o", inputs: [ASM], command: (o) => ["llvm-mc", "-filetype=obj", "-triple=x86_64-pc-linux-gnu", ASM, "-o", o] }),
  sharedLibrary: () => {
    const llvmPic = build({
      name: "llvm-frames-pic.o",
      inputs: [LLVM_IR],
      command: (o) => ["llc", "-O2", "-filetype=obj", "-relocation-model=pic", LLVM_IR, "-o", o],
    });
    return build({
      name: "libframes.so",
      inputs: [C_FRAMES, CXX, llvmPic],
      command: (o) => ["g++", "-O2", "-fPIC", "-shared", "-x", "c", C_FRAMES, "-x", "c++", CXX, "-x", "none", llvmPic, "-o", o],
    });
  },
};

export type CorpusName = keyof typeof corpus;

export interface LoadedEhFrame {
  path: string;
  file: Uint8Array;
  ehFrameBytes: Uint8Array;
  sectionAddress: number;
  relocatable: boolean;
  /** Section offset of each relocated pc_begin field -> S + A (the function's offset in its section). */
  pcBeginRelocations: Map<number, number>;
  ehFrame: EhFrame;
}

/**
 * Reads `.eh_frame` of an ELF file and parses it. For a relocatable object, pc_begin comes from
 * the R_X86_64_PC32 entries of `.rela.eh_frame`: the linker would store S + A - P there, so the
 * function's offset in its own text section is S + A (S = the symbol's value, 0 for the section
 * symbols compilers use).
 */
export function loadEhFrame(path: string): LoadedEhFrame {
  const file = new Uint8Array(readFileSync(path));
  const sections = elfSections(file);
  const ehFrameSection = section(sections, ".eh_frame");
  const relocatable = Buffer.from(file.buffer, file.byteOffset).readUInt16LE(0x10) === 1; // ET_REL
  const pcBeginRelocations = new Map<number, number>();
  if (relocatable) {
    const rela = relaFor(sections, ehFrameSection);
    if (rela !== undefined) {
      const symtab = sections[rela.link]!;
      if (symtab.type !== SHT_SYMTAB) throw new Error("rela.eh_frame does not link a symbol table");
      const values = symbolValues(symtab);
      for (const r of relas(rela)) {
        if (r.type === R_X86_64_PC32) pcBeginRelocations.set(r.offset, values[r.symbol]! + r.addend);
      }
    }
  }
  const ehFrame = parseEhFrame(ehFrameSection.bytes, {
    sectionAddress: ehFrameSection.address,
    ...(relocatable && {
      resolvePcBegin: (fieldOffset: number) => {
        const value = pcBeginRelocations.get(fieldOffset);
        if (value === undefined) throw new Error(`no R_X86_64_PC32 at .eh_frame+${fieldOffset.toString(16)}`);
        return value;
      },
    }),
  });
  return { path, file, ehFrameBytes: ehFrameSection.bytes, sectionAddress: ehFrameSection.address, relocatable, pcBeginRelocations, ehFrame };
}

/** Where a function starts in `.text` of a relocatable object, and the return addresses of its calls to `callee`. */
export function callSites(path: string, functionName: string, callee: string): { functionStart: number; returnAddresses: number[] } {
  const file = new Uint8Array(readFileSync(path));
  const sections = elfSections(file);
  const symtab = sections.find((s) => s.type === SHT_SYMTAB);
  if (symtab === undefined) throw new Error(`${path}: no symbol table`);
  const syms = symbols(sections, symtab);
  const fn = syms.find((s) => s.name === functionName);
  if (fn === undefined) throw new Error(`${path}: no symbol ${functionName}`);
  const text = sections[fn.sectionIndex]!;
  const rela = relaFor(sections, text);
  const calleeIndex = syms.findIndex((s) => s.name === callee);
  const returnAddresses = (rela === undefined ? [] : relas(rela))
    // A call's rel32 operand is its last 4 bytes, so the return address is r_offset + 4.
    .filter((r) => r.type === R_X86_64_PLT32 && r.symbol === calleeIndex && r.offset >= fn.value && r.offset < fn.value + fn.size)
    .map((r) => r.offset + 4);
  return { functionStart: fn.value, returnAddresses };
}

// ---------------------------------------------------------------------------------------------
// llvm-dwarfdump --eh-frame

export interface DumpedCie {
  offset: number;
  version: number;
  augmentation: string;
  codeAlignmentFactor: number;
  dataAlignmentFactor: number;
  returnAddressRegister: number;
  personalityAddress: number | undefined;
}

export interface DumpedRow {
  address: number;
  /** The row as printed, after the address: `CFA=RSP+16: RBX=[CFA-16], RIP=[CFA-8]`. */
  text: string;
}

export interface DumpedFde {
  offset: number;
  cieOffset: number;
  pcBegin: number;
  pcEnd: number;
  lsdaAddress: number | undefined;
  /** Instruction lines, e.g. `DW_CFA_def_cfa_offset: +16`. */
  instructions: string[];
  rows: DumpedRow[];
}

export interface Dwarfdump {
  cies: DumpedCie[];
  fdes: DumpedFde[];
}

const RECORD_LINE = /^([0-9a-f]{8}) ([0-9a-f]{8,16}) ([0-9a-f]{8,16}) (CIE|FDE)(?: cie=([0-9a-f]+) pc=([0-9a-f]+)\.\.\.([0-9a-f]+))?$/;
const ROW_LINE = /^ {2}0x([0-9a-f]+): (CFA=.*)$/;

export function dwarfdump(path: string): Dwarfdump {
  const text = execFileSync("llvm-dwarfdump", ["--eh-frame", path], { encoding: "utf8", maxBuffer: 64 << 20 });
  const cies: DumpedCie[] = [];
  const fdes: DumpedFde[] = [];
  let cie: DumpedCie | undefined;
  let fde: DumpedFde | undefined;
  for (const line of text.split("\n")) {
    const record = RECORD_LINE.exec(line);
    if (record !== null) {
      cie = fde = undefined;
      const offset = parseInt(record[1]!, 16);
      if (record[4] === "CIE") {
        cie = { offset, version: 0, augmentation: "", codeAlignmentFactor: 0, dataAlignmentFactor: 0, returnAddressRegister: 0, personalityAddress: undefined };
        cies.push(cie);
      } else {
        fde = {
          offset,
          cieOffset: parseInt(record[5]!, 16),
          pcBegin: parseInt(record[6]!, 16),
          pcEnd: parseInt(record[7]!, 16),
          lsdaAddress: undefined,
          instructions: [],
          rows: [],
        };
        fdes.push(fde);
      }
      continue;
    }
    const field = /^ {2}([A-Za-z ]+):\s+(.*)$/.exec(line);
    if (cie !== undefined && field !== null) {
      const [, name, value] = field as unknown as [string, string, string];
      if (name === "Version") cie.version = Number(value);
      else if (name === "Augmentation") cie.augmentation = JSON.parse(value) as string;
      else if (name === "Code alignment factor") cie.codeAlignmentFactor = Number(value);
      else if (name === "Data alignment factor") cie.dataAlignmentFactor = Number(value);
      else if (name === "Return address column") cie.returnAddressRegister = Number(value);
      else if (name === "Personality Address") cie.personalityAddress = parseInt(value, 16);
      continue;
    }
    if (fde === undefined) continue;
    const row = ROW_LINE.exec(line);
    if (row !== null) {
      fde.rows.push({ address: parseInt(row[1]!, 16), text: row[2]! });
    } else if (line.startsWith("  DW_CFA_")) {
      fde.instructions.push(line.trim());
    } else if (line.startsWith("  LSDA Address: ")) {
      fde.lsdaAddress = parseInt(line.slice("  LSDA Address: ".length), 16);
    }
  }
  return { cies, fdes };
}

/** The dumped row covering `address` (the last one starting at or before it). */
export function dumpedRowAt(fde: DumpedFde, address: number): DumpedRow | undefined {
  let found: DumpedRow | undefined;
  for (const row of fde.rows) if (row.address <= address) found = row;
  return found;
}

// ---------------------------------------------------------------------------------------------
// readelf -wF (GNU binutils): one table per FDE, `LOC CFA <register columns...>`.

export interface ReadelfFde {
  offset: number;
  /** Row start address -> CFA as printed (`rsp+8`, `rbp+16`, `exp`). */
  cfaRows: { address: number; cfa: string }[];
}

export function readelfFrames(path: string): Map<number, ReadelfFde> {
  const text = execFileSync("readelf", ["-wF", path], { encoding: "utf8", maxBuffer: 64 << 20 });
  const fdes = new Map<number, ReadelfFde>();
  let current: ReadelfFde | undefined;
  for (const line of text.split("\n")) {
    const header = /^([0-9a-f]{8}) [0-9a-f]+ [0-9a-f]+ (FDE|CIE)/.exec(line);
    if (header !== null) {
      current = header[2] === "FDE" ? { offset: parseInt(header[1]!, 16), cfaRows: [] } : undefined;
      if (current !== undefined) fdes.set(current.offset, current);
      continue;
    }
    const row = /^([0-9a-f]{16}) (\S+)/.exec(line);
    if (row !== null && current !== undefined) current.cfaRows.push({ address: parseInt(row[1]!, 16), cfa: row[2]! });
  }
  return fdes;
}

export function readelfCfaAt(fde: ReadelfFde, address: number): string | undefined {
  let found: string | undefined;
  for (const row of fde.cfaRows) if (row.address <= address) found = row.cfa;
  return found;
}
