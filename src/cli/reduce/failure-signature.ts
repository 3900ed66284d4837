import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * The failure `rootwalk reduce` keeps: what one program does wrong, named so that a smaller
 * candidate can be told to fail the same way (docs/cli.md "rootwalk reduce"). The reducer's first
 * run and every interestingness test (src/cli/reduce-test-entry.ts) classify with these same
 * functions, so "the same failure" means the same thing in both.
 *
 *  - check: the first finding of `rootwalk check`: its kind, its function and the call that can
 *    collect it names (so a reduction keeps `@gc_collect`, not any call it could make of one);
 *  - verify: `run` exit 4, the first verify failure: where (root, field, object, ...), why (the
 *    reason up to its first ':', e.g. "not an object start") and, for a root, its frame's function;
 *  - fault: `run` exit 3, the function the fault was in (`... at rw_main+0x21 ...`) and where its
 *    address was: in the heap (a stale pointer into evacuated memory), the poison pattern, a
 *    stack's guard, near null, elsewhere; so a reduction that turns the stale pointer into a
 *    null dereference in the same function is not the same failure;
 *
 * A result that differs from --no-gc's is named but not kept: reductions drift from it to a
 * program returning an address, an `undef`, anything that differs between two runs for no fault
 * of the collector; such a program is refused with what its two results were.
 */
export type FailureSignature =
  | { readonly class: "check"; readonly kind: string; readonly function: string; readonly call: string }
  | { readonly class: "verify"; readonly kind: string; readonly reason: string; readonly function: string }
  | { readonly class: "fault"; readonly function: string; readonly address: FaultAddress };

/** Where a fault's address was (runtime-faults.c says it on stderr; the address is in the message). */
export type FaultAddress = "heap" | "poison-pattern" | "stack-guard" | "near-null" | "elsewhere";

function faultAddress(message: string, stderr: string): FaultAddress {
  if (/the fault address is in the heap/.test(stderr)) return "heap";
  if (/a stack overflow/.test(stderr)) return "stack-guard";
  const address = /fault address (0x[0-9a-f]+)/.exec(message)?.[1];
  if (address === undefined) return "elsewhere";
  if (BigInt(address) < 0x10000n) return "near-null";
  return /deadbeec/.test(address) ? "poison-pattern" : "elsewhere";
}

/** How the program is made to fail: `rootwalk check` or `rootwalk run`, with these options. */
export interface FailingCommand {
  readonly command: "check" | "run";
  /** The options after the command (never the program), as the user gave them. */
  readonly options: readonly string[];
}

/** What a classification found: a failure, or why the program does not fail (for the one line). */
export type Classification = { readonly failure: FailureSignature } | { readonly noFailure: string };

/** One line for a signature: "check finding integer-across-safepoint in @f12". */
export function describeSignature(s: FailureSignature): string {
  switch (s.class) {
    case "check":
      return `check finding ${s.kind} in @${s.function} (across ${s.call})`;
    case "verify":
      return `verify failure (exit 4) at a ${s.kind}${s.function === "" ? "" : ` in @${s.function}`}: ${s.reason}`;
    case "fault":
      return `fault (exit 3) in @${s.function}, its address ${s.address === "heap" ? "in the heap (a stale pointer)" : s.address}`;
  }
}

export function sameFailure(a: FailureSignature, b: FailureSignature): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Runs `rootwalk check` in this process (the caller has selected the LLVM) and names its first finding. */
export async function classifyByCheck(program: string, options: readonly string[]): Promise<Classification> {
  const { parseCollects, checkPrograms } = await import("../check-command.js");
  const { parseOptions } = await import("../options.js");
  const { COMMAND_USAGE } = await import("../command-usage.js");
  const o = parseOptions(COMMAND_USAGE["check"]!.options, options);
  const { parseTargetOption } = await import("../../arch/target-option.js");
  const target = o.has("--target") ? parseTargetOption(o.value("--target")!) : undefined;
  const result = await checkPrograms([program], parseCollects(o.values("--collects")), target, { generational: o.has("--generational") });
  const first = result.findings[0];
  if (first === undefined) return { noFailure: "rootwalk check finds nothing" };
  return { failure: { class: "check", kind: first.kind, function: first.function, call: first.call } };
}

/** The CLI's entry, run as a child for `run`: a fault or a hang there must not end the reducer. */
const MAIN_PATH = fileURLToPath(new URL("../main.js", import.meta.url));

/** One of `run --json`'s verifyFailureDetails (src/cli/verify-failures.ts), the fields read here. */
interface VerifyDetail {
  where?: { kind?: string; description?: string };
  reason?: string;
}

function verifySignature(detail: VerifyDetail | undefined): FailureSignature {
  const fn = /frame #\d+ ([A-Za-z_.$][\w.$-]*)\+0x/.exec(detail?.where?.description ?? "")?.[1] ?? "";
  return { class: "verify", kind: detail?.where?.kind ?? "?", reason: (detail?.reason ?? "?").split(":")[0]!, function: fn };
}

interface RunOutcome {
  exitCode: number | null;
  /** The JSON object `run --json` printed on stdout (undefined if none). */
  stderr: string;
  report: { result?: string; message?: string; verifyFailureDetails?: VerifyDetail[] } | undefined;
}

function runOnce(program: string, options: readonly string[], timeoutMs: number): RunOutcome {
  const r = spawnSync(process.execPath, [MAIN_PATH, "run", program, ...options, "--json"], {
    encoding: "utf8",
    timeout: timeoutMs,
    killSignal: "SIGKILL",
    maxBuffer: 64 * 1024 * 1024,
  });
  const line = r.stdout?.trim().split("\n").at(-1) ?? "";
  let report: RunOutcome["report"];
  try {
    report = line.startsWith("{") ? (JSON.parse(line) as RunOutcome["report"]) : undefined;
  } catch {
    report = undefined;
  }
  return { exitCode: r.status, report, stderr: r.stderr ?? "" };
}

/** The run options of the --no-gc run a result is compared with: the collector's own options left out. */
function noGcOptions(options: readonly string[]): string[] {
  return [...options.filter((o) => !/^--(stress|verify|poison)(=|$)/.test(o)), "--no-gc"];
}

/** Runs `rootwalk run PROGRAM OPTIONS --json` (bounded by timeoutMs) and names how it fails. */
export function classifyByRun(program: string, options: readonly string[], timeoutMs: number): Classification {
  const { exitCode, report, stderr } = runOnce(program, options, timeoutMs);
  if (exitCode === null) return { noFailure: `rootwalk run did not end within ${Math.round(timeoutMs / 1000)} s` };
  if (exitCode === 4) return { failure: verifySignature(report?.verifyFailureDetails?.[0]) };
  if (exitCode === 3) {
    const fn = /\bat ([A-Za-z_.$][\w.$-]*)\+0x[0-9a-f]+/.exec(report?.message ?? "")?.[1];
    if (fn === undefined) return { noFailure: `rootwalk run fails (exit 3) outside the program's functions: ${report?.message ?? "no report"}` };
    return { failure: { class: "fault", function: fn, address: faultAddress(report?.message ?? "", stderr) } };
  }
  if (exitCode !== 0) return { noFailure: `rootwalk run exits ${exitCode}: ${report?.message ?? "no report"}` };
  const reference = runOnce(program, noGcOptions(options), timeoutMs);
  if (reference.exitCode !== 0) return { noFailure: `rootwalk run --no-gc exits ${reference.exitCode ?? "by the time bound"}` };
  if (reference.report?.result === report?.result) return { noFailure: `rootwalk run succeeds with the --no-gc result (${report?.result ?? "none"})` };
  return {
    noFailure: `its result ${report?.result ?? "none"} differs from --no-gc's ${reference.report?.result ?? "none"}, a failure rootwalk reduce does not keep (a reduction drifts to any result made from an address); add --verify, or reduce a check finding`,
  };
}

export async function classify(program: string, failing: FailingCommand, runTimeoutMs: number): Promise<Classification> {
  return failing.command === "check" ? classifyByCheck(program, failing.options) : classifyByRun(program, failing.options, runTimeoutMs);
}
