import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { ENTRY, buildRunEntry } from "../support/native-run.js";

/*
 * The two complete programs of docs/writing-programs.md, taken from that page
 * verbatim (the fenced block after each `<!-- readme-program: NAME -->`), run as a language
 * implementer would: --no-gc and --stress=1 --verify, under LLVM 14 and 19 (the README says the
 * same typed text works under both), each printing the result the README states.
 */

const README = readFileSync(join(repoRoot(), "docs/writing-programs.md"), "utf8");
const scratch = mkdtempSync(join(tmpdir(), "rootwalk-readme-programs-"));

/** The fenced block following `<!-- readme-program: name -->`. */
function readmeProgram(name: string): string {
  const m = new RegExp(`<!-- readme-program: ${name.replace(/\./g, "\\.")} -->\\n\`\`\`llvm\\n([\\s\\S]*?)\`\`\`\\n`).exec(README);
  if (m === null) throw new Error(`docs/writing-programs.md has no program ${name}`);
  return m[1]!;
}

const PROGRAMS = [
  { name: "list-statepoint.ll", flags: [] as string[] },
  { name: "list-gcroot.ll", flags: ["--plimmix"] },
];

beforeAll(() => {
  buildRunEntry();
}, 300_000);

describe("README programs run as written", () => {
  for (const llvm of ["14", "19"]) {
    for (const program of PROGRAMS) {
      it(`${program.name} under LLVM ${llvm}: --no-gc and --stress=1 --verify print the README's result`, () => {
        const text = readmeProgram(program.name);
        const expected = /prints result: (\d+)/.exec(text)![1]!;
        const path = join(scratch, program.name);
        writeFileSync(path, text);
        for (const mode of [["--no-gc"], ["--stress=1", "--verify"]]) {
          const r = spawnSync(process.execPath, [ENTRY, path, ...program.flags, ...mode, "--progress=0"], {
            encoding: "utf8",
            env: { ...process.env, ROOTWALK_LLVM: llvm },
            timeout: 240_000,
          });
          // The first use of a plugin (plimmix, the check pass) says what it builds: nothing else on stderr.
          expect(r.stderr.replace(/^rootwalk: building the .* \(first use, a few seconds\): .*\n/gm, "")).toBe("");
          expect(r.status).toBe(0);
          expect(r.stdout).toMatch(new RegExp(`^result: ${expected}\\n`));
          if (mode[0] !== "--no-gc") expect(r.stdout).toMatch(/collections: [1-9]\d*, .*objects moved: [1-9]/);
          expect(r.stdout).toMatch(/verify failures: 0;/);
        }
      }, 300_000);
    }
  }
});
