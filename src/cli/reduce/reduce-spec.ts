import { readFileSync } from "node:fs";
import type { FailingCommand, FailureSignature } from "./failure-signature.js";
import type { ProgramNeeds } from "./program-needs.js";

/**
 * What `rootwalk reduce` tells each interestingness test (src/cli/reduce-test-entry.ts), as one JSON
 * file in the reduction's private folder: the failure to keep, how to make it, what a program needs.
 */
export interface ReduceSpec {
  readonly failing: FailingCommand;
  readonly signature: FailureSignature;
  readonly needs: ProgramNeeds;
  /** The LLVM major version llvm-reduce and every check or run use. */
  readonly llvmMajor: number;
  /** Bound on one candidate's `run` (a reduction can make a loop endless). */
  readonly runTimeoutMs: number;
  /** The private folder: `best.ll` (smallest interesting candidate so far), `steps` (one byte per test). */
  readonly stateDir: string;
}

export const SPEC_FILE = "spec.json";
export const BEST_FILE = "best.ll";
export const STEPS_FILE = "steps";

export function readSpec(path: string): ReduceSpec {
  return JSON.parse(readFileSync(path, "utf8")) as ReduceSpec;
}

/** Lines of IR text (the size the reducer reports and keeps the smallest of). */
export function lineCount(text: string): number {
  return text.length === 0 ? 0 : text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}
