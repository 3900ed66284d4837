import type { RecordedVerifyFailure } from "../../gc/gc-stats.js";
import { formatVerifyFailure } from "../../gc/heap-verifier.js";
import { hex } from "../errors.js";

/*
 * How `run` and `sim` show the first verification failures of a run (gc-stats.ts keeps them):
 * one line each on stderr after the count, and an array in --json ("verifyFailureDetails").
 */

/** `N heap verification failures; the first K:` and one indented line per kept failure. */
export function verifyFailureReport(command: string, total: number, failures: readonly RecordedVerifyFailure[]): string {
  const head = `rootwalk ${command}: ${total} heap verification failure${total === 1 ? "" : "s"}`;
  if (failures.length === 0) return `${head}\n`;
  const shown = failures.length < total ? `; the first ${failures.length}:` : ":";
  return `${head}${shown}\n${failures.map((f) => `  collection #${f.cycle}${f.phase === "before" ? " (before it)" : ""}: ${formatVerifyFailure(f)}\n`).join("")}`;
}

/** A failure as JSON: addresses in hex, the place as its own object, and the one-line message. */
export function verifyFailureJson(f: RecordedVerifyFailure): Record<string, unknown> {
  const l = f.location;
  const where =
    l.kind === "root"
      ? { kind: "root", index: l.index, ...(l.description === undefined ? {} : { description: l.description }) }
      : l.kind === "field"
        ? { kind: "field", object: hex(l.object), offsetBytes: l.offsetBytes }
        : l.kind === "object"
          ? { kind: "object", object: hex(l.object) }
          : l.kind === "poisoned-memory"
            ? { kind: "poisoned-memory", address: hex(l.address) }
            : { kind: "graph" };
  return {
    collection: f.cycle,
    ...(f.phase === undefined ? {} : { phase: f.phase }),
    where,
    ...(l.kind === "graph" ? {} : { value: hex(f.value) }),
    reason: f.reason,
    expected: f.expected,
    message: formatVerifyFailure(f),
  };
}
