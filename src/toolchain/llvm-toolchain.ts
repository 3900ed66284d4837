import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { InvalidArgumentError, printableDiagnostic, ToolError } from "../errors.js";
import { cachedArtifact } from "./cache-artifact.js";
import { cacheSubdir } from "./cache-dir.js";
import { activeLlvm, FIRST_OPAQUE_POINTER_MAJOR, hasOpaquePointersOnly, type LlvmSelection } from "./llvm-selection.js";
import { holdInterruptsWhileToolsRun } from "./held-interrupt.js";

/**
 * Driving the LLVM command-line tools (opt, llc, llvm-readobj, ...) and gcc from Node.
 *
 * Used by the tests (to build the `.ll` corpus into objects) and by `rootwalk compile`.
 * Every build product is content-addressed: the cache key is a SHA-256 over everything that can
 * change the output (input bytes, tool arguments, tool version), so a stale object is never
 * reused, and every product goes through cachedArtifact (cache-artifact.ts): built in a private
 * temporary folder, renamed into place, and checked against its recorded SHA-256 before reuse.
 */

/** stdout/stderr of a tool can be large (objdump of a big object): never truncate it. */
const MAX_TOOL_OUTPUT_BYTES = 1 << 30;

/** How many lines of a failing tool's stderr go into the error message. */
const STDERR_LINES_IN_ERROR = 8;

/**
 * The command to run for LLVM tool `name` (e.g. "llc") of the selected LLVM (see
 * llvm-selection.ts: a command's `--llvm`, else ROOTWALK_LLVM, else the newest of 14..19): `llc-19`,
 * `/usr/lib/llvm-19/bin/llc`, or a plain `llc` that reports that version. Memoized.
 */
export function findLlvmTool(name: string, llvm: LlvmSelection = activeLlvm()): string {
  return llvm.tool(name);
}

export interface RunToolOptions {
  /** Working directory of the tool. */
  cwd?: string;
  /** Bytes to feed on stdin. */
  input?: string | Uint8Array;
  /**
   * Environment (defaults to this process's). Spelled without Node's global `NodeJS` namespace:
   * the shipped declarations must type-check in a consumer that has no @types/node.
   */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Runs `tool args...` synchronously and returns its stdout. Throws a ToolError naming the exit
 * status (or signal) and the first lines of stderr if the tool cannot start or fails.
 */
export function runTool(tool: string, args: readonly string[], options: RunToolOptions = {}): string {
  // Ctrl-C reaches the tool too (the terminal signals the whole process group): this process
  // outlives it (held-interrupt.ts), so the tool's "killed by SIGINT" becomes one "interrupted"
  // line (src/errors.ts describeFailure) and the callers' cleanup (a build's temporary folder) still runs.
  holdInterruptsWhileToolsRun();
  const result: SpawnSyncReturns<string> = spawnSync(tool, args, {
    encoding: "utf8",
    maxBuffer: MAX_TOOL_OUTPUT_BYTES,
    cwd: options.cwd,
    input: options.input,
    env: options.env,
  });
  if (result.error !== undefined) {
    throw new ToolError(tool, `could not run: ${result.error.message}`);
  }
  if (result.status !== 0) {
    const how = result.status === null ? `killed by ${result.signal ?? "a signal"}` : `exit code ${result.status}`;
    // The tool's own diagnostic first (the IR line and message), then the command that failed.
    throw new ToolError(tool, `failed (${how}) running ${[tool, ...args].join(" ")}`, printableDiagnostic(result.stderr, STDERR_LINES_IN_ERROR));
  }
  return result.stdout;
}

/** The directory holding package.json, found by walking up from this file. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "package.json"))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new ToolError("rootwalk", `no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

/** Where compiled objects and libraries are cached unless a caller says otherwise. */
export function defaultCacheDir(): string {
  return cacheSubdir("objects");
}

const versionCache = new Map<string, string>();

function toolVersion(tool: string): string {
  let text = versionCache.get(tool);
  if (text === undefined) {
    text = runTool(tool, ["--version"]);
    versionCache.set(tool, text);
  }
  return text;
}

/** SHA-256 over length-prefixed parts, so that ("ab","c") and ("a","bc") differ. */
export function cacheKey(parts: readonly (string | Uint8Array)[]): string {
  const hash = createHash("sha256");
  for (const part of parts) {
    const bytes = typeof part === "string" ? Buffer.from(part, "utf8") : part;
    hash.update(`${bytes.byteLength}:`);
    hash.update(bytes);
  }
  return hash.digest("hex");
}

export interface CompileOptions {
  /** Arguments for `opt` (e.g. `["-passes=rewrite-statepoints-for-gc"]`); omitted: no opt step. */
  optPasses?: readonly string[];
  /** Extra `llc` arguments (e.g. `["-O0"]`, `["-mattr=+avx"]`). `-filetype=obj` is always passed. */
  llcFlags?: readonly string[];
  /** Cache directory; default `objects/` in the rootwalk cache (src/toolchain/cache-dir.ts). */
  cacheDir?: string;
  /** Which LLVM; default the process's selection (activeLlvm). */
  llvm?: LlvmSelection;
}

/**
 * Compiles an LLVM IR file to an x86-64 ELF object and returns the object's path (in the cache).
 *
 * Pipeline: `opt <optPasses> -S in.ll -o tmp.ll` (only if optPasses is given), then
 * `llc -filetype=obj <llcFlags> tmp.ll -o out.o`. The object is reused while the source text,
 * the arguments and `llc --version` (and `opt --version`) are unchanged.
 */
export function compileToObject(source: string, options: CompileOptions = {}): string {
  const sourcePath = resolve(source);
  let sourceText: Buffer;
  try {
    sourceText = readFileSync(sourcePath);
  } catch (error) {
    throw new InvalidArgumentError("source", sourcePath, `a readable .ll file (${(error as Error).message})`);
  }
  refuseBinarySource(sourcePath, sourceText);
  const optArgs = options.optPasses === undefined ? undefined : [...options.optPasses];
  const llcArgs = [...(options.llcFlags ?? [])];
  const llvm = options.llvm ?? activeLlvm();
  const llc = findLlvmTool("llc", llvm);
  const opt = optArgs === undefined ? undefined : findLlvmTool("opt", llvm);
  const key = cacheKey([
    "compileToObject/v1",
    sourceText,
    optArgs === undefined ? "<no opt>" : JSON.stringify(optArgs),
    JSON.stringify(llcArgs),
    toolVersion(llc),
    opt === undefined ? "" : toolVersion(opt),
  ]);
  const objectPath = join(resolve(options.cacheDir ?? defaultCacheDir()), `${key}.o`);
  try {
    return cachedArtifact({
      path: objectPath,
      what: "object",
      build: (output, scratch) => {
        let llcInput = sourcePath;
        if (opt !== undefined && optArgs !== undefined) {
          llcInput = join(scratch, "optimized.ll");
          runTool(opt, [...optArgs, "-S", sourcePath, "-o", llcInput]);
        }
        runTool(llc, ["-filetype=obj", ...llcArgs, llcInput, "-o", output]);
      },
    });
  } catch (error) {
    throw explainOpaquePointers(error, llvm);
  }
}

const ELF_MAGIC = [0x7f, 0x45, 0x4c, 0x46] as const;
const BITCODE_MAGIC = [0x42, 0x43, 0xc0, 0xde] as const; // "BC" 0xC0DE
const BITCODE_WRAPPER_MAGIC = [0xde, 0xc0, 0x17, 0x0b] as const; // 0x0B17C0DE, little-endian
/** How far into a source to look for a zero byte (LLVM IR text never holds one). */
const BINARY_SNIFF_BYTES = 64 * 1024;

function startsWith(bytes: Uint8Array, magic: readonly number[]): boolean {
  return bytes.length >= magic.length && magic.every((b, i) => bytes[i] === b);
}

/**
 * opt and llc echo the offending source line of a file they cannot parse; for a binary file given
 * as a program (`rootwalk compile /bin/ls`) that line is the file's bytes. Refuse such a file
 * before running them, in one line that says what it is and never shows its contents. LLVM
 * bitcode (.bc, raw or wrapped) is binary too, and opt and llc read it: it passes.
 */
function refuseBinarySource(path: string, bytes: Uint8Array): void {
  if (startsWith(bytes, BITCODE_MAGIC) || startsWith(bytes, BITCODE_WRAPPER_MAGIC)) return;
  const expected = "LLVM IR (a .ll text file, or .bc bitcode)";
  if (startsWith(bytes, ELF_MAGIC))
    throw new InvalidArgumentError("source", path, `${expected}; this is an ELF file (an object, library or executable), not IR`);
  const zero = bytes.subarray(0, BINARY_SNIFF_BYTES).indexOf(0);
  if (zero >= 0) throw new InvalidArgumentError("source", path, `${expected}; this is binary data (a zero byte at offset ${zero})`);
}

/**
 * LLVM before 17 stops at the first `ptr` with "expected type" (after a warning about
 * -opaque-pointers mode): say which LLVM ran and how to choose another, on the first line.
 */
function explainOpaquePointers(error: unknown, llvm: LlvmSelection): unknown {
  if (!(error instanceof ToolError) || hasOpaquePointersOnly(llvm) || !/ptr type is only supported in -opaque-pointers mode/.test(error.message)) {
    return error;
  }
  return new ToolError(
    error.tool,
    `opaque-pointer IR (ptr) needs LLVM ${FIRST_OPAQUE_POINTER_MAJOR} or newer, and LLVM ${llvm.version} was chosen (${llvm.chosenBy}); ` +
      `choose another with ROOTWALK_LLVM or --llvm, or write typed pointers:\n${error.message}`,
  );
}

export interface LinkOptions {
  /** Cache directory; default `objects/` in the rootwalk cache (src/toolchain/cache-dir.ts). */
  cacheDir?: string;
  /** Extra gcc arguments (libraries, `-Wl,...`). */
  extraFlags?: readonly string[];
}

/**
 * Links objects into a shared library with `gcc -shared` and returns its path (in the cache,
 * keyed by the objects' bytes, the flags and gcc's version).
 *
 * `.llvm_stackmaps` is a read-only section holding absolute function addresses, so a shared
 * object needs text relocations for it; `-Wl,-z,notext` tells the linker that is intended
 * (otherwise GNU ld warns, and lld refuses).
 */
export function linkSharedLibrary(objects: readonly string[], options: LinkOptions = {}): string {
  if (objects.length === 0) {
    throw new InvalidArgumentError("objects", "an empty list", "at least one object file");
  }
  const objectPaths = objects.map((object) => resolve(object));
  const contents = objectPaths.map((path) => {
    try {
      return readFileSync(path);
    } catch (error) {
      throw new InvalidArgumentError("object", path, `a readable object file (${(error as Error).message})`);
    }
  });
  const flags = ["-Wl,-z,notext", ...(options.extraFlags ?? [])];
  const gcc = "gcc";
  const key = cacheKey(["linkSharedLibrary/v1", ...contents, JSON.stringify(flags), toolVersion(gcc)]);
  return cachedArtifact({
    path: join(resolve(options.cacheDir ?? defaultCacheDir()), `${key}.so`),
    what: "shared library",
    build: (output) => void runTool(gcc, ["-shared", "-o", output, ...objectPaths, ...flags]),
  });
}

/**
 * Writes `data` to `path` atomically: to a temporary name next to it, created exclusively (never
 * through a link someone placed there), then renamed into place.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    writeFileSync(temporary, data, { flag: "wx" });
    renameSync(temporary, path);
  } finally {
    rmSync(temporary, { force: true });
  }
}
