import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCheckPlugin, runReadingEitherPointers, type IrFinding, type ModuleFacts } from "../toolchain/check-plugin.js";
import { findLlvmTool } from "../toolchain/llvm-toolchain.js";
import { activeLlvm, type LlvmSelection } from "../toolchain/llvm-selection.js";
import type { Architecture } from "../arch/architecture.js";
import type { CheckFinding, FindingKind } from "./finding-kinds.js";

/**
 * `rootwalk check` on LLVM IR: the program's modules (linked into one with llvm-link when there are
 * several, so that a call into another module is seen to collect), analysed by the check plugin,
 * and the gc_init rule decided over the whole program: it applies to a program that defines
 * rw_main (a module without it is a library that another module initialises).
 */
export interface IrCheckOptions {
  collects?: readonly string[];
  llvm?: LlvmSelection;
  /** The machine the IR is checked for (opt -mtriple); default: the IR's own triple. */
  target?: Architecture;
  /**
   * The program is meant to run under `--generational`: also report missing-write-barrier (a store
   * of a GC pointer into a GC object with no gc_write_barrier of it before the next safepoint).
   */
  generational?: boolean;
}

export function checkIrProgram(files: readonly string[], options: IrCheckOptions = {}): CheckFinding[] {
  const llvm = options.llvm ?? activeLlvm();
  const label = files.join(" + ");
  if (files.length === 1) return findingsOf(files[0]!, label, options, llvm);
  const dir = mkdtempSync(join(tmpdir(), "rootwalk-check-"));
  try {
    const linked = join(dir, "program.bc");
    runReadingEitherPointers(findLlvmTool("llvm-link", llvm), [...files, "-o", linked], llvm);
    return findingsOf(linked, label, options, llvm);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function findingsOf(irPath: string, label: string, options: IrCheckOptions, llvm: LlvmSelection): CheckFinding[] {
  const report = runCheckPlugin(irPath, {
    llvm,
    ...(options.collects ? { collects: options.collects } : {}),
    ...(options.target ? { target: options.target } : {}),
    ...(options.generational === true ? { generational: true } : {}),
  });
  const findings = report.findings.map((f) => fromPlugin(f, label));
  const missingInit = missingGcInit(report.facts, label);
  if (missingInit !== undefined) findings.push(missingInit);
  return findings;
}

function fromPlugin(f: IrFinding, file: string): CheckFinding {
  const store = f.stored !== undefined && f.field !== undefined ? { store: { stored: f.stored, field: f.field } } : {};
  return { kind: f.kind as FindingKind, file, function: f.function, where: f.block, line: f.line, value: f.value, call: f.call, ...store };
}

function missingGcInit(facts: ModuleFacts, file: string): CheckFinding | undefined {
  if (!facts.definesMain || facts.callsInit || facts.allocatesIn === null) return undefined;
  return { kind: "missing-gc-init", file, function: facts.allocatesIn, where: "", line: null, value: null, call: "no call of @gc_init in the program" };
}
