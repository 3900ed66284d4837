import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildRuntime } from "../../src/native/build-runtime.js";
import { runtimeExports } from "../../src/native/runtime-symbol-clash.js";
import { buildRunEntry, CLI } from "../support/native-run.js";
import { irSource } from "../support/ir-source.js";

/*
 * Issue 17 item 2: a program's own functions are its own. A toy language names functions
 * `round`, `abs`, `free`, `index`, `time`, `send`, `exit`: names libc and libm export too, and
 * both are loaded in the process before the program library. Each program below defines one
 * such `i64 NAME(i64)` (allocating, holding the object across a safepoint, returning x + 3) and
 * sums NAME(i) for i < ITERATIONS; if any call reached the library's function instead, the sum
 * is wrong (or the process crashes or exits early: `exit`). Both styles, with and without
 * collections. A program that defines one of the runtime's own entry points is refused by name.
 */

const NAMES = ["round", "abs", "free", "index", "time", "send", "exit"] as const;
const ITERATIONS = 100;
const ADDEND = 3;
/** What the program computes: sum of (i + ADDEND) for i < ITERATIONS. */
const EXPECTED = String((ITERATIONS * (ITERATIONS - 1)) / 2 + ITERATIONS * ADDEND);

type Style = "statepoint" | "gcroot";

function statepointProgram(name: string): string {
  return `declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_safepoint()
@__LLVM_StackMaps = extern_weak global i8

define i64 @${name}(i64 %x) gc "statepoint-example" {
entry:
  %o = call i8 addrspace(1)* @gc_alloc(i64 1, i64 8)
  %raw = getelementptr i8, i8 addrspace(1)* %o, i64 8
  %p = bitcast i8 addrspace(1)* %raw to i64 addrspace(1)*
  store i64 %x, i64 addrspace(1)* %p
  call void @gc_safepoint()
  %v = load i64, i64 addrspace(1)* %p
  %r = add i64 %v, ${ADDEND}
  ret i64 %r
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
${sumLoop(name)}
`;
}

function gcrootProgram(name: string): string {
  const file = `rw_symbol_${name}.c`;
  return `source_filename = "${file}"
declare void @llvm.gcroot(i8**, i8*)
declare void @gc_init(i8*)
declare i8* @gc_alloc(i64, i64)
declare void @gc_safepoint()
@"_GC_MAP_${file}" = external global i8

define i64 @${name}(i64 %x) gc "plimmix" {
entry:
  %root = alloca i8*, align 8
  call void @llvm.gcroot(i8** %root, i8* null)
  store i8* null, i8** %root
  %o = call i8* @gc_alloc(i64 1, i64 8)
  store i8* %o, i8** %root
  %raw = getelementptr i8, i8* %o, i64 8
  %p = bitcast i8* %raw to i64*
  store i64 %x, i64* %p
  call void @gc_safepoint()
  %moved = load i8*, i8** %root
  %raw2 = getelementptr i8, i8* %moved, i64 8
  %p2 = bitcast i8* %raw2 to i64*
  %v = load i64, i64* %p2
  %r = add i64 %v, ${ADDEND}
  ret i64 %r
}

define i64 @rw_main() gc "plimmix" {
entry:
  call void @gc_init(i8* @"_GC_MAP_${file}")
${sumLoop(name)}
`;
}

/** rw_main's body after gc_init: sum of NAME(i) for i < ITERATIONS. */
function sumLoop(name: string): string {
  return `  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %s = phi i64 [ 0, %entry ], [ %s1, %loop ]
  %r = call i64 @${name}(i64 %i)
  %s1 = add i64 %s, %r
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, ${ITERATIONS}
  br i1 %done, label %exit, label %loop
exit:
  ret i64 %s1
}`;
}

let dir: string;

function writeProgram(style: Style, name: string): string {
  const path = join(dir, `${style}-${name}.ll`);
  writeFileSync(path, style === "statepoint" ? statepointProgram(name) : gcrootProgram(name));
  return irSource(path);
}

function run(program: string, style: Style, args: readonly string[]): { status: number | null; signal: string | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, "run", program, ...(style === "gcroot" ? ["--plimmix"] : []), ...args], { encoding: "utf8", timeout: 120_000 });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  buildRunEntry();
  dir = mkdtempSync(join(tmpdir(), "rw-program-symbols-"));
}, 300_000);

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe("a program's functions named like libc's or libm's are its own", () => {
  for (const style of ["statepoint", "gcroot"] as const) {
    for (const name of NAMES) {
      it(`${style}: ${name}`, () => {
        const program = writeProgram(style, name);
        for (const mode of [["--no-gc"], ["--stress=1", "--verify", "--heap", "4M"]]) {
          const r = run(program, style, mode);
          expect(r.signal, r.stderr).toBeNull();
          expect(r.status, r.stderr).toBe(0);
          expect(r.stdout).toMatch(new RegExp(`^result: ${EXPECTED}$`, "m"));
          if (mode[0] !== "--no-gc") expect(r.stdout).toMatch(/^collections: [1-9]\d*, .* objects moved: [1-9]/m);
          expect(r.stdout).toMatch(/verify failures: 0;/);
        }
      }, 120_000);
    }
  }
});

describe("a program that defines one of the runtime's own entry points", () => {
  it("the runtime's exports are read from its library", () => {
    const exports = runtimeExports(buildRuntime());
    for (const name of [
      "gc_init",
      "gc_alloc",
      "gc_safepoint",
      "gc_collect",
      "gc_thread_start",
      "gc_thread_join",
      "thread_stuck_start",
      "thread_stuck_end",
      "no_gc_thread",
      "gc_add_global",
      "rw_setup",
    ]) {
      expect(exports.has(name), name).toBe(true);
    }
    expect(exports.has("rw_main")).toBe(false);
  });

  for (const [style, name] of [
    ["statepoint", "gc_collect"],
    ["statepoint", "thread_stuck_end"],
    ["gcroot", "gc_thread_start"],
    ["gcroot", "rw_setup"],
  ] as const) {
    it(`is refused in one line naming it (${style}: ${name})`, () => {
      const program = writeProgram(style, name);
      const r = run(program, style, ["--no-gc"]);
      expect(r.status).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr.trimEnd().split("\n")).toEqual([
        `rootwalk run: ${program}: found a definition of ${name}, one of the native runtime's own entry points, expected a program that calls ${name} and leaves its definition to the runtime (rename the program's ${name})`,
      ]);
    }, 120_000);
  }
});
