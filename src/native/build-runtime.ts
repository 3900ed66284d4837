import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { elfSoname } from "../elf/dynamic.js";
import { ElfFile } from "../elf/elf-file.js";
import { fileURLToPath } from "node:url";
import { InvalidArgumentError } from "../errors.js";
import { cachedArtifact } from "../toolchain/cache-artifact.js";
import { cacheSubdir, privateCacheFolder, TEMPORARY_PREFIX } from "../toolchain/cache-dir.js";
import { cacheKey, repoRoot, runTool } from "../toolchain/llvm-toolchain.js";
import { hostArchitecture } from "../arch/host-architecture.js";
import { targetGcc } from "../toolchain/target-gcc.js";
import { refuseRuntimeSymbolClash } from "./runtime-symbol-clash.js";

/**
 * Builds the native runtime (its C parts behind runtime.h + runtime-entry.S -> librwruntime-<hash>.so) and links
 * programs against it (prog-<hash>.so), both cached under `native/` in the rootwalk cache (src/toolchain/cache-dir.ts) by content
 * (sources, flags, the compiler's `--version`). Both are built for the architecture this process
 * runs on (src/arch/host-architecture.ts) with the compiler that targets it (target-gcc.ts: gcc,
 * or the cross gcc when the arm64 Node runs under qemu-user on an x86-64 machine).
 */

export const RUNTIME_GCC_FLAGS = ["-O2", "-fPIC", "-shared", "-pthread", "-Wall", "-Wextra", "-Werror"] as const;
/**
 * .llvm_stackmaps holds absolute function addresses: text relocations are intended.
 * -Bsymbolic: the program's references to its own definitions bind to them, never to a library
 * loaded before it that exports the same name (a program's `round` or `exit` is its own, not
 * libm's or libc's); runtime-symbol-clash.ts refuses the one clash that cannot be allowed.
 */
export const PROGRAM_LINK_FLAGS = ["-shared", "-Wl,-z,notext", "-Wl,-Bsymbolic"] as const;

/** The compiler for this process's architecture. */
function gcc(): string {
  return targetGcc(hostArchitecture());
}

let gccVersionText: string | undefined;
function gccVersion(): string {
  return (gccVersionText ??= runTool(gcc(), ["--version"]));
}

export function nativeCacheDir(): string {
  return cacheSubdir("native");
}

/** The directory holding runtime.c (works from src/ and from dist/src/). */
function sourceDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  if (existsSync(join(here, "runtime.c"))) return here;
  const fromRoot = join(repoRoot(), "src", "native");
  if (existsSync(join(fromRoot, "runtime.c"))) return fromRoot;
  throw new InvalidArgumentError("native runtime sources", here, "a directory with runtime.c and runtime-entry.S");
}

/**
 * The runtime's sources, paths sorted by name: `compiled`, every `runtime*.c` and `runtime-entry.S`
 * of the source directory (each part of the runtime, runtime.h names them), and `headers`, every
 * `runtime*.h`. The cache key covers both, so a changed header rebuilds.
 */
export function runtimeSources(): { compiled: string[]; headers: string[] } {
  const dir = sourceDir();
  const names = readdirSync(dir)
    .filter((name) => name.startsWith("runtime"))
    .sort();
  const paths = (pattern: RegExp): string[] => names.filter((name) => pattern.test(name)).map((name) => join(dir, name));
  return { compiled: paths(/\.(c|S)$/), headers: paths(/\.h$/) };
}

/** Path of the runtime shared library, built if needed (and said so: it takes seconds). */
export function buildRuntime(): string {
  const { compiled, headers } = runtimeSources();
  const inputs = [...compiled, ...headers].flatMap((path) => [basename(path), readFileSync(path)]);
  const key = cacheKey(["librwruntime/v2", ...inputs, JSON.stringify(RUNTIME_GCC_FLAGS), gccVersion()]);
  return cachedArtifact({
    path: join(nativeCacheDir(), `librwruntime-${key.slice(0, 16)}.so`),
    what: "the native runtime",
    announceBuild: true,
    build: (output) => void runTool(gcc(), [...RUNTIME_GCC_FLAGS, "-o", output, ...compiled, "-ldl"]),
  });
}

/**
 * The directory the program library's rpath names for input `path`: for a shared library, one
 * under the cache holding a link named by its DT_SONAME (the name the program library records
 * in DT_NEEDED, which need not be the file's own name) to the user's file; for an object, its
 * own directory (unused).
 */
function sonameDirectory(path: string): string {
  if (!path.endsWith(".so") && !/\.so\.\d+/.test(path)) return dirname(path);
  let soname: string | undefined;
  try {
    soname = elfSoname(ElfFile.parse(readFileSync(path)));
  } catch {
    soname = undefined;
  }
  const name = soname ?? basename(path);
  if (name === basename(path)) return dirname(path);
  const dir = privateCacheFolder(join(nativeCacheDir(), "sonames", cacheKey(["soname-dir/v1", path, name]).slice(0, 16)));
  // Made in a private temporary folder and renamed into place: concurrent runs of the same
  // library never see it missing, and nothing is created through a link someone placed.
  const scratch = mkdtempSync(join(dir, `${TEMPORARY_PREFIX}${process.pid}-`));
  try {
    symlinkSync(path, join(scratch, name));
    renameSync(join(scratch, name), join(dir, name));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return dir;
}

/**
 * Links the program's objects into one shared library that depends on the runtime (its
 * references to gc_* resolve to the runtime when both are loaded, the runtime first, with
 * RTLD_GLOBAL semantics via the DT_NEEDED entry). `objects` may include shared libraries the
 * user linked (`.so`): each becomes a DT_NEEDED entry of the program library (by absolute path,
 * never dropped as unused), so it is loaded with the runtime in its lookup scope and its
 * rw_main found through the program library. `names` (default `objects`) are what the user
 * named for each (the .ll a cached object was compiled from), for the messages. A program that
 * defines a runtime symbol is refused (runtime-symbol-clash.ts).
 */
export function linkProgram(objects: readonly string[], runtime: string, names: readonly string[] = objects): string {
  if (objects.length === 0) throw new InvalidArgumentError("program", "no objects", "at least one object");
  refuseRuntimeSymbolClash(
    objects.map((o) => resolve(o)),
    names,
    runtime,
  );
  const contents = objects.map((o) => readFileSync(resolve(o)));
  const key = cacheKey(["rw-program/v3", ...objects.map((o) => resolve(o)), ...contents, runtime, JSON.stringify(PROGRAM_LINK_FLAGS), gccVersion()]);
  return cachedArtifact({
    path: join(nativeCacheDir(), `prog-${key.slice(0, 16)}.so`),
    what: "program library",
    build: (output) => {
      const rpaths = [...new Set([dirname(runtime), ...objects.map((o) => sonameDirectory(resolve(o)))])].map((d) => `-Wl,-rpath,${d}`);
      runTool(gcc(), [...PROGRAM_LINK_FLAGS, "-o", output, "-Wl,--no-as-needed", ...objects.map((o) => resolve(o)), runtime, ...rpaths]);
    },
  });
}
