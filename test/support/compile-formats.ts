import { readFileSync } from "node:fs";
import { join } from "node:path";
import { cachedArtifact } from "../../src/toolchain/cache-artifact.js";
import { cacheKey, findLlvmTool, linkSharedLibrary, repoRoot, runTool } from "../../src/toolchain/llvm-toolchain.js";

/**
 * Builds the sources of test/ll/formats/ into objects cached under `.cache/formats/` (keyed by the
 * source bytes, the arguments and the tool's version, like src/toolchain/llvm-toolchain.ts).
 *
 * llc runs in test/ll/formats/ with the bare file name, because LLVM's OCaml printer names its symbols after
 * the module identifier, which is the path llc was given cut at its first '.':
 * `llc ocaml-basic.ll` gives `camlOcaml-basic__frametable`.
 */
export const FORMATS_LL_DIR = join(repoRoot(), "test", "ll", "formats");
export const FORMATS_CACHE_DIR = join(repoRoot(), ".cache", "formats");

function build(tool: string, source: string, args: readonly string[], suffix: string): string {
  const text = readFileSync(join(FORMATS_LL_DIR, source));
  const key = cacheKey(["test/formats/v1", tool, source, text, JSON.stringify(args), runTool(tool, ["--version"])]);
  return cachedArtifact({
    path: join(FORMATS_CACHE_DIR, `${key}${suffix}`),
    what: "test object",
    build: (output) => void runTool(tool, [...args, source, "-o", output], { cwd: FORMATS_LL_DIR }),
  });
}

/** `llc -O2 -filetype=obj <name>` in test/ll/formats/: the path of the object. */
export function compileFormatsLl(name: string, llcFlags: readonly string[] = ["-O2"]): string {
  return build(findLlvmTool("llc"), name, ["-filetype=obj", ...llcFlags], ".o");
}

/** `llvm-mc -filetype=obj -triple=x86_64-pc-linux-gnu <name>` in test/ll/formats/: the path of the object. */
export function assembleFormatsAsm(name: string): string {
  return build(findLlvmTool("llvm-mc"), name, ["-filetype=obj", "-triple=x86_64-pc-linux-gnu"], ".o");
}

/** `gcc -shared` of the objects, cached with the others. */
export function linkFormatsShared(objects: readonly string[]): string {
  return linkSharedLibrary(objects, { cacheDir: FORMATS_CACHE_DIR });
}
