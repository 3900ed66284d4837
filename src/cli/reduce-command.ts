import { readFileSync, writeFileSync } from "node:fs";
import { InvalidArgumentError } from "../errors.js";
import { classify, describeSignature, sameFailure, type FailingCommand, type FailureSignature } from "./reduce/failure-signature.js";
import { programNeeds, type ProgramNeeds } from "./reduce/program-needs.js";
import { lineCount } from "./reduce/reduce-spec.js";
import { COMMAND_USAGE } from "./command-usage.js";
import { parseOptions } from "./options.js";
import { parseDurationMs } from "./parse-duration.js";
import type { CliIo } from "./process-io.js";
import { refuseSpecialFile } from "../loader/input-file.js";

/**
 * `rootwalk reduce PROGRAM.ll -o SMALL.ll [--timeout SECONDS] -- check|run OPTION...`
 * (docs/cli.md "rootwalk reduce"): names the failure the program shows under that check or run,
 * reduces it with llvm-reduce using that same failure as the interestingness test, writes the
 * smallest program that still fails the same way. Exit 0 when written; 1 (one line) for a
 * program that does not fail, or bad usage; 130 on Ctrl-C (the private folder removed).
 */

/** Default bound on the whole reduction, in seconds. */
const DEFAULT_TIMEOUT_S = 600;
/** Bound on the first `run`; each candidate's run gets 5x what the first took, plus 10 s. */
const FIRST_RUN_TIMEOUT_MS = 300_000;

interface ReduceRequest {
  program: string;
  output: string;
  timeoutMs: number;
  failing: FailingCommand;
}

/** Splits `... -- check|run OPTIONS` and checks each side with its own option table. */
export function parseReduceArguments(args: readonly string[]): ReduceRequest {
  const usage = COMMAND_USAGE["reduce"]!.usage;
  const split = args.indexOf("--");
  if (split < 0) throw new InvalidArgumentError("reduce", "no -- check|run OPTION...", `how the program fails, after -- (${usage})`);
  const o = parseOptions(COMMAND_USAGE["reduce"]!.options, args.slice(0, split));
  const [command, ...options] = args.slice(split + 1);
  if (command !== "check" && command !== "run")
    throw new InvalidArgumentError("reduce", `-- ${command ?? "nothing"}`, "-- check OPTION... or -- run OPTION...");
  const failingOptions = parseOptions(COMMAND_USAGE[command]!.options, options);
  if (failingOptions.positional.length > 0)
    throw new InvalidArgumentError(`reduce -- ${command}`, failingOptions.positional.join(" "), "options only (the program is given once, before --)");
  if (o.positional.length !== 1 || !o.positional[0]!.endsWith(".ll"))
    throw new InvalidArgumentError("reduce", o.positional.length === 0 ? "no program" : o.positional.join(" "), `one PROGRAM.ll (${usage})`);
  const output = o.value("-o");
  if (output === undefined) throw new InvalidArgumentError("reduce", "no -o SMALL.ll", "the file to write the reduced program to");
  const timeoutMs = parseDurationMs(o.value("--timeout") ?? String(DEFAULT_TIMEOUT_S), "--timeout");
  return { program: o.positional[0]!, output, timeoutMs, failing: { command, options } };
}

/** The needs of the program and the failure it shows, or a one-line refusal (exit 1). */
async function firstRun(request: ReduceRequest, text: string): Promise<{ needs: ProgramNeeds; signature: FailureSignature; runMs: number }> {
  const needs = programNeeds(text);
  if ("missing" in needs)
    throw new InvalidArgumentError("reduce", `${request.program}: ${needs.missing}`, "a program rootwalk run can run (docs/writing-programs.md)");
  const started = Date.now();
  const result = await classify(request.program, request.failing, FIRST_RUN_TIMEOUT_MS);
  if ("noFailure" in result)
    throw new InvalidArgumentError(
      "reduce",
      `${request.program} does not fail under ${request.failing.command} (${result.noFailure})`,
      "a program that fails, to reduce",
    );
  return { needs, signature: result.failure, runMs: Date.now() - started };
}

export async function reduceCli(args: readonly string[], io: CliIo): Promise<number> {
  const request = parseReduceArguments(args);
  refuseSpecialFile(request.program, "a program file (.ll)");
  const { activeLlvm } = await import("../toolchain/llvm-selection.js");
  const failingLlvm = parseOptions(COMMAND_USAGE[request.failing.command]!.options, request.failing.options).value("--llvm");
  const llvm = activeLlvm(failingLlvm);
  const llvmReduce = llvm.tool("llvm-reduce");
  const text = readFileSync(request.program, "utf8");
  const { needs, signature, runMs } = await firstRun(request, text);
  const startLines = lineCount(text);
  io.stderr(`rootwalk reduce: ${request.program} (${startLines} lines) shows ${describeSignature(signature)}; reducing with ${llvmReduce}\n`);
  const { runLlvmReduce } = await import("./reduce/llvm-reduce-run.js");
  const spec = {
    failing: request.failing,
    signature,
    needs,
    llvmMajor: llvm.major,

    runTimeoutMs: 5 * runMs + 10_000,
  };
  const run = await runLlvmReduce(spec, {
    llvmReduce,
    llvmMajor: llvm.major,
    originalText: text,
    timeoutMs: request.timeoutMs,
    progressMs: 1000,
    stderr: io.stderr,
  });
  writeFileSync(request.output, run.text);
  const check = await classify(request.output, request.failing, spec.runTimeoutMs);
  if (!("failure" in check) || !sameFailure(check.failure, signature))
    throw new InvalidArgumentError(
      "reduce",
      `the reduced ${request.output} no longer shows ${describeSignature(signature)}`,
      "the failure kept (a bug in rootwalk reduce: please report it)",
    );
  const lines = lineCount(run.text);
  if (run.timedOut)
    io.stderr(`rootwalk reduce: the time bound (--timeout ${request.timeoutMs / 1000} s) ended the reduction; writing the smallest failing candidate so far\n`);
  io.stdout(
    `reduce: wrote ${request.output}: ${lines} lines, ${((100 * lines) / startLines).toFixed(1)}% of ${request.program}'s ${startLines} (${run.steps} tests); still shows ${describeSignature(signature)}\n`,
  );
  return 0;
}
