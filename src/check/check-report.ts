import { FINDING_KINDS, FINDING_KIND_NAMES, type CheckFinding } from "./finding-kinds.js";

/**
 * How `rootwalk check` prints what it found (text and --json), and the one-line form `compile`
 * and `run` print as warnings. The texts of each kind live in finding-kinds.ts.
 */
export interface CheckResult {
  /** The programs checked (several IR modules checked together are one program). */
  programs: string[];
  findings: CheckFinding[];
  /** A binary was checked: the report says that it cannot see liveness. */
  binary: boolean;
}

export const BINARY_LIMIT_NOTE =
  "note: a binary shows calls and safepoint records, not which values are live: a helper that calls the collector holding no GC pointer is reported too, and a value kept across a call is not seen (check the IR for that)";

/** `FILE: KIND in @f, %block (file:12): %v across the call of @gc_alloc`. */
export function findingLine(f: CheckFinding): string {
  const where = f.where === "" ? "" : f.where.startsWith("+") ? f.where : `, ${f.where}`;
  const line = f.line === null ? "" : ` (${f.line})`;
  const what =
    f.kind === "missing-gc-init"
      ? `allocates or collects (first in @${f.function}) and never calls @gc_init`
      : f.kind === "call-without-safepoint"
        ? `the call of ${f.call} has no safepoint record`
        : f.kind === "interior-pointer-argument"
          ? `${f.value} is passed to ${f.call}`
          : f.kind === "interior-pointer-in-gcroot"
            ? `${f.value} is stored into the gcroot slot ${f.call}`
            : f.kind === "missing-write-barrier"
              ? `${f.store?.stored ?? "a GC pointer"} is stored into ${f.value}${f.store ? ` (at ${f.store.field})` : ""} with no gc_write_barrier(${f.value}) after it before ${barrierDeadline(f.call)}`
              : `${f.value} is live across ${callPhrase(f.call)}`;
  const site = f.kind === "missing-gc-init" ? "" : ` in @${f.function}${where}${line}`;
  return `${f.file}: ${f.kind}${site}: ${what}`;
}

/** `the call of @gc_alloc`, `an indirect call of %f`. */
function callPhrase(call: string): string {
  return call.startsWith("@") ? `the call of ${call}` : `an ${call}`;
}

/** Where a store's barrier was owed by: the first call that can collect it reaches, or the return. */
function barrierDeadline(call: string): string {
  return call === "return" ? "the function returns" : callPhrase(call);
}

function summary(result: CheckResult): string {
  const counts = FINDING_KIND_NAMES.map((kind) => [kind, result.findings.filter((f) => f.kind === kind).length] as const).filter(([, n]) => n > 0);
  const programs = result.programs.length === 1 ? result.programs[0]! : `${result.programs.length} programs`;
  if (counts.length === 0) return `check: no findings in ${programs}`;
  const n = result.findings.length;
  return `check: ${n} finding${n === 1 ? "" : "s"} in ${programs} (${counts.map(([kind, k]) => `${k} ${kind}`).join(", ")})`;
}

export function formatCheckText(result: CheckResult): string {
  const lines: string[] = [];
  for (const f of result.findings) {
    lines.push(findingLine(f), `  why: ${FINDING_KINDS[f.kind].meaning}`, `  fix: ${FINDING_KINDS[f.kind].fix}`);
  }
  if (result.binary) lines.push(BINARY_LIMIT_NOTE);
  lines.push(summary(result));
  return `${lines.join("\n")}\n`;
}

export function formatCheckJson(result: CheckResult): string {
  const counts = Object.fromEntries(FINDING_KIND_NAMES.map((kind) => [kind, result.findings.filter((f) => f.kind === kind).length]));
  return `${JSON.stringify({
    programs: result.programs,
    findings: result.findings.map((f) => ({ ...f, fix: FINDING_KINDS[f.kind].fix })),
    counts,
    ...(result.binary ? { note: BINARY_LIMIT_NOTE.replace(/^note: /, "") } : {}),
  })}\n`;
}
