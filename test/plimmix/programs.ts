import { irSource } from "../support/ir-source.js";
import { readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { repoRoot, writeFileAtomic } from "../../src/toolchain/llvm-toolchain.js";

/**
 * The gcroot programs of test/plimmix/ll and what their `_GC_MAP_` must say. Each file is
 * written with `gc "plimmix"`; `ocamlSource` rewrites it to `gc "ocaml"` (LLVM's built-in
 * printer for the same IR, a peer to compare with). Which slot is which root is found in the
 * machine code by the marker stores (test/plimmix/machine-code.ts), so the expectations here are
 * only the facts the IR fixes: which functions get a record, in which order, how many roots and
 * stack arguments, which frames are dynamic, which globals are roots.
 */

export const PROGRAM_DIR = join(dirname(fileURLToPath(import.meta.url)), "ll");

export interface ExpectedFunction {
  name: string;
  /** Roots in the record: the function's gcroots, or 0 when it has no safe point. */
  roots: number;
  /** max(0, IR parameters - 6). */
  stackArguments: number;
  /** Frame size -1 (variable-sized allocas): roots are RBP-relative. */
  dynamic?: boolean;
  /** The function has `push %rbp; mov %rsp,%rbp` (LLVM's offsets for it are RBP-relative). */
  framePointer?: boolean;
}

export interface PlimmixProgram {
  name: string;
  sourceFileName: string;
  /** The records, in module order. */
  functions: ExpectedFunction[];
  /** Global roots, in module order. */
  globals: string[];
  /**
   * What llc does with the gc "ocaml" form: a frametable; none (no gc function with code is left);
   * or a fatal error (frame size >= 65536, which is how LLVM's printer sees a dynamic frame).
   */
  ocaml: "frametable" | "none" | "rejected";
}

export const PROGRAMS: PlimmixProgram[] = [
  {
    name: "four-types",
    sourceFileName: "four-types.c",
    functions: [{ name: "four_types", roots: 5, stackArguments: 0 }],
    globals: [],
    ocaml: "frametable",
  },
  {
    name: "many-roots",
    sourceFileName: "many-roots.c",
    functions: [
      { name: "many_roots", roots: 20, stackArguments: 0 },
      { name: "branchy_roots", roots: 12, stackArguments: 0 },
    ],
    globals: [],
    ocaml: "frametable",
  },
  {
    name: "nested-calls",
    sourceFileName: "nested-calls.c",
    functions: [
      { name: "inner", roots: 1, stackArguments: 0 },
      { name: "middle", roots: 2, stackArguments: 0 },
      { name: "outer", roots: 1, stackArguments: 0 },
      { name: "tail_caller", roots: 1, stackArguments: 0 },
      { name: "leaf_with_root", roots: 0, stackArguments: 0 },
    ],
    globals: [],
    ocaml: "frametable",
  },
  {
    name: "stack-args",
    sourceFileName: "stack-args.c",
    functions: [
      { name: "pass_nine", roots: 2, stackArguments: 0 },
      { name: "eight_params", roots: 2, stackArguments: 2 },
    ],
    globals: [],
    ocaml: "frametable",
  },
  {
    name: "frame-pointer",
    sourceFileName: "frame-pointer.c",
    functions: [
      { name: "fp_simple", roots: 2, stackArguments: 0, framePointer: true },
      { name: "fp_callee_saved", roots: 3, stackArguments: 0, framePointer: true },
      { name: "fp_non_leaf", roots: 1, stackArguments: 0, framePointer: true },
    ],
    globals: [],
    ocaml: "frametable",
  },
  {
    name: "dynamic-alloca",
    sourceFileName: "dynamic-alloca.c",
    functions: [
      { name: "vla", roots: 2, stackArguments: 0, dynamic: true, framePointer: true },
      { name: "vla_in_loop", roots: 1, stackArguments: 0, dynamic: true, framePointer: true },
    ],
    globals: [],
    ocaml: "rejected",
  },
  {
    name: "globals",
    sourceFileName: "globals.c",
    functions: [{ name: "set_globals", roots: 1, stackArguments: 0 }],
    globals: ["root_pointer", "root_internal", "root_in_section"],
    ocaml: "frametable",
  },
  {
    name: "empty-map",
    sourceFileName: "empty-map.c",
    functions: [],
    globals: ["the_root"],
    ocaml: "none",
  },
  {
    name: "link-a",
    sourceFileName: "link/a.c",
    functions: [{ name: "a_entry", roots: 1, stackArguments: 0 }],
    globals: ["shared_a"],
    ocaml: "frametable",
  },
  {
    name: "link-b",
    sourceFileName: "link/b.c",
    functions: [{ name: "b_entry", roots: 2, stackArguments: 0 }],
    globals: ["shared_b"],
    ocaml: "frametable",
  },
];

export function program(name: string): PlimmixProgram {
  const found = PROGRAMS.find((entry) => entry.name === name);
  if (found === undefined) throw new Error(`no plimmix program ${name}`);
  return found;
}

export function programPath(entry: PlimmixProgram): string {
  return irSource(join(PROGRAM_DIR, `${entry.name}.ll`));
}

/** Scratch space for derived sources and links (git-ignored). */
export function scratchDir(...parts: string[]): string {
  return join(repoRoot(), ".cache", "plimmix", ...parts);
}

/** Writes a rewritten copy of a program under .cache/plimmix/<kind>/ and returns its path. */
export function derivedSource(entry: PlimmixProgram, kind: string, rewrite: (text: string) => string): string {
  // Named after the source actually read (LLVM 19: the opaque-pointer form, its own name), so the
  // two test projects never overwrite each other's derived file.
  const source = programPath(entry);
  const path = scratchDir(kind, basename(source));
  const text = rewrite(readFileSync(source, "utf8"));
  let current: string | undefined;
  try {
    current = readFileSync(path, "utf8");
  } catch {
    current = undefined;
  }
  if (current !== text) writeFileAtomic(path, text);
  return path;
}

/**
 * The gc "ocaml" form of a program. available_externally gc functions become declarations: LLVM
 * 14's ocaml printer does not skip them (they get no code) and aborts on their never-set frame
 * size (UINT64_MAX: "too large for the ocaml GC"); the plimmix printer skips them.
 */
export function ocamlSource(entry: PlimmixProgram): string {
  return derivedSource(entry, "ll-ocaml", (text) => {
    const lines: string[] = [];
    let skippingBody = false;
    for (const line of text.split("\n")) {
      if (skippingBody) {
        skippingBody = line !== "}";
        continue;
      }
      if (line.startsWith("define available_externally")) {
        lines.push(line.replace("define available_externally", "declare").replace(/ gc "plimmix" \{$/, ""));
        skippingBody = true;
        continue;
      }
      lines.push(line.replaceAll('gc "plimmix"', 'gc "ocaml"'));
    }
    return lines.join("\n");
  });
}

/** The label of a program's map. */
export function mapLabel(entry: PlimmixProgram): string {
  return `_GC_MAP_${entry.sourceFileName}`;
}
