import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { cacheSubdir } from "../../../src/toolchain/cache-dir.js";
import { cacheKey, compileToObject } from "../../../src/toolchain/llvm-toolchain.js";
import { irSource } from "../../support/ir-source.js";
import { run } from "../../support/gdb-compare.js";

/*
 * The program of deep.ll + deep.c + nocfi.c (see deep.c), and its cores. Every core is written
 * under `ulimit -s unlimited`, the legacy memory layout: the libraries map below the program, so
 * the first NT_FILE entry is libc, not the executable.
 */

const HERE = dirname(fileURLToPath(import.meta.url));

/** Builds the program once per content of its sources (cached). */
export function buildDeepProgram(): string {
  const object = compileToObject(irSource(join(HERE, "deep.ll")), {
    optPasses: ["-passes=rewrite-statepoints-for-gc"],
    llcFlags: ["-O2", "-max-registers-for-gc-values=4", "-fixup-allow-gcptr-in-csr"],
  });
  const sources = ["deep.c", "nocfi.c"].map((f) => join(HERE, f));
  const key = cacheKey(["deep-core", readFileSync(object), ...sources.map((f) => readFileSync(f))]).slice(0, 16);
  const dir = join(cacheSubdir("walker-core"), `deep-${key}`);
  mkdirSync(dir, { recursive: true });
  const program = join(dir, "deep-prog");
  if (!existsSync(program)) {
    run("gcc", ["-O1", "-c", sources[0]!, "-o", join(dir, "deep.o")]);
    run("gcc", ["-O1", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables", "-c", sources[1]!, "-o", join(dir, "nocfi.o")]);
    run("gcc", [join(dir, "deep.o"), join(dir, "nocfi.o"), object, "-Wl,-z,notext", "-o", program]);
  }
  return program;
}

/** Runs the program under gdb (legacy layout) to `breakAt` with `depth` C frames and writes `core`. */
export function gcoreUnlimitedStack(program: string, core: string, breakAt: string, depth: number): void {
  const env = { ...process.env, RW_CORE: core, RW_CORE_JSON: `${core}.gdb.json`, RW_BREAK: breakAt, RW_STARTI: "0" };
  const gdb = ["gdb", "-nx", "-batch", "-x", join(HERE, "gdb-core.py"), "--args", program, String(depth)];
  run("sh", ["-c", 'ulimit -s unlimited && exec "$@"', "sh", ...gdb], env);
  if (!existsSync(core)) throw new Error(`gdb wrote no core ${core}`);
}

/** What gdb reads in `core` for a C expression of type unsigned long. */
export function gdbValue(program: string, core: string, expression: string): number {
  const r = spawnSync(
    "gdb",
    ["-nx", "-batch", "-ex", "set debuginfod enabled off", "-ex", `printf "RW %lu\\n", (unsigned long)(${expression})`, program, core],
    { encoding: "utf8", timeout: 120_000 },
  );
  const line = r.stdout.split("\n").find((l) => l.startsWith("RW "));
  if (line === undefined) throw new Error(`gdb could not read ${expression}: ${r.stderr}`);
  return Number(line.slice(3));
}
