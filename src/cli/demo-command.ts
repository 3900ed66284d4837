import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { InvalidArgumentError, ToolError } from "../errors.js";
import { repoRoot } from "../toolchain/llvm-toolchain.js";
import { checkOutputPath } from "./output-path.js";
import { activeLlvm } from "../toolchain/llvm-selection.js";
import type { CliIo } from "./process-io.js";
import type { NativeRunResult } from "../native/native-runtime.js";
import { COMMAND_USAGE } from "./command-usage.js";
import { parseOptions } from "./options.js";

/**
 * `rootwalk demo` (what `npm start` runs): compiles the bundled example programs and runs them
 * with the native runtime and the collector. The workload (src/demo/demo-trees-*.ll): 3 mutator
 * threads building and checking binary trees while rw_main recurses 20,000 frames deep, each
 * frame keeping an object alive; once as statepoint code, once as plimmix (gcroot) code. Each run
 * collects at every 400th safepoint or allocation, evacuating every movable object, verifies the
 * heap after each collection, and must return the same result as the run without GC.
 */
interface Variant {
  name: string;
  source: string;
  flags: string[];
}

const VARIANTS: Variant[] = [
  { name: "statepoint", source: "demo-trees-statepoint.ll", flags: [] },
  { name: "plimmix", source: "demo-trees-plimmix.ll", flags: ["--plimmix"] },
];
export const DEMO_EXPECTED_RESULT = "200053367";

/** What `rootwalk run --json` prints. */
type RunJson = Pick<NativeRunResult, "result" | "collections" | "framesScanned" | "rootsRelocated" | "objectsMoved" | "maxPauseMs" | "verifyFailures">;

/** Each program runs in a child process: the runtime allows one program per process. */
function runChild(args: string[]): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  const entry = join(dirname(fileURLToPath(import.meta.url)), "run-entry.js");
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [entry, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr, ms: performance.now() - started }));
  });
}

/** Writes its heap maps (outputs, not cache) to `outDir`: where the user says, by default the current folder. */
export async function runDemo(io: CliIo, llvmRequest?: string, outDir = "."): Promise<void> {
  const llvm = activeLlvm(llvmRequest);
  // The children choose the same way (--llvm, else ROOTWALK_LLVM, which they inherit, else the
  // newest installed): the same command line gives them the same LLVM.
  const llvmArgs = llvmRequest !== undefined ? ["--llvm", llvmRequest] : [];
  const root = repoRoot();
  checkOutputPath(join(outDir, "rootwalk-demo-heap.svg"), "--out-dir");
  const rows: string[][] = [["program", "result", "collections", "frames scanned", "roots relocated", "objects moved", "max pause", "verify failures", "time"]];
  const svgs: string[] = [];
  io.stdout("rootwalk demo: 3 threads building binary trees + 20,000-deep recursion, collected by rootwalk\n");
  io.stdout(`LLVM ${llvm.version} (${llvm.chosenBy}; ROOTWALK_LLVM or --llvm choose another)\n\n`);
  for (const v of VARIANTS) {
    const source = join(root, "src", "demo", v.source);
    const svg = join(outDir, `rootwalk-demo-heap-${v.name}.svg`);
    io.stdout(`[${v.name}] compiling ${v.source} and running without GC (the reference result) ...\n`);
    const plain = await runChild([source, ...v.flags, ...llvmArgs, "--no-gc", "--json"]);
    if (plain.code !== 0) throw new ToolError("rootwalk run", `${v.name} --no-gc failed (exit ${plain.code}): ${plain.stderr.trim()}`);
    const reference = JSON.parse(plain.stdout) as RunJson;
    io.stdout(`[${v.name}] result ${reference.result}; now with the collector: --stress=400 --verify ...\n`);
    const collected = await runChild([source, ...v.flags, ...llvmArgs, "--stress=400", "--verify", "--json", "--svg", svg]);
    if (collected.code !== 0) throw new ToolError("rootwalk run", `${v.name} with the collector failed (exit ${collected.code}): ${collected.stderr.trim()}`);
    const r = JSON.parse(collected.stdout) as RunJson;
    const same = r.result === reference.result && r.result === DEMO_EXPECTED_RESULT;
    io.stdout(`[${v.name}] result ${r.result} (${same ? "the same" : "DIFFERENT"}), ${r.collections} collections in ${(collected.ms / 1000).toFixed(1)} s\n\n`);
    if (!same)
      throw new ToolError("rootwalk run", `${v.name}: result ${r.result} with the collector, ${reference.result} without, expected ${DEMO_EXPECTED_RESULT}`);
    rows.push([
      v.name,
      r.result,
      String(r.collections),
      String(r.framesScanned),
      String(r.rootsRelocated),
      String(r.objectsMoved),
      `${r.maxPauseMs.toFixed(2)} ms`,
      String(r.verifyFailures),
      `${(collected.ms / 1000).toFixed(1)} s`,
    ]);
    svgs.push(svg);
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  io.stdout(rows.map((row) => row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("  ")).join("\n") + "\n\n");
  io.stdout(`heap maps (open in a browser): ${svgs.join(", ")}\n`);
}

/** `rootwalk demo [--llvm VERSION] [--out-dir DIR]`. */
export async function demoCli(args: readonly string[], io: CliIo): Promise<number> {
  const o = parseOptions(COMMAND_USAGE["demo"]!.options, args);
  if (o.positional.length > 0) throw new InvalidArgumentError("demo", o.positional.join(" "), "no positional arguments");
  await runDemo(io, o.value("--llvm"), o.value("--out-dir") ?? ".");
  return 0;
}
