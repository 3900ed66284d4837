import { join } from "node:path";
import { compileProgram } from "../toolchain/compile-program.js";
import { repoRoot } from "../toolchain/llvm-toolchain.js";
import type { CliIo } from "./main.js";
import { dumpFiles } from "./dump-command.js";

/**
 * `rootwalk demo` (what `npm start` runs): compiles the bundled statepoint example the way
 * `rootwalk compile --statepoint` will (RewriteStatepointsForGC, then llc -O2 with default
 * options) and prints its stack maps, so a newcomer sees pushed-argument call sites, deopt state,
 * a derived pointer and a frame-pointer function decoded. Until the native runtime exists this is
 * the whole demo.
 */
export async function runDemo(io: CliIo): Promise<void> {
  const source = join(repoRoot(), "src", "demo", "demo-statepoints.ll");
  io.stdout(`rootwalk demo: compiling ${source}\n  opt -passes=rewrite-statepoints-for-gc -spp-rematerialization-threshold=0, llc -O2\n`);
  const object = await compileProgram(source, { mode: "statepoint", optFlags: ["-spp-rematerialization-threshold=0"] });
  io.stdout(`  -> ${object}\n\n`);
  io.stdout(dumpFiles([object], "text"));
}
