import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ToolError } from "../errors.js";
import { cacheKey, compileToObject, repoRoot, runTool } from "./llvm-toolchain.js";
import { cachedArtifact } from "./cache-artifact.js";
import { cacheSubdir } from "./cache-dir.js";
import { activeLlvm, versionText, type LlvmSelection } from "./llvm-selection.js";

/**
 * Building and using the `plimmix` LLVM plugin (src/plimmix-plugin/plimmix-gc.cpp): a gcroot
 * GCStrategy plus a printer that writes the `_GC_MAP_` v1 stack map into each object's `.data`.
 *
 *   const object = compilePlimmix("prog.ll", { llcFlags: ["-O2"] });
 *
 * The plugin is built once per (sources, LLVM version, compiler version, flags) and cached under
 * `.cache/plimmix/`; objects are cached by compileToObject, whose key includes the `-load=<plugin>`
 * argument and so the plugin's own key (it is part of the plugin's file name).
 */

/**
 * What tells one of rootwalk's LLVM plugins from another (plimmix here, the `rootwalk check` pass
 * in check-plugin.ts): all are built and cached by buildLlvmPlugin.
 */
export interface LlvmPluginSpec {
  /** File-name stem of the `.so` and the tool named in errors, e.g. "plimmix-gc". */
  name: string;
  /** Where the C++ sources live, relative to the repository root. */
  sourceDir: readonly string[];
  /** A header every LLVM development install has and the plugin needs. */
  requiredHeader: string;
  /** Cache subdirectory (src/toolchain/cache-dir.ts). */
  cacheSubdir: string;
}

const PLIMMIX_PLUGIN: LlvmPluginSpec = {
  name: "plimmix-gc",
  sourceDir: ["src", "plimmix-plugin"],
  requiredHeader: join("llvm", "CodeGen", "GCMetadataPrinter.h"),
  cacheSubdir: "plimmix",
};

/**
 * Compiler flags besides `llvm-config --cxxflags`. `-fno-rtti`: libLLVM is built without RTTI,
 * so a GCStrategy subclass compiled with it would reference typeinfo symbols that do not exist.
 */
const PLUGIN_CXX_FLAGS = ["-shared", "-fPIC", "-O2", "-fno-rtti", "-Wall", "-Wextra"] as const;

const CXX = "g++";

function defaultPluginCacheDir(): string {
  return cacheSubdir(PLIMMIX_PLUGIN.cacheSubdir);
}

/** `llvm-config` of the selected LLVM (its `--version` prints just "19.1.7"). */
function findLlvmConfig(llvm: LlvmSelection): { command: string; version: string } {
  const command = llvm.tool("llvm-config");
  return { command, version: runTool(command, ["--version"]).trim() };
}

/** `llvm-config --cxxflags`, with `-I<dir>` turned into `-isystem <dir>` (no warnings from LLVM's headers). */
function llvmCxxFlags(llvmConfig: string, major: number, requiredHeader: string): string[] {
  const includeDir = runTool(llvmConfig, ["--includedir"]).trim();
  const header = join(includeDir, requiredHeader);
  if (!existsSync(header)) {
    throw new ToolError(
      "llvm-config",
      `LLVM ${major} development headers are missing (no ${header}); ` + `install them with: apt-get install llvm-${major}-dev`,
    );
  }
  const flags: string[] = [];
  for (const flag of runTool(llvmConfig, ["--cxxflags"]).trim().split(/\s+/)) {
    if (flag === "") continue;
    if (flag.startsWith("-I")) flags.push("-isystem", flag.slice(2));
    else flags.push(flag);
  }
  return flags;
}

function compilerVersion(): string {
  const version = versionText(CXX);
  if (version === undefined) {
    throw new ToolError(CXX, `cannot run ${CXX} --version; install a C++ compiler with: apt-get install g++`);
  }
  return version;
}

interface PluginSources {
  dir: string;
  /** File names (sorted) of every .cpp/.h file: all of them go into the cache key. */
  files: string[];
  /** The translation units to compile. */
  units: string[];
}

function pluginSources(spec: LlvmPluginSpec): PluginSources {
  const dir = join(repoRoot(), ...spec.sourceDir);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    throw new ToolError(spec.name, `cannot read the plugin sources in ${dir}: ${(error as Error).message}`);
  }
  const files = names.filter((name) => /\.(cpp|h)$/.test(name)).sort();
  const units = files.filter((name) => name.endsWith(".cpp"));
  if (units.length === 0) throw new ToolError(spec.name, `no .cpp source in ${dir}`);
  return { dir, files, units };
}

export interface BuildPlimmixPluginOptions {
  /** Where the `.so` is cached; default `<repo root>/.cache/<spec.cacheSubdir>/`. */
  cacheDir?: string;
  /** Which LLVM to build against; default the process's selection (activeLlvm). */
  llvm?: LlvmSelection;
}

/**
 * Builds the plimmix plugin (if not cached) and returns the absolute path of the `.so`, ready
 * for `llc -load=<path>`. Throws a ToolError if g++, the selected llvm-config or its headers are
 * missing, or if the compiler fails (with its first error lines).
 */
export function buildPlimmixPlugin(options: BuildPlimmixPluginOptions = {}): string {
  return buildLlvmPlugin(PLIMMIX_PLUGIN, options);
}

/** Builds (if not cached) the plugin `spec` describes; see buildPlimmixPlugin. */
export function buildLlvmPlugin(spec: LlvmPluginSpec, options: BuildPlimmixPluginOptions = {}): string {
  const sources = pluginSources(spec);
  const cxxVersion = compilerVersion();
  const llvm = options.llvm ?? activeLlvm();
  const llvmConfig = findLlvmConfig(llvm);
  const llvmFlags = llvmCxxFlags(llvmConfig.command, llvm.major, spec.requiredHeader);
  const flags = [...PLUGIN_CXX_FLAGS, ...llvmFlags];
  const key = cacheKey([
    `buildLlvmPlugin/${spec.name}/v1`,
    ...sources.files.flatMap((name) => [name, readFileSync(join(sources.dir, name))]),
    llvmConfig.version,
    cxxVersion,
    JSON.stringify(flags),
  ]);
  const cacheDir = resolve(options.cacheDir ?? cacheSubdir(spec.cacheSubdir));
  return cachedArtifact({
    path: join(cacheDir, `${spec.name}-llvm${llvm.major}-${key}.so`),
    what: `the ${spec.name} plugin for LLVM ${llvm.major}`,
    announceBuild: true,
    build: (output) => void runTool(CXX, [...flags, ...sources.units.map((name) => join(sources.dir, name)), "-o", output]),
  });
}

export interface CompilePlimmixOptions {
  /** Extra llc flags after `-load=<plugin>` (e.g. `["-O2"]`); `-filetype=obj` is always passed. */
  llcFlags?: readonly string[];
  /** Cache directory for the object; default `<repo root>/.cache/plimmix/objects/`. */
  cacheDir?: string;
  /** Which LLVM; default the process's selection (activeLlvm). */
  llvm?: LlvmSelection;
}

/**
 * Compiles a `.ll` file whose functions use `gc "plimmix"` with llc and the plimmix plugin, and
 * returns the object's path (cached). The object holds the module's `_GC_MAP_<source file name>`.
 */
export function compilePlimmix(llPath: string, options: CompilePlimmixOptions = {}): string {
  const llvm = options.llvm ?? activeLlvm();
  const plugin = buildPlimmixPlugin({ llvm });
  return compileToObject(llPath, {
    llvm,
    llcFlags: [`-load=${plugin}`, ...(options.llcFlags ?? [])],
    cacheDir: options.cacheDir ?? join(defaultPluginCacheDir(), "objects"),
  });
}
