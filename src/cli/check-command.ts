import type { Architecture } from "../arch/architecture.js";
import { parseTargetOption } from "../arch/target-option.js";
import { InvalidArgumentError, RootwalkError, withContext } from "../errors.js";
import { programInputKind } from "../native/program-input.js";
import type { CheckFinding } from "../check/finding-kinds.js";
import { findingLine, formatCheckJson, formatCheckText, type CheckResult } from "../check/check-report.js";
import { COMMAND_USAGE } from "./command-usage.js";
import { refuseSpecialFile } from "../loader/input-file.js";
import { parseOptions } from "./options.js";
import type { LlvmSelection } from "../toolchain/llvm-selection.js";

/**
 * `rootwalk check PROGRAM.ll|.bc... | PROGRAM.o|.so [--collects NAME,...] [--generational] [--target x86-64|aarch64] [--json] [--llvm VERSION]`
 * (docs/cli.md "rootwalk check"). IR files are one program, checked together; each binary is checked alone.
 * Exit 0 when nothing is found, 1 with findings (and 1 with a one-line error for input it cannot
 * check: unreadable IR, IR already rewritten by rewrite-statepoints-for-gc).
 */

export interface CheckCommandOptions {
  collects: readonly string[];
  json: boolean;
  /** `--target`: the machine the IR is checked for (opt -mtriple). */
  target?: Architecture;
  /** `--generational`: the program is meant to run generationally; also report missing-write-barrier. */
  generational?: boolean;
  /** `--llvm`'s selection (else the process's: ROOTWALK_LLVM, newest installed). */
  llvm?: LlvmSelection;
}

/** What the IR check is told besides the names that collect (the same for check, compile and run). */
export interface IrCheckRequest {
  /** The program runs under `--generational`: its stores into GC objects need gc_write_barrier. */
  generational?: boolean;
  /** `--llvm`'s selection (else the process's: ROOTWALK_LLVM, newest installed). */
  llvm?: LlvmSelection;
}

export function parseCollects(values: readonly string[]): string[] {
  return values.flatMap((v) => v.split(",")).map((name) => name.trim());
}

/** Checks `programs` (IR together, each binary alone; a binary's check has no --generational rule). */
export async function checkPrograms(
  programs: readonly string[],
  collects: readonly string[],
  target?: Architecture,
  request: IrCheckRequest = {},
): Promise<CheckResult> {
  const withLlvm = request.llvm !== undefined ? { llvm: request.llvm } : {};
  if (programs.length === 0)
    throw new InvalidArgumentError("check", "no program", `at least one PROGRAM.ll, .bc, .o or .so (${COMMAND_USAGE["check"]!.usage})`);
  const kinds = programs.map((program) => {
    try {
      return programInputKind(program);
    } catch (error) {
      // A truncated ELF header is reported by the ELF reader, which does not know the file.
      throw error instanceof RootwalkError && !error.message.includes(program) ? withContext(error, program) : error;
    }
  });
  const sources = programs.filter((_, k) => kinds[k] === "source");
  const binaries = programs.filter((_, k) => kinds[k] !== "source");
  // Machine code does not show which stores a barrier follows: the rule is the IR's only.
  if (request.generational === true && sources.length === 0)
    throw new InvalidArgumentError(
      "--generational",
      `only binaries (${binaries.join(", ")})`,
      "the program's IR (.ll or .bc): the write barrier rule is checked in the IR",
    );
  const findings: CheckFinding[] = [];
  const checked: string[] = [];
  if (sources.length > 0) {
    const { checkIrProgram } = await import("../check/ir-check.js");
    findings.push(
      ...checkIrProgram(sources, {
        collects,
        ...withLlvm,
        ...(target !== undefined ? { target } : {}),
        ...(request.generational === true ? { generational: true } : {}),
      }),
    );
    checked.push(sources.join(" + "));
  }
  if (binaries.length > 0) {
    const { checkBinary } = await import("../check/binary-check.js");
    for (const binary of binaries) findings.push(...checkBinary(binary, { collects, ...withLlvm }));
    checked.push(...binaries);
  }
  return { programs: checked, findings, binary: binaries.length > 0 };
}

export async function checkCommand(programs: readonly string[], options: CheckCommandOptions, io: { stdout: (t: string) => void }): Promise<number> {
  const result = await checkPrograms(programs, options.collects, options.target, {
    generational: options.generational === true,
    ...(options.llvm !== undefined ? { llvm: options.llvm } : {}),
  });
  io.stdout(options.json ? formatCheckJson(result) : formatCheckText(result));
  return result.findings.length > 0 ? 1 : 0;
}

/**
 * What `compile` and `run` do before building: check the IR sources, print each finding as a
 * warning on stderr, and say whether the build may go on (not with findings under --strict-check).
 * `request.generational`: the program will run under --generational (run passes its option), so
 * the check also reports missing-write-barrier.
 */
export async function checkBeforeBuild(
  sources: readonly string[],
  strict: boolean,
  stderr: (t: string) => void,
  prefix: string,
  target?: Architecture,
  request: IrCheckRequest = {},
): Promise<boolean> {
  if (sources.length === 0) return true;
  let result: CheckResult;
  try {
    result = await checkPrograms(sources, [], target, request);
  } catch (error) {
    const { RewrittenIrError } = await import("../toolchain/check-plugin.js");
    if (error instanceof RewrittenIrError) {
      stderr(`${prefix}: warning: not checked: ${error.message.split("\n")[0]}\n`);
      if (strict) stderr(`${prefix}: --strict-check and the program could not be checked: not building\n`);
      return !strict;
    }
    // Input the check cannot read: the build that follows refuses it, in its own words.
    if (error instanceof RootwalkError) return true;
    throw error;
  }
  for (const f of result.findings) stderr(`${prefix}: warning: ${findingLine(f)} (rootwalk check explains; --no-check skips the check)\n`);
  if (strict && result.findings.length > 0) {
    stderr(`${prefix}: ${result.findings.length} check finding${result.findings.length === 1 ? "" : "s"} and --strict-check: not building\n`);
    return false;
  }
  return true;
}

/** `rootwalk check PROGRAM... [--collects NAME,...]... [--generational] [--json] [--llvm VERSION]`. */
export async function checkCli(args: readonly string[], io: { stdout: (t: string) => void }): Promise<number> {
  const o = parseOptions(COMMAND_USAGE["check"]!.options, args);
  for (const path of o.positional) refuseSpecialFile(path, "a program file (.ll, .bc, .o or .so)");
  const { activeLlvm } = await import("../toolchain/llvm-selection.js");
  const llvm = activeLlvm(o.value("--llvm"));
  const target = o.has("--target") ? { target: parseTargetOption(o.value("--target")!) } : {};
  const options = { collects: parseCollects(o.values("--collects")), json: o.has("--json"), generational: o.has("--generational"), llvm, ...target };
  return checkCommand(o.positional, options, io);
}
