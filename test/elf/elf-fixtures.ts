/**
 * Real ELF files for the ELF tests, built at test time by gcc / llc from the sources below and
 * cached under `.cache/elf-test/<hash of sources and commands>/` (git-ignored). Test files run
 * in parallel forks, so a build happens in a private temporary directory that is then renamed
 * into place; whoever renames first wins and the others use that result.
 *
 * Reference facts come from binutils, parsed here: `readelf -SW` (sections), `readelf -sW`
 * (symbols), `readelf -rW` (relocations) and `nm` (addresses).
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** An object with static and global functions and tables of function pointers. */
const OBJECT_C = `
extern int ext_fn(int);
int global_f(int x) { return x + 1; }
int global_g(int x) { return x * 2; }
static int static_h(int x) { return x - 3; }
static int static_i(int x) { return x ^ 5; }
int data_var = 7;
/* A weak alias of a global function: symbolAt prefers the global name. */
int weak_g(int) __attribute__((weak, alias("global_g")));
/* fn_ptrs[i] points to FN_PTRS_TARGETS[i] (see below). */
__attribute__((section("fn_ptrs"), used)) void *fn_table[] = {
  (void *)global_f, (void *)global_g, (void *)static_h, (void *)static_i,
  (void *)((char *)global_f + 4), (void *)ext_fn, (void *)&data_var,
};
void *data_table[] = { (void *)static_i, (void *)global_g };
/* A 32-bit absolute relocation (R_X86_64_32) next to a 64-bit one: not supported. */
__asm__(".section narrow_ptrs,\\"a\\"\\n .long global_f\\n .long 0\\n .quad global_g\\n .text\\n");
`;

/** What each 8-byte field of OBJECT_C's fn_ptrs names, and the addend added to it. */
export const FN_PTRS_TARGETS = [
  { name: "global_f", addend: 0 },
  { name: "global_g", addend: 0 },
  { name: "static_h", addend: 0 },
  { name: "static_i", addend: 0 },
  { name: "global_f", addend: 4 },
  { name: "ext_fn", addend: 0 },
  { name: "data_var", addend: 0 },
] as const;

/** First object of the shared library: exported, hidden and static functions referenced from data. */
const LIB_A_C = `
extern int b_fn(int);
extern int b_hidden(int) __attribute__((visibility("hidden")));
extern int missing_fn(int);
int exported_fn(int x) { return x + 1; }
__attribute__((visibility("hidden"))) int hidden_fn(int x) { return x * 3; }
static int local_fn(int x) { return x - 7; }
__attribute__((section("fn_ptrs"), used)) void *fn_table[] = {
  (void *)exported_fn, (void *)hidden_fn, (void *)local_fn, (void *)b_fn, (void *)b_hidden,
  (void *)((char *)exported_fn + 2),
};
/* A pointer to a function no object defines: a dynamic R_X86_64_64 against an undefined symbol. */
__attribute__((section("ext_ptrs"), used)) void *ext_table[] = { (void *)missing_fn };
/* Takes exported_fn's address through the GOT: R_X86_64_GLOB_DAT in .got. */
void *get_exported(void) { return (void *)exported_fn; }
`;

const LIB_B_C = `
int b_fn(int x) { return x << 1; }
__attribute__((visibility("hidden"))) int b_hidden(int x) { return x >> 1; }
`;

/** What each 8-byte field of the library's fn_ptrs names, how it is relocated, and its addend. */
export const LIB_FN_PTRS_TARGETS = [
  { name: "exported_fn", kind: "symbol", addend: 0 },
  { name: "hidden_fn", kind: "relative", addend: 0 },
  { name: "local_fn", kind: "relative", addend: 0 },
  { name: "b_fn", kind: "symbol", addend: 0 },
  { name: "b_hidden", kind: "relative", addend: 0 },
  { name: "exported_fn", kind: "symbol", addend: 2 },
] as const;

/** Two functions with stack maps, one of them internal (`.text`+addend in the .o). */
const STACKMAPS_LL = `
declare void @llvm.experimental.stackmap(i64, i32, ...)
define void @pub_fn(i64 %x) {
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 1, i32 0, i64 %x)
  ret void
}
define internal void @internal_fn(i64 %x) {
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 2, i32 0, i64 %x)
  ret void
}
define void @caller(i64 %x) {
  call void @internal_fn(i64 %x)
  ret void
}
`;

/** Function Address fields of STACKMAPS_LL's blob: 16 + 24 * i, in definition order. */
export const STACKMAP_FUNCTIONS = [
  { offset: 16, name: "pub_fn" },
  { offset: 40, name: "internal_fn" },
] as const;

const EXE_C = `
int exe_f1(int x) { return x + 1; }
static int exe_f2(int x) { return x + 2; }
__attribute__((section("fn_ptrs"), used)) void *fn_table[] = { (void *)exe_f1, (void *)exe_f2 };
int main(void) { return 0; }
`;

const SOURCES: Record<string, string> = {
  "object.c": OBJECT_C,
  "lib-a.c": LIB_A_C,
  "lib-b.c": LIB_B_C,
  "stackmaps.ll": STACKMAPS_LL,
  "exe.c": EXE_C,
};

/** Each step: the tool and its arguments, run in the build directory. */
const STEPS: readonly (readonly string[])[] = [
  ["gcc", "-O1", "-c", "object.c", "-o", "object.o"],
  ["gcc", "-O1", "-ffunction-sections", "-c", "object.c", "-o", "object-fs.o"],
  ["gcc", "-O1", "-fPIC", "-c", "lib-a.c", "-o", "lib-a.o"],
  ["gcc", "-O1", "-fPIC", "-c", "lib-b.c", "-o", "lib-b.o"],
  ["gcc", "-shared", "-nostdlib", "lib-a.o", "lib-b.o", "-o", "lib.so"],
  ["gcc", "-shared", "-nostdlib", "-Wl,-z,pack-relative-relocs", "lib-a.o", "lib-b.o", "-o", "lib-relr.so"],
  ["llc", "-O0", "-filetype=obj", "-relocation-model=pic", "stackmaps.ll", "-o", "stackmaps.o"],
  ["llc", "-O0", "-mtriple=aarch64-linux-gnu", "-filetype=obj", "stackmaps.ll", "-o", "stackmaps-aarch64.o"],
  ["gcc", "-shared", "-nostdlib", "stackmaps.o", "-o", "stackmaps.so"],
  ["gcc", "-O1", "-no-pie", "exe.c", "-o", "exe"],
];

export interface Fixtures {
  dir: string;
  /** Absolute path of a built file ("object.o", "lib.so", ...). */
  path(name: string): string;
  bytes(name: string): Uint8Array;
}

function toolAvailable(tool: string): boolean {
  try {
    execFileSync(tool, ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** True when gcc, llc, readelf and nm are installed (the tests are skipped otherwise). */
export const HAVE_TOOLS = ["gcc", "llc", "readelf", "nm"].every(toolAvailable);

let cached: Fixtures | undefined;

export function fixtures(): Fixtures {
  if (cached !== undefined) return cached;
  const hash = createHash("sha256").update(JSON.stringify({ SOURCES, STEPS })).digest("hex").slice(0, 16);
  const root = resolve(".cache/elf-test");
  const dir = join(root, hash);
  if (!existsSync(join(dir, "done"))) {
    mkdirSync(root, { recursive: true });
    const tmp = mkdtempSync(join(root, `build-${hash}-`));
    try {
      for (const [name, text] of Object.entries(SOURCES)) writeFileSync(join(tmp, name), text);
      for (const [tool, ...args] of STEPS) execFileSync(tool!, args, { cwd: tmp, stdio: ["ignore", "ignore", "pipe"] });
      writeFileSync(join(tmp, "done"), "");
    } catch (err) {
      rmSync(tmp, { recursive: true, force: true });
      throw err;
    }
    try {
      renameSync(tmp, dir);
    } catch {
      rmSync(tmp, { recursive: true, force: true }); // another fork finished first
    }
  }
  const files = new Map<string, Uint8Array>();
  cached = {
    dir,
    path: (name) => join(dir, name),
    bytes(name) {
      let bytes = files.get(name);
      if (bytes === undefined) {
        bytes = new Uint8Array(readFileSync(join(dir, name)));
        files.set(name, bytes);
      }
      return bytes;
    },
  };
  return cached;
}

function run(tool: string, args: string[]): string {
  return execFileSync(tool, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

export interface ReadelfSection {
  index: number;
  name: string;
  type: string;
  addr: number;
  offset: number;
  size: number;
  entsize: number;
  flags: string;
  link: number;
  info: number;
  align: number;
}

/** `readelf -SW`. */
export function readelfSections(path: string): ReadelfSection[] {
  const rows: ReadelfSection[] = [];
  const re = /^\s*\[\s*(\d+)\]\s+(\S*)\s+(\S+)\s+([0-9a-f]{16})\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([A-Za-z]*)\s+(\d+)\s+(\d+)\s+(\d+)$/;
  for (const line of run("readelf", ["-SW", path]).split("\n")) {
    const m = re.exec(line);
    if (m === null) continue;
    rows.push({
      index: Number(m[1]),
      name: m[2]!,
      type: m[3]!,
      addr: parseInt(m[4]!, 16),
      offset: parseInt(m[5]!, 16),
      size: parseInt(m[6]!, 16),
      entsize: parseInt(m[7]!, 16),
      flags: m[8]!,
      link: Number(m[9]),
      info: Number(m[10]),
      align: Number(m[11]),
    });
  }
  return rows;
}

export interface ReadelfSymbol {
  index: number;
  value: number;
  size: number;
  type: string;
  bind: string;
  vis: string;
  ndx: string;
  name: string;
}

/** `readelf -sW`, the rows of one table (".symtab" or ".dynsym"). */
export function readelfSymbols(path: string, table: ".symtab" | ".dynsym"): ReadelfSymbol[] {
  const rows: ReadelfSymbol[] = [];
  let inTable = false;
  const re = /^\s*(\d+):\s+([0-9a-f]{16})\s+(0x[0-9a-f]+|\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s?(.*)$/;
  for (const line of run("readelf", ["-sW", path]).split("\n")) {
    const header = /^Symbol table '([^']+)'/.exec(line);
    if (header !== null) {
      inTable = header[1] === table;
      continue;
    }
    const m = inTable ? re.exec(line) : null;
    if (m === null) continue;
    rows.push({
      index: Number(m[1]),
      value: parseInt(m[2]!, 16),
      size: Number(m[3]),
      type: m[4]!,
      bind: m[5]!,
      vis: m[6]!,
      ndx: m[7]!,
      name: m[8]!,
    });
  }
  return rows;
}

export interface ReadelfRelocation {
  offset: number;
  type: string;
  typeNumber: number;
  symbolIndex: number;
  symbolValue: number | undefined;
  /** readelf prints a section symbol by its section's name; versions (`@GLIBC_2.34`) stripped. */
  symbolName: string | undefined;
  addend: number;
}

/** `readelf -rW`: Rela entries per relocation section name, and RELR offsets per section name. */
export function readelfRelocations(path: string): { rela: Map<string, ReadelfRelocation[]>; relr: Map<string, number[]> } {
  const rela = new Map<string, ReadelfRelocation[]>();
  const relr = new Map<string, number[]>();
  let current: string | undefined;
  const entry = /^([0-9a-f]{16})\s+([0-9a-f]{16})\s+(\S+)\s*(.*)$/;
  const withSymbol = /^([0-9a-f]{16})\s+(.+?)\s+([+-])\s+([0-9a-f]+)$/;
  for (const line of run("readelf", ["-rW", path]).split("\n")) {
    const header = /^Relocation section '([^']+)'/.exec(line);
    if (header !== null) {
      current = header[1]!;
      continue;
    }
    if (current === undefined) continue;
    const m = entry.exec(line);
    if (m !== null) {
      const info = BigInt(`0x${m[2]!}`);
      const rest = m[4]!.trim();
      const s = withSymbol.exec(rest);
      const list = rela.get(current) ?? [];
      list.push({
        offset: parseInt(m[1]!, 16),
        type: m[3]!,
        typeNumber: Number(info & 0xffffffffn),
        symbolIndex: Number(info >> 32n),
        symbolValue: s === null ? undefined : parseInt(s[1]!, 16),
        symbolName: s === null ? undefined : s[2]!.replace(/@.*$/, ""),
        addend: s === null ? (rest === "" ? 0 : parseInt(rest, 16)) : (s[3] === "-" ? -1 : 1) * parseInt(s[4]!, 16),
      });
      rela.set(current, list);
      continue;
    }
    const offset = /^([0-9a-f]{16})$/.exec(line.trim());
    if (offset !== null) {
      const list = relr.get(current) ?? [];
      list.push(parseInt(offset[1]!, 16));
      relr.set(current, list);
    }
  }
  return { rela, relr };
}

/** `nm --defined-only`: name -> { address, letter } (the first definition of each name). */
export function nmSymbols(path: string): Map<string, { address: number; letter: string }> {
  const symbols = new Map<string, { address: number; letter: string }>();
  for (const line of run("nm", ["--defined-only", path]).split("\n")) {
    const m = /^([0-9a-f]+) (\S) (\S+)$/.exec(line);
    if (m !== null && !symbols.has(m[3]!)) symbols.set(m[3]!, { address: parseInt(m[1]!, 16), letter: m[2]! });
  }
  return symbols;
}

/** nm's address of `name`; fails the test if nm does not list it. */
export function nmAddress(symbols: Map<string, { address: number }>, name: string): number {
  const found = symbols.get(name);
  if (found === undefined) throw new Error(`nm does not list ${name}`);
  return found.address;
}
