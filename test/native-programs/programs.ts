import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Architecture } from "../../src/arch/architecture.js";
import { X86_64 } from "../../src/arch/x86-64.js";
import { compileProgram, type CompileMode } from "../../src/toolchain/compile-program.js";
import { cacheKey, repoRoot, runTool } from "../../src/toolchain/llvm-toolchain.js";
import { targetGcc } from "../../src/toolchain/target-gcc.js";
import { irSource } from "../support/ir-source.js";
import { qemuAarch64 } from "../support/qemu-aarch64.js";

/**
 * The differential test programs for rootwalk's native runtime (see each .ll's header comment),
 * and a malloc-only reference runtime (reference-runtime.c) that runs them without any GC: it
 * proves the programs correct and fixes each one's expected result.
 *
 * ABI (fixed): gc_init(map), gc_alloc(pointerSlots, rawBytes) -> pointer to slot 0 (raw bytes
 * after the slots), gc_safepoint(), gc_collect(), gc_thread_start(fn, arg) / gc_thread_join(h),
 * thread_stuck_start() / thread_stuck_end(), no_gc_thread(), gc_add_global(slot); the program's
 * entry is `i64 rw_main()` and its return value is the result (negative = a failed self-check).
 */

export type ProgramMode = Extract<CompileMode, "statepoint" | "plimmix">;

export interface NativeProgram {
  name: string;
  /** Paths of the .ll modules (absolute), all compiled in `mode` and linked together. */
  files: string[];
  mode: ProgramMode;
  llcFlags?: string[];
  optFlags?: string[];
  expectedResult: bigint;
  /** What the program exercises (tags; reference.test.ts checks the verifiable ones). */
  features: string[];
  /** A stress collector collects at every stressN-th safepoint (1 = every one). */
  stressN?: number;
}

const HERE = dirname(fileURLToPath(import.meta.url));
const ll = (name: string): string => join(HERE, name);

export const CSR_LLC_FLAGS = ["-max-registers-for-gc-values=4", "-fixup-allow-gcptr-in-csr"];
export const NO_REMAT_OPT_FLAGS = ["-spp-rematerialization-threshold=0"];

export const NATIVE_PROGRAMS: readonly NativeProgram[] = [
  {
    name: "sp-linked-list",
    files: [ll("sp-linked-list.ll")],
    mode: "statepoint",
    expectedResult: 8007994000n,
    features: ["linked-list", "raw-bytes", "garbage"],
  },
  {
    name: "sp-binary-tree",
    files: [ll("sp-binary-tree.ll")],
    mode: "statepoint",
    expectedResult: 4272896n,
    features: ["tree", "recursion", "raw-bytes", "garbage"],
  },
  {
    name: "sp-pointer-array",
    files: [ll("sp-pointer-array.ll")],
    mode: "statepoint",
    expectedResult: 37675192n,
    features: ["pointer-array", "raw-bytes", "odd-raw-sizes", "cycles", "aliasing"],
  },
  {
    name: "sp-derived-pointers",
    files: [ll("sp-derived-pointers.ll")],
    mode: "statepoint",
    optFlags: NO_REMAT_OPT_FLAGS,
    expectedResult: 5590498n,
    features: ["derived-pointers", "raw-bytes"],
  },
  {
    name: "sp-many-args",
    files: [ll("sp-many-args.ll")],
    mode: "statepoint",
    expectedResult: 324750n,
    features: ["stack-args", "pushed-args"],
  },
  {
    name: "sp-qsort-callback",
    files: [ll("sp-qsort-callback.ll")],
    mode: "statepoint",
    expectedResult: 98466n,
    features: ["native-callback", "garbage"],
  },
  {
    name: "sp-invoke",
    files: [ll("sp-invoke.ll")],
    mode: "statepoint",
    expectedResult: 29400n,
    features: ["invoke", "linked-list"],
  },
  {
    name: "sp-csr",
    files: [ll("sp-csr.ll")],
    mode: "statepoint",
    llcFlags: CSR_LLC_FLAGS,
    expectedResult: 583050n,
    features: ["gc-in-csr", "linked-list"],
  },
  {
    name: "sp-dynamic-alloca",
    files: [ll("sp-dynamic-alloca.ll")],
    mode: "statepoint",
    expectedResult: 2350530n,
    features: ["dynamic-alloca", "recursion"],
  },
  {
    name: "sp-deep-recursion",
    files: [ll("sp-deep-recursion.ll")],
    mode: "statepoint",
    expectedResult: 100001n,
    features: ["deep-recursion"],
  },
  {
    name: "sp-threads",
    files: [ll("sp-threads.ll")],
    mode: "statepoint",
    expectedResult: 1141587100n,
    features: ["threads", "linked-list", "pointer-array", "raw-bytes"],
  },
  {
    name: "sp-stuck-thread",
    files: [ll("sp-stuck-thread.ll")],
    mode: "statepoint",
    expectedResult: 10976550n,
    features: ["threads", "stuck-thread", "no-gc-thread", "linked-list"],
  },
  {
    name: "sp-globals",
    files: [ll("sp-globals.ll")],
    mode: "statepoint",
    expectedResult: 332898500n,
    features: ["globals", "linked-list", "pointer-array"],
  },
  {
    name: "pl-list-tree",
    files: [ll("pl-list-tree.ll")],
    mode: "plimmix",
    expectedResult: 3129816n,
    features: ["plimmix", "linked-list", "tree", "recursion", "raw-bytes"],
  },
  {
    name: "pl-two-modules",
    files: [ll("pl-mod-a.ll"), ll("pl-mod-b.ll")],
    mode: "plimmix",
    expectedResult: 69440n,
    features: ["plimmix", "two-modules", "stack-args", "pointer-array"],
  },
  {
    name: "pl-globals-dynamic",
    files: [ll("pl-globals-dynamic.ll")],
    mode: "plimmix",
    expectedResult: 760344n,
    features: ["plimmix", "globals", "dynamic-alloca", "recursion"],
  },
];

export const REFERENCE_RUNTIME_SOURCE = ll("reference-runtime.c");

export function referenceCacheDir(): string {
  return join(repoRoot(), ".cache", "native-programs");
}

/**
 * Compiles every module of `entry` (cached .o files), in order; for `target` when given (llc
 * -mtriple; AArch64 objects on this x86-64 machine), else for llc's default target.
 */
export async function compileProgramObjects(entry: NativeProgram, target?: Architecture): Promise<string[]> {
  const objects: string[] = [];
  for (const file of entry.files) {
    objects.push(
      await compileProgram(irSource(file), {
        mode: entry.mode,
        llcFlags: entry.llcFlags ?? [],
        optFlags: entry.optFlags ?? [],
        ...(target !== undefined ? { target } : {}),
      }),
    );
  }
  return objects;
}

/**
 * Builds `entry` against the reference runtime (gcc -no-pie -pthread; for AArch64 the cross gcc,
 * target-gcc.ts) and returns the executable's path under .cache/native-programs/, cached by the
 * content of every input.
 */
export async function buildReferenceProgram(entry: NativeProgram, target: Architecture = X86_64): Promise<string> {
  const objects = await compileProgramObjects(entry, target === X86_64 ? undefined : target);
  const runtime = readFileSync(REFERENCE_RUNTIME_SOURCE);
  const gccFlags = ["-no-pie", "-pthread", "-O1"];
  const gcc = targetGcc(target);
  const key = cacheKey([
    "native-programs/reference/v1",
    runtime,
    ...objects.map((o) => readFileSync(o)),
    JSON.stringify(gccFlags),
    ...(target === X86_64 ? [] : [gcc]),
  ]);
  const dir = referenceCacheDir();
  mkdirSync(dir, { recursive: true });
  const exe = join(dir, `${entry.name}-${key.slice(0, 16)}`);
  if (existsSync(exe)) return exe;
  const temp = `${exe}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    runTool(gcc, [...gccFlags, REFERENCE_RUNTIME_SOURCE, ...objects, "-o", temp]);
    renameSync(temp, exe);
  } finally {
    rmSync(temp, { force: true });
  }
  return exe;
}

export interface ReferenceRun {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  result?: bigint;
  gcInitCalls?: number;
  safepoints?: number;
  allocs?: number;
  collects?: number;
  threads?: number;
  globals?: number;
}

const LINE = /^result=(-?\d+) gc_init_calls=(\d+) safepoints=(\d+) allocs=(\d+) collects=(\d+) threads=(\d+) globals=(\d+)$/m;

/** Builds and runs `entry` under the reference runtime (for `target`: AArch64 under qemu-aarch64) and parses its result line. */
export async function runReference(entry: NativeProgram, timeoutMs = 20_000, target: Architecture = X86_64): Promise<ReferenceRun> {
  const exe = await buildReferenceProgram(entry, target);
  const [command, args] = target === X86_64 ? [exe, []] : qemuAarch64(exe);
  const r = spawnSync(command, args, { encoding: "utf8", timeout: timeoutMs });
  const run: ReferenceRun = { status: r.status, signal: r.signal, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
  const m = LINE.exec(run.stdout);
  if (m !== null) {
    run.result = BigInt(m[1]!);
    run.gcInitCalls = Number(m[2]);
    run.safepoints = Number(m[3]);
    run.allocs = Number(m[4]);
    run.collects = Number(m[5]);
    run.threads = Number(m[6]);
    run.globals = Number(m[7]);
  }
  return run;
}
