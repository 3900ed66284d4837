import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { RUNTIME_GCC_FLAGS } from "../src/native/build-runtime.js";
import { cachedArtifact } from "../src/toolchain/cache-artifact.js";
import { cacheKey, repoRoot, runTool } from "../src/toolchain/llvm-toolchain.js";

/*
 * The C/C++ references: sources in bench/native/, built by the bench itself with gcc/g++ -O2 and
 * cached in .cache/bench/bin under a key of (source, flags, compiler version). Each program reads
 * an input file the TypeScript side wrote and prints one JSON line of per-repeat samples.
 */

export interface NativeSamples {
  /** ns per operation (frame, lookup, record, marked object) for each repeat. */
  samplesNsPerOp: number[];
  [field: string]: unknown;
}

const LLVM_CONFIG = "llvm-config-14";

function cacheDir(): string {
  return join(repoRoot(), ".cache", "bench");
}

function llvmCxxFlags(): string[] {
  const tool = existsSync("/usr/bin/llvm-config-14") ? LLVM_CONFIG : "llvm-config";
  return runTool(tool, ["--cxxflags"]).trim().split(/\s+/);
}

const built = new Map<string, string>();

/**
 * Builds bench/native/<source> (cached) and returns the executable's path. `path` builds another
 * copy of it instead (a test's altered reference); its directory must hold read-input.h.
 */
export function buildReference(source: string, path = join(repoRoot(), "bench", "native", source)): string {
  const cached = built.get(path);
  if (cached !== undefined) return cached;
  const cpp = source.endsWith(".cpp");
  const compiler = cpp ? "g++" : "gcc";
  // StackMapParser.h is header-only; the define drops the one link-time symbol (ABI checks) its
  // includes would otherwise pull from libLLVMSupport.
  const flags = cpp ? ["-O2", ...llvmCxxFlags(), "-DLLVM_DISABLE_ABI_BREAKING_CHECKS_ENFORCING=1"] : ["-O2", "-std=c11", "-D_POSIX_C_SOURCE=200809L"];
  const header = readFileSync(join(repoRoot(), "bench", "native", "read-input.h"));
  const key = cacheKey([readFileSync(path), header, ...flags, runTool(compiler, ["--version"])]).slice(0, 16);
  const exe = cachedArtifact({
    path: join(cacheDir(), "bin", `${source.replace(/\.[a-z]+$/, "")}-${key}`),
    what: "bench reference",
    build: (output) => void runTool(compiler, [...flags, path, "-o", output]),
  });
  built.set(path, exe);
  return exe;
}

/**
 * Builds bench/native/<source> (cached) as a shared library with the native runtime's own gcc
 * flags (src/native/build-runtime.ts), for references that run inside a native run's process.
 */
export function buildReferenceLibrary(source: string): string {
  const path = join(repoRoot(), "bench", "native", source);
  const flags = [...RUNTIME_GCC_FLAGS];
  const key = cacheKey([readFileSync(path), ...flags, runTool("gcc", ["--version"])]).slice(0, 16);
  return cachedArtifact({
    path: join(cacheDir(), "bin", `${source.replace(/\.[a-z]+$/, "")}-${key}.so`),
    what: "bench reference library",
    build: (output) => void runTool("gcc", [...flags, path, "-o", output]),
  });
}

export function runReference(source: string, args: readonly (string | number)[]): NativeSamples {
  const out = runTool(buildReference(source), args.map(String)).trim();
  const parsed = JSON.parse(out) as NativeSamples;
  return parsed;
}

export function inputPath(name: string): string {
  return join(cacheDir(), "inputs", name);
}
