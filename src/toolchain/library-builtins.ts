import { readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { SHN_UNDEF } from "../elf/elf-constants.js";
import { ElfFile } from "../elf/elf-file.js";
import { runTool } from "./llvm-toolchain.js";

/*
 * Which of a program's own function names opt's library info also knows as C library functions
 * (a toy language's `abs`, `round`, `exit`). rewrite-statepoints-for-gc treats a call to a known
 * library function as a GC leaf (no statepoint): for a program's own `abs` that is wrong, since
 * its body may collect. compile-program.ts passes `-disable-builtin=NAME` for exactly these names.
 * opt refuses `-disable-builtin` of a name it does not know ("cannot disable nonexistent builtin
 * function"), and reports only the first, so each candidate is asked on its own: candidates are
 * the names the C and math libraries export (where every builtin opt knows on Linux lives), so a
 * program defining no such name costs no opt run.
 */

const LIBRARIES = ["libc.so.6", "libm.so.6"] as const;
let libraryNames: ReadonlySet<string> | undefined;

/** Every defined dynamic symbol of libc and libm, as gcc finds them. */
function cLibraryExports(): ReadonlySet<string> {
  if (libraryNames !== undefined) return libraryNames;
  const names = new Set<string>();
  for (const library of LIBRARIES) {
    const path = runTool("gcc", [`-print-file-name=${library}`]).trim();
    try {
      for (const symbol of ElfFile.parse(readFileSync(path)).dynamicSymbols())
        if (symbol.sectionIndex !== SHN_UNDEF && symbol.name !== "") names.add(symbol.name.replace(/@.*$/, ""));
    } catch {
      // gcc named no file (a bare name back): no candidates from this library.
    }
  }
  return (libraryNames = names);
}

const knownToOpt = new Map<string, boolean>();

/** Whether `opt` accepts `-disable-builtin=name` (it knows the name as a library function). */
function isBuiltin(opt: string, name: string): boolean {
  const key = `${opt}\0${name}`;
  let known = knownToOpt.get(key);
  if (known === undefined) {
    known = spawnSync(opt, [`-disable-builtin=${name}`, "-S", "-o", "/dev/null", "-"], { input: "", encoding: "utf8" }).status === 0;
    knownToOpt.set(key, known);
  }
  return known;
}

/** The names in `defined` that `opt` takes for C library functions. */
export function libraryBuiltinsAmong(defined: readonly string[], opt: string): string[] {
  const exports = cLibraryExports();
  return [...new Set(defined)].filter((name) => exports.has(name) && isBuiltin(opt, name));
}
