import type { Architecture } from "../arch/architecture.js";
import { join } from "node:path";
import { InvalidArgumentError, ToolError } from "../errors.js";
import { findLlvmTool, runTool } from "./llvm-toolchain.js";
import { activeLlvm, hasOpaquePointersOnly, type LlvmSelection } from "./llvm-selection.js";
import { buildLlvmPlugin, type LlvmPluginSpec } from "./plimmix-plugin.js";

/**
 * Building and running the `rootwalk check` opt plugin (src/check-plugin/gc-check.cpp): a
 * new-pass-manager analysis that prints what it finds in a module, as its author wrote it, one
 * JSON object per line. Built and cached like the plimmix plugin (buildLlvmPlugin).
 */
const CHECK_PLUGIN: LlvmPluginSpec = {
  name: "gc-check",
  sourceDir: ["src", "check-plugin"],
  requiredHeader: join("llvm", "Passes", "PassPlugin.h"),
  cacheSubdir: "check",
};

const PASS_NAME = "rootwalk-check";

/** One mistake as the plugin reports it (docs/cli.md "rootwalk check" says what each kind means). */
export interface IrFinding {
  kind: string;
  function: string;
  /** The function's GC strategy (`gc "..."`), or null. */
  strategy: string | null;
  /** The block holding the call, as LLVM spells it (`%entry`, `%5`). */
  block: string;
  /** `file:line` of the call from debug info, or null. */
  line: string | null;
  /** The value (or stack slot) held across the call, as LLVM spells it; missing-write-barrier: the object stored into. */
  value: string;
  /** The call that can collect: `@name` or `indirect call of %f`; missing-write-barrier: the first one the store reaches unbarriered, or `return`. */
  call: string;
  /** missing-write-barrier only: the GC pointer stored and the field's address (`%item`, `%slot`). */
  stored?: string;
  field?: string;
}

/** What the gc_init rule needs from the module (decided by the caller over the whole program). */
export interface ModuleFacts {
  definesMain: boolean;
  callsInit: boolean;
  /** The first function that calls a runtime entry point that can collect, or null. */
  allocatesIn: string | null;
}

export interface PluginReport {
  findings: IrFinding[];
  facts: ModuleFacts;
}

/** The IR went through rewrite-statepoints-for-gc already: there is nothing left to check. */
export class RewrittenIrError extends InvalidArgumentError {}

export interface RunCheckPluginOptions {
  /** Functions the user says can collect, besides the runtime's (`--collects`). */
  collects?: readonly string[];
  llvm?: LlvmSelection;
  /** The machine the IR is read for: opt's `-mtriple` (`--target`); default the IR's own. */
  target?: Architecture;
  /** `check --generational`: also report missing-write-barrier (the pass rootwalk-check-generational). */
  generational?: boolean;
}

/** Characters a name cannot hold: they end a pass parameter or the pipeline text. */
const PIPELINE_SPECIALS = /[;,()<>\s]/;

/**
 * Runs the plugin on one IR file (.ll or .bc). Throws a ToolError when opt cannot read the file
 * and an InvalidArgumentError when the IR went through rewrite-statepoints-for-gc already (its
 * calls are gc.statepoint intrinsics then: nothing would be found, which is not "clean").
 */
export function runCheckPlugin(irPath: string, options: RunCheckPluginOptions = {}): PluginReport {
  const llvm = options.llvm ?? activeLlvm();
  const collects = options.collects ?? [];
  for (const name of collects) {
    if (name === "" || PIPELINE_SPECIALS.test(name))
      throw new InvalidArgumentError("--collects", JSON.stringify(name), "function names without ; , ( ) < > or spaces");
  }
  const plugin = buildLlvmPlugin(CHECK_PLUGIN, { llvm });
  const name = options.generational === true ? `${PASS_NAME}-generational` : PASS_NAME;
  const pass = collects.length === 0 ? name : `${name}<${collects.join(";")}>`;
  let stdout: string;
  try {
    const triple = options.target === undefined ? [] : [`-mtriple=${options.target.linuxTriple}`];
    stdout = runReadingEitherPointers(
      findLlvmTool("opt", llvm),
      [...triple, `-load-pass-plugin=${plugin}`, `-passes=${pass}`, "-disable-output", irPath],
      llvm,
    );
  } catch (error) {
    throw unreadableIr(error, irPath);
  }
  return parsePluginOutput(stdout, irPath);
}

/**
 * Runs an LLVM tool that reads IR, on typed or opaque-pointer IR alike: LLVM before 17 reads
 * `ptr` only with -opaque-pointers, so it gets a second try with it when the first stops there.
 * (Not always with it: LLVM 14 with -opaque-pointers crashes on some typed IR, e.g. statepoints.)
 */
export function runReadingEitherPointers(tool: string, args: readonly string[], llvm: LlvmSelection): string {
  try {
    return runTool(tool, args);
  } catch (error) {
    if (hasOpaquePointersOnly(llvm) || !(error instanceof ToolError) || !/only supported in -opaque-pointers mode/.test(error.message)) throw error;
    return runTool(tool, ["-opaque-pointers", ...args]);
  }
}

/** opt's parse error, in one line: its first `error:` line, without the tool's name. */
function unreadableIr(error: unknown, irPath: string): unknown {
  if (!(error instanceof ToolError)) return error;
  const lines = error.message.split("\n");
  const diagnostic = lines.find((line) => line.includes("error:")) ?? lines[0]!;
  return new InvalidArgumentError(
    "program",
    `${irPath}, which opt cannot read (${diagnostic.replace(/^\S*opt[^:]*: /, "").trim()})`,
    "LLVM IR (.ll text or .bc bitcode)",
  );
}

function parsePluginOutput(stdout: string, irPath: string): PluginReport {
  const findings: IrFinding[] = [];
  let facts: ModuleFacts | undefined;
  for (const line of stdout.split("\n")) {
    if (line === "") continue;
    const record = JSON.parse(line) as { finding?: IrFinding; module?: ModuleFacts; error?: string; function?: string };
    if (record.error === "rewritten") {
      throw new RewrittenIrError(
        "program",
        `${irPath}: gc.statepoint calls (in @${record.function ?? "?"})`,
        "IR as written, before rewrite-statepoints-for-gc: check the source, not the rewritten module",
      );
    }
    if (record.finding !== undefined) findings.push(record.finding);
    if (record.module !== undefined) facts = record.module;
  }
  if (facts === undefined) throw new ToolError(PASS_NAME, `the check plugin printed no module summary for ${irPath}`);
  return { findings, facts };
}
