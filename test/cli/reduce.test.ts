import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateReduceProgram, type ReduceMistake, type ReduceStyle } from "../support/reduce-programs.js";

/*
 * `rootwalk reduce` end to end (the built CLI, real llvm-reduce, real check and run): a generated
 * program with one GC-safety mistake buried in one of its functions shrinks to at most a tenth of
 * its lines and still fails the same way, by the command's own check of the result and by an
 * independent `rootwalk check` here. Check-based failures mostly (fast); one run-based reduction
 * of a small program (a stale-pointer fault under --stress).
 */

const MAIN = resolve("dist/src/cli/main.js");
const scratch = mkdtempSync(join(tmpdir(), "rootwalk-reduce-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function rootwalk(args: string[], env: NodeJS.ProcessEnv = process.env, onStderr?: (text: string, child: ReturnType<typeof spawn>) => void): Promise<Ran> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [MAIN, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
      onStderr?.(stderr, child);
    });
    child.on("close", (code, signal) => done({ code, signal, stdout, stderr }));
  });
}

function lines(path: string): number {
  return readFileSync(path, "utf8").trimEnd().split("\n").length;
}

function program(name: string, style: ReduceStyle, mistake: ReduceMistake, functions: number): { path: string; culprit: string } {
  const generated = generateReduceProgram(style, mistake, functions);
  const path = join(scratch, `${name}.ll`);
  writeFileSync(path, generated.text);
  return { path, culprit: generated.culprit };
}

interface CheckJson {
  findings: { kind: string; function: string }[];
}

async function firstFinding(path: string, checkOptions: string[]): Promise<{ kind: string; function: string } | undefined> {
  const r = await rootwalk(["check", path, ...checkOptions, "--json"]);
  return (JSON.parse(r.stdout) as CheckJson).findings[0];
}

describe("rootwalk reduce: check findings in a 200-function program", () => {
  const cases: [string, ReduceStyle, ReduceMistake, string[]][] = [
    ["statepoint, a stale ptrtoint", "statepoint", "integer-across-safepoint", []],
    ["gcroot, a missing gcroot", "gcroot", "unrooted-gc-pointer", []],
    ["gcroot, a missing write barrier", "gcroot", "missing-write-barrier", ["--generational"]],
    ["statepoint, a missing write barrier", "statepoint", "missing-write-barrier", ["--generational"]],
  ];
  for (const [title, style, mistake, checkOptions] of cases) {
    it.concurrent(`${title}: at most a tenth of the lines, the same finding in the same function`, { timeout: 600_000 }, async () => {
      const { path, culprit } = program(`${style}-${mistake}`, style, mistake, 200);
      expect(await firstFinding(path, checkOptions)).toMatchObject({ kind: mistake, function: culprit });
      const small = join(scratch, `${style}-${mistake}.small.ll`);
      const r = await rootwalk(["reduce", path, "-o", small, "--", "check", ...checkOptions]);
      expect(r.stderr).toContain(`shows check finding ${mistake} in @${culprit}`);
      expect(r.stderr).toMatch(/rootwalk reduce: step \d+: \d+ lines now, \d+ at start/);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^reduce: wrote .*: \\d+ lines, .* of .*'s ${lines(path)} .*; still shows check finding ${mistake} in @${culprit}`));
      expect(lines(small)).toBeLessThanOrEqual(lines(path) / 10);
      expect(await firstFinding(small, checkOptions)).toMatchObject({ kind: mistake, function: culprit });
      // Still a program: rw_main with its strategy and gc_init with the map symbol.
      const text = readFileSync(small, "utf8");
      expect(text).toMatch(new RegExp(`define i64 @rw_main\\(\\) gc "${style === "statepoint" ? "statepoint-example" : "plimmix"}"`));
      expect(text).toMatch(
        style === "statepoint" ? /call void @gc_init\((i8\*|ptr) @__LLVM_StackMaps\)/ : /call void @gc_init\((i8\*|ptr) @"?_GC_MAP_reduce-me"?\)/,
      );
    });
  }
});

describe("rootwalk reduce: a run failure", () => {
  // Every candidate is compiled, linked and run (about a second each, more on a loaded machine):
  // this one run-based reduction is bounded by --timeout, and asserts the failure kept and a
  // smaller program; the tenth-of-the-lines bound is the 200-function check tests' above.
  it("a stale pointer fault under run --stress (a missing gcroot, 4 functions) stays a heap fault in the same function", { timeout: 300_000 }, async () => {
    const { path, culprit } = program("run-fault", "gcroot", "unrooted-gc-pointer", 4);
    const small = join(scratch, "run-fault.small.ll");
    const r = await rootwalk(["reduce", path, "-o", small, "--timeout", "60", "--", "run", "--plimmix", "--stress", "--no-check"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`shows fault (exit 3) in @${culprit}, its address in the heap (a stale pointer)`);
    expect(r.stdout).toContain(`still shows fault (exit 3) in @${culprit}, its address in the heap (a stale pointer)`);
    expect(lines(small)).toBeLessThan(lines(path));
    expect(readFileSync(small, "utf8")).toMatch(new RegExp(`define i64 @${culprit}\\(`));
    const again = await rootwalk(["run", small, "--plimmix", "--stress", "--no-check"]);
    expect(again.code).toBe(3);
    expect(again.stderr).toContain(`at ${culprit}+0x`);
    expect(again.stderr).toContain("the fault address is in the heap");
  });
});

describe("rootwalk reduce: refusals, the time bound and Ctrl-C", () => {
  it("a program that does not fail: one line, exit 1, nothing written", async () => {
    const { path } = program("clean", "statepoint", "none", 5);
    const small = join(scratch, "clean.small.ll");
    const r = await rootwalk(["reduce", path, "-o", small, "--", "check"]);
    expect(r.code).toBe(1);
    // (A first use may also say that it builds the check plugin.)
    expect(r.stderr.split("\n").filter((l) => l !== "" && !l.startsWith("rootwalk: building"))).toEqual([
      `rootwalk: reduce: found ${path} does not fail under check (rootwalk check finds nothing), expected a program that fails, to reduce`,
    ]);
    expect(() => readFileSync(small)).toThrow();
  });

  it(
    "a result that only differs from --no-gc's (a stale ptrtoint under run --stress): named and refused in one line, exit 1",
    { timeout: 120_000 },
    async () => {
      const { path } = program("differs", "statepoint", "integer-across-safepoint", 3);
      const r = await rootwalk(["reduce", path, "-o", join(scratch, "differs.small.ll"), "--", "run", "--stress", "--no-check"]);
      expect(r.code).toBe(1);
      const said = r.stderr.split("\n").filter((l) => l !== "" && !l.startsWith("rootwalk: building"));
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(/^rootwalk: reduce: found .* \(its result -?\d+ differs from --no-gc's \d+, a failure rootwalk reduce does not keep/);
    },
  );

  it("without -- check|run: one line, exit 1", async () => {
    const r = await rootwalk(["reduce", "x.ll", "-o", "y.ll"]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("how the program fails, after --");
  });

  it("--timeout: the smallest failing candidate so far is written and the bound is named", { timeout: 120_000 }, async () => {
    const { path, culprit } = program("bounded", "statepoint", "integer-across-safepoint", 200);
    const small = join(scratch, "bounded.small.ll");
    const r = await rootwalk(["reduce", path, "-o", small, "--timeout", "8", "--", "check"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("the time bound (--timeout 8 s) ended the reduction");
    expect(lines(small)).toBeLessThan(lines(path));
    expect(await firstFinding(small, [])).toMatchObject({ kind: "integer-across-safepoint", function: culprit });
  });

  it("Ctrl-C during the reduction: exit 130, one line, no temporary folder left", { timeout: 120_000 }, async () => {
    const { path } = program("interrupted", "gcroot", "unrooted-gc-pointer", 200);
    const tmp = join(scratch, "tmp-for-interrupt");
    mkdirSync(tmp, { mode: 0o700 });
    let sent = false;
    const r = await rootwalk(["reduce", path, "-o", join(scratch, "never.ll"), "--", "check"], { ...process.env, TMPDIR: tmp }, (text, child) => {
      if (!sent && /step \d+:/.test(text)) {
        sent = true;
        child.kill("SIGINT");
      }
    });
    expect(sent).toBe(true);
    expect(r.code).toBe(130);
    expect(r.stderr.trim().split("\n").at(-1)).toBe("rootwalk: interrupted");
    expect(readdirSync(tmp)).toEqual([]);
  });
});
