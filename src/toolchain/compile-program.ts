import { copyFileSync, readFileSync } from "node:fs";
import type { Architecture } from "../arch/architecture.js";
import { InvalidArgumentError } from "../errors.js";
import { compileToObject, runTool } from "./llvm-toolchain.js";
import { activeLlvm, type LlvmSelection, versionText } from "./llvm-selection.js";
import type { CompileMode } from "./compile-mode.js";
import { libraryBuiltinsAmong } from "./library-builtins.js";
import { checkGcStrategies, explainUnsupportedGc } from "./gc-strategy-check.js";

/**
 * How rootwalk compiles a program (the one documented way; `rootwalk compile` and the native
 * runtime's `rootwalk run` both use it):
 *  - "statepoint": `opt -disable-builtin=<each defined function> -passes=rewrite-statepoints-for-gc`, then
 *    `llc -O2 -relocation-model=pic`;
 *  - "plimmix": `llc -O2 -relocation-model=pic -load=<plimmix plugin>` for `gc "plimmix"` gcroot
 *    programs;
 *  - "plain": `llc -O2 -relocation-model=pic`.
 * Position-independent because the program ends up in a shared object (`rootwalk run` links one):
 * under llc's default static model a function with a landing pad gets absolute (R_X86_64_32)
 * personality and LSDA pointers in .eh_frame, which no shared object can hold, and every global's
 * address becomes a text relocation. The caller's flags come after these (`-O0` wins over `-O2`);
 * a caller's own `-relocation-model=...` replaces the default (llc takes that option only once).
 * llc keeps its default options otherwise: in particular X86CallFrameOptimization stays on, so
 * call sites may push arguments; rootwalk reads .eh_frame to get those frames right.
 */
export type { CompileMode };

export interface CompileProgramOptions {
  mode: CompileMode;
  /** Extra llc flags, e.g. -max-registers-for-gc-values=4. */
  llcFlags?: readonly string[];
  /** Extra opt flags for the statepoint mode, e.g. -spp-rematerialization-threshold=0. */
  optFlags?: readonly string[];
  /** Which LLVM (a command passes its `--llvm`'s); default ROOTWALK_LLVM's, else the newest installed. */
  llvm?: LlvmSelection;
  /**
   * The machine to compile for: `-mtriple=<its Linux triple>` for opt and llc when llc's default
   * target is another machine (and the caller's flags name no triple). Default: llc's default
   * target. `rootwalk run` passes the machine it runs on (src/arch/host-architecture.ts): under
   * qemu-user the arm64 Node starts the x86-64 machine's llc, whose default target is x86-64.
   */
  target?: Architecture;
  /**
   * Told each warning about the program's GC strategies (gc-strategy-check.ts: an object that
   * will have no stack maps); the CLI prints them on stderr. Mistakes opt or llc would abort on
   * throw instead.
   */
  onWarning?: (line: string) => void;
}

export const STATEPOINT_OPT_PASSES = ["-passes=rewrite-statepoints-for-gc"] as const;

/** A function definition in text IR: `define ... @name(` or `define ... @"quoted name"(`. */
const DEFINITION = /^define\b[^@\n]*@(?:"([^"]+)"|([-\w$.]+))\s*\(/gm;

/**
 * `-disable-builtin=NAME` for every function the program defines that opt also knows as a C
 * library function (library-builtins.ts): rewrite-statepoints-for-gc then gives a call to the
 * program's own `abs(i64)` or `round` a statepoint like any other call (LLVM 14 otherwise took it
 * for the C library's, a GC leaf, and a collection inside it found its caller at no safepoint). A
 * declared `printf` stays a library function and a leaf (RS4GC cannot wrap a vararg call in a
 * statepoint). Bitcode's definitions are read with llvm-nm.
 */
function ownDefinitionFlags(source: string, llvm: LlvmSelection | undefined): string[] {
  let bytes: Buffer;
  try {
    bytes = readFileSync(source);
  } catch {
    return []; // unreadable: compileToObject says so
  }
  const tools = llvm ?? activeLlvm();
  const isText = !(bytes[0] === 0x42 && bytes[1] === 0x43) && !(bytes[0] === 0xde && bytes[1] === 0xc0);
  const names = isText
    ? [...bytes.toString("utf8").matchAll(DEFINITION)].map((m) => m[1] ?? m[2]!)
    : runTool(tools.tool("llvm-nm"), ["--defined-only", "--format=just-symbols", source])
        .split("\n")
        .filter((n) => n !== "");
  return libraryBuiltinsAmong(names, tools.tool("opt")).map((name) => `-disable-builtin=${name}`);
}

/** Compiles `source` (.ll) to an object file (cached by content) and returns its path. */
export async function compileProgram(source: string, options: CompileProgramOptions): Promise<string> {
  const userFlags = options.llcFlags ?? [];
  const relocationModel = userFlags.some((flag) => /^--?relocation-model(=|$)/.test(flag)) ? [] : ["-relocation-model=pic"];
  const target = options.target !== undefined && !isDefaultTarget(options.target, options.llvm ?? activeLlvm()) ? options.target : undefined;
  const llcFlags = ["-O2", ...relocationModel, ...targetTripleFlags(target, userFlags), ...userFlags];
  const optFlags = [...targetTripleFlags(target, options.optFlags ?? []), ...(options.optFlags ?? [])];
  const llvm = options.llvm === undefined ? {} : { llvm: options.llvm };
  for (const warning of checkGcStrategies(source, options.mode)) options.onWarning?.(warning);
  try {
    return await compileInMode(source, options.mode, llcFlags, optFlags, llvm);
  } catch (error) {
    throw explainUnsupportedGc(error, source);
  }
}

/** Whether llc's default target ("Default target: x86_64-pc-linux-gnu" in `llc --version`) is `target`'s machine. */
function isDefaultTarget(target: Architecture, llvm: LlvmSelection): boolean {
  const llc = llvm.tool("llc");
  const text = (defaultTargetText[llc] ??= versionText(llc) ?? "");
  return /Default target: (\S+)/.exec(text)?.[1]?.split("-")[0] === target.linuxTriple.split("-")[0];
}
const defaultTargetText: Record<string, string> = {};

/** `-mtriple=...` for `target`, unless there is none or the tool's `flags` choose a triple themselves. */
function targetTripleFlags(target: Architecture | undefined, flags: readonly string[]): string[] {
  if (target === undefined || flags.some((flag) => /^--?mtriple(=|$)/.test(flag))) return [];
  return [`-mtriple=${target.linuxTriple}`];
}

async function compileInMode(
  source: string,
  mode: CompileMode,
  llcFlags: string[],
  optFlags: readonly string[],
  llvm: { llvm?: LlvmSelection },
): Promise<string> {
  switch (mode) {
    case "statepoint":
      return compileToObject(source, { optPasses: [...ownDefinitionFlags(source, llvm.llvm), ...STATEPOINT_OPT_PASSES, ...optFlags], llcFlags, ...llvm });
    case "plain":
      return compileToObject(source, { llcFlags, ...llvm });
    case "plimmix": {
      const { compilePlimmix } = await import("./plimmix-plugin.js");
      return compilePlimmix(source, { llcFlags, ...llvm });
    }
    default:
      throw new InvalidArgumentError("compile mode", String(mode), "statepoint | plimmix | plain");
  }
}

/**
 * `rootwalk compile`: compile and copy the object to `output`. A failed copy names `output`, the
 * user's path: Node's copyfile error carries the source as its path, here the cached object, which
 * the user never asked about (`-o /proc/a.o` once said "<cache>/objects/<hash>.o: no such file").
 */
export async function compileProgramTo(source: string, output: string, options: CompileProgramOptions): Promise<string> {
  const object = await compileProgram(source, options);
  try {
    copyFileSync(object, output);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === undefined) throw error;
    // The same system error, about the file the user named (the CLI prints "OUTPUT: <what>").
    throw Object.assign(new Error(`${code}: cannot write ${output}`), { code, path: output, syscall: "copyfile" });
  }
  return output;
}
