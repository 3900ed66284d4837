import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { parseHeapSize as parseSize, parseRunArguments } from "../../src/cli/run-command.js";
import { ENTRY, buildRunEntry, type RunJson } from "../support/native-run.js";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";

/*
 * `rootwalk run` end to end: real LLVM IR programs compiled with opt/llc, linked with the native
 * runtime (src/native/), run with the Immix collector.
 *
 * Isolation: every program runs in a CHILD node process (a program or collector failure ends
 * that process with exit code 3, and koffi loads a runtime once per process). The child runs
 * the compiled JavaScript of src/cli/run-entry.ts: beforeAll compiles the project with
 * `tsc -p tsconfig.build.json --outDir .cache/native/test-dist` (about 6 s; the build is not
 * otherwise part of `npm test`).
 */

const ROOT = repoRoot();
const PROGRAMS = join(dirname(fileURLToPath(import.meta.url)), "programs");

interface Outcome {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(program: string, args: readonly string[], timeoutMs = 100_000): Outcome {
  const r = spawnSync(process.execPath, [ENTRY, join(PROGRAMS, program), ...args], { encoding: "utf8", timeout: timeoutMs, cwd: ROOT });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr + (r.error ? `\n${r.error.message}` : "") };
}

function runJson(program: string, args: readonly string[], timeoutMs?: number): RunJson {
  const r = run(program, [...args, "--json"], timeoutMs);
  if (r.status !== 0) throw new Error(`${program} ${args.join(" ")}: exit ${r.status}\n${r.stderr}`);
  const line = r.stdout.trim().split("\n").pop()!;
  return JSON.parse(line) as RunJson;
}

function expectStressed(r: RunJson, expected: string): void {
  expect(r.result).toBe(expected);
  expect(r.collections).toBeGreaterThan(0);
  expect(r.objectsMoved).toBeGreaterThan(0);
  expect(r.rootsRelocated).toBeGreaterThan(0);
  expect(r.framesScanned).toBeGreaterThan(0);
  expect(r.verifyFailures).toBe(0);
}

beforeAll(() => {
  buildRunEntry();
}, 300_000);

describe("rootwalk run: argument parsing", () => {
  it("parses flags, repeated llc flags, stress and heap sizes", () => {
    const a = parseRunArguments(["p.ll", "--stress", "--verify", "--llc-flag=-a", "--llc-flag", "-b", "--heap", "16M", "--json"]);
    expect(a).toMatchObject({ programs: ["p.ll"], stressEvery: 1, verify: true, llcFlags: ["-a", "-b"], heapBytes: 16 << 20, json: true, plimmix: false });
    expect(parseRunArguments(["p.ll", "--stress=7"]).stressEvery).toBe(7);
    expect(parseSize("1G")).toBe(1 << 30);
    expect(() => parseRunArguments([])).toThrow(/PROGRAM/);
    expect(() => parseRunArguments(["p.ll", "--stress=0"])).toThrow(/stress/);
    expect(() => parseRunArguments(["p.ll", "--bogus"])).toThrow(/option/);
    expect(() => parseRunArguments(["p.ll", "--no-gc", "--stress"])).toThrow(/no-gc/);
  });
});

describe("rootwalk run: statepoint programs", () => {
  const LIST_TREE = "36180536617878";

  it("list + tree: --no-gc and --stress=1 --verify agree, objects moved", () => {
    const plain = runJson("list-tree.ll", ["--no-gc"]);
    expect(plain.result).toBe(LIST_TREE);
    expect(plain.collections).toBe(0);
    const stressed = runJson("list-tree.ll", ["--stress=1", "--verify", "--heap", "16M"]);
    expectStressed(stressed, LIST_TREE);
  });

  it("list + tree without options collects only when asked (gc_collect)", () => {
    const r = runJson("list-tree.ll", []);
    expect(r.result).toBe(LIST_TREE);
    expect(r.collections).toBeGreaterThanOrEqual(1);
  });

  it("GC pointers in callee-saved registers", () => {
    const flags = ["--llc-flag=-max-registers-for-gc-values=4", "--llc-flag=-fixup-allow-gcptr-in-csr"];
    expect(runJson("list-tree.ll", [...flags, "--no-gc"]).result).toBe(LIST_TREE);
    expectStressed(runJson("list-tree.ll", [...flags, "--stress=1", "--verify", "--heap", "16M"]), LIST_TREE);
  });

  it("a call with 9 arguments (pushed stack arguments) at a safepoint", () => {
    const expected = "11139650";
    expect(runJson("many-args.ll", ["--no-gc"]).result).toBe(expected);
    expectStressed(runJson("many-args.ll", ["--stress=1", "--verify", "--heap", "16M"]), expected);
  });

  it("recursion 100,000 frames deep", () => {
    const r = runJson("deep.ll", ["--stress=20000", "--heap", "64M"]);
    expect(r.result).toBe("5000050000");
    expect(r.collections).toBeGreaterThan(0);
    expect(r.framesScanned).toBeGreaterThan(100_000);
    expect(r.objectsMoved).toBeGreaterThan(100_000);
  });
});

describe("rootwalk run: threads, stuck threads, globals, plimmix", () => {
  it("4 threads allocating and polling while rw_main joins them", () => {
    const expected = "3603639650";
    expect(runJson("threads.ll", ["--no-gc"]).result).toBe(expected);
    expectStressed(runJson("threads.ll", ["--stress=25", "--verify", "--heap", "16M"]), expected);
  });

  it("a stuck thread is not waited for, its referents stay pinned; a global root is relocated", () => {
    // 1e9: the stuck worker's list head kept its address; + worker sum + 1e6 * global list sum.
    const expected = "6550220100";
    expect(runJson("stuck-globals.ll", ["--no-gc"], 30_000).result).toBe(expected);
    expectStressed(runJson("stuck-globals.ll", ["--stress=3", "--verify", "--heap", "16M"], 60_000), expected);
  });

  it("plimmix (gcroot) program", () => {
    const expected = "20963045100";
    expect(runJson("plimmix-list.ll", ["--plimmix", "--no-gc"]).result).toBe(expected);
    expectStressed(runJson("plimmix-list.ll", ["--plimmix", "--stress=1", "--verify", "--heap", "16M"]), expected);
  });
});

describe("rootwalk run: bad programs", () => {
  it("a program that never calls gc_init: clear message, nonzero exit, no hang", () => {
    const r = run("no-init.ll", ["--stress=1"], 30_000);
    expect(r.status).not.toBe(0);
    expect(r.status).not.toBeNull();
    expect(r.stderr).toMatch(/before gc_init/);
  });

  it("a corrupted map given to gc_init", () => {
    const r = run("corrupt-map.ll", [], 30_000);
    expect(r.status).not.toBe(0);
    expect(r.status).not.toBeNull();
    expect(r.stderr).toMatch(/gc_init\(0x[0-9a-f]+\).*corrupted map/);
  });

  it("an exception inside the collector (a wild pointer in a heap object): its message, exit 3, no stale roots", () => {
    const r = run("wild-pointer.ll", [], 30_000);
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/pointer traced at 0x1234: found an address outside the heap, expected an object in \[0x[0-9a-f]+, 0x[0-9a-f]+\)/);
    expect(r.stderr).toMatch(/stopping rather than running on with stale roots/);
    expect(r.stdout).not.toMatch(/result/);
  });

  it("a missing program file", () => {
    const r = run("does-not-exist.ll", [], 30_000);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/rootwalk run: .*does-not-exist\.ll/);
  });
});
