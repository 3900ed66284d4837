import type { CfiRow, FullRegisterRule } from "../../../src/unwind/cfi.js";
import { registerRule } from "../../../src/unwind/cfi.js";
import { X86_64 } from "../../../src/arch/x86-64.js";

/** `+16`, `-8`, or nothing for 0 (LLVM 14 UnwindLocation::dump). */
function signedSuffix(value: number): string {
  return value === 0 ? "" : value > 0 ? `+${value}` : `${value}`;
}

function formatRule(rule: FullRegisterRule): string {
  switch (rule.kind) {
    case "offset":
      return `[CFA${signedSuffix(rule.offset)}]`;
    case "valOffset":
      return `CFA${signedSuffix(rule.offset)}`;
    case "register":
      return X86_64.dwarfdumpName(rule.register);
    case "sameValue":
      return "same";
    case "undefined":
      return "undefined";
    case "unspecified":
      return "unspecified";
  }
}

/** A row the way `llvm-dwarfdump --eh-frame` (LLVM 14) prints it after the address. */
export function formatRowLikeDwarfdump(row: CfiRow): string {
  const cfa = `CFA=${X86_64.dwarfdumpName(row.cfaRegister)}${signedSuffix(row.cfaOffset)}`;
  const registers = [...new Set([...row.savedRegisters.keys(), ...row.otherRules.keys()])].sort((a, b) => a - b);
  if (registers.length === 0) return cfa;
  return `${cfa}: ${registers.map((r) => `${X86_64.dwarfdumpName(r)}=${formatRule(registerRule(row, r))}`).join(", ")}`;
}

/** The CFA the way `readelf -wF` prints it: `rsp+8`. */
export function formatCfaLikeReadelf(row: CfiRow): string {
  return `${X86_64.dwarfdumpName(row.cfaRegister).toLowerCase().replace("rip", "ra")}${row.cfaOffset >= 0 ? "+" : ""}${row.cfaOffset}`;
}

/** Replaces the CFA part of a dwarfdump row text. */
export function withCfa(text: string, cfa: string): string {
  return text.replace(/^CFA=[^:]*/, `CFA=${cfa}`);
}

/** readelf's `rbp+16` as dwarfdump's `RBP+16`. */
export function readelfCfaToDwarfdump(cfa: string): string {
  const m = /^([a-z0-9]+)([+-]\d+)$/.exec(cfa);
  if (m === null) return cfa;
  const offset = Number(m[2]);
  return `${m[1]!.toUpperCase()}${signedSuffix(offset)}`;
}
