#!/usr/bin/env node
import { appendFileSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { classify, sameFailure } from "./reduce/failure-signature.js";
import { keepsNeeds } from "./reduce/program-needs.js";
import { BEST_FILE, STEPS_FILE, lineCount, readSpec, type ReduceSpec } from "./reduce/reduce-spec.js";

/*
 * The interestingness test `rootwalk reduce` gives llvm-reduce (`--test=node --test-arg=THIS
 * --test-arg=SPEC.json`; llvm-reduce adds the candidate last). Exit 0: the candidate keeps what a
 * program needs (rw_main, its GC strategy, gc_init with the map symbol) and fails exactly as the
 * original did; exit 1 otherwise, also when the check or the run cannot read it. An interesting
 * candidate smaller than the best so far becomes `best.ll` (written beside and renamed: the
 * reducer reads it at any time, for its progress and when its time bound ends the reduction).
 */

async function interesting(spec: ReduceSpec, candidate: string, text: string): Promise<boolean> {
  if (!keepsNeeds(text, spec.needs)) return false;
  try {
    const result = await classify(candidate, spec.failing, spec.runTimeoutMs);
    return "failure" in result && sameFailure(result.failure, spec.signature);
  } catch {
    return false; // a candidate the check or the build refuses is not the failure kept
  }
}

function keepIfSmallest(spec: ReduceSpec, text: string): void {
  const best = join(spec.stateDir, BEST_FILE);
  let bestLines = Infinity;
  try {
    bestLines = lineCount(readFileSync(best, "utf8"));
  } catch {
    // no best yet
  }
  if (lineCount(text) >= bestLines) return;
  const partial = `${best}.${process.pid}`;
  writeFileSync(partial, text);
  renameSync(partial, best);
}

async function main(specPath: string, candidate: string): Promise<number> {
  const spec = readSpec(specPath);
  // The LLVM the reducer selected (ROOTWALK_LLVM, when set, already chose it and is inherited).
  if ((process.env["ROOTWALK_LLVM"] ?? "") === "") process.env["ROOTWALK_LLVM"] = String(spec.llvmMajor);
  appendFileSync(join(spec.stateDir, STEPS_FILE), ".");
  const text = readFileSync(candidate, "utf8");
  if (!(await interesting(spec, candidate, text))) return 1;
  keepIfSmallest(spec, text);
  return 0;
}

const [specPath, candidate] = process.argv.slice(2);
if (specPath === undefined || candidate === undefined) {
  process.stderr.write("reduce-test-entry: usage: reduce-test-entry SPEC.json CANDIDATE.ll (run by rootwalk reduce)\n");
  process.exit(2);
}
main(specPath, candidate).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`reduce-test-entry: ${String(e)}\n`);
    process.exit(1);
  },
);
