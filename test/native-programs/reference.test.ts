import { describe, expect, it } from "vitest";
import { AARCH64 } from "../../src/arch/aarch64.js";
import { findLlvmTool, runTool } from "../../src/toolchain/llvm-toolchain.js";
import { compileProgramObjects, NATIVE_PROGRAMS, runReference, type NativeProgram } from "./programs.js";

/**
 * Every native test program builds, runs under the malloc-only reference runtime, exits 0 and
 * prints its expected result; the feature claims are checked against the compiled objects.
 */

const UINT64_MAX = "18446744073709551615";

function byName(name: string): NativeProgram {
  const entry = NATIVE_PROGRAMS.find((p) => p.name === name);
  if (entry === undefined) throw new Error(`no program ${name}`);
  return entry;
}

async function stackmapText(name: string): Promise<string> {
  const [object] = await compileProgramObjects(byName(name));
  return runTool(findLlvmTool("llvm-readobj"), ["--stackmap", object!]);
}

/** Statepoint records as lists of location spellings ("Indirect [R#7 + 16]", ...). */
function statepointRecords(text: string): string[][] {
  const records: string[][] = [];
  let current: string[] | undefined;
  for (const line of text.split("\n")) {
    if (/^\s*Record ID:/.test(line)) {
      current = [];
      records.push(current);
    } else if (current !== undefined) {
      const m = /^\s*#\d+: (.*), size: \d+$/.exec(line);
      if (m !== null) current.push(m[1]!);
    }
  }
  return records;
}

describe("native test programs under the reference runtime", () => {
  it("the table is well formed", () => {
    expect(NATIVE_PROGRAMS.length).toBeGreaterThanOrEqual(12);
    expect(NATIVE_PROGRAMS.filter((p) => p.mode === "plimmix").length).toBeGreaterThanOrEqual(3);
    expect(new Set(NATIVE_PROGRAMS.map((p) => p.name)).size).toBe(NATIVE_PROGRAMS.length);
    const features = new Set(NATIVE_PROGRAMS.flatMap((p) => p.features));
    for (const f of [
      "derived-pointers",
      "pushed-args",
      "gc-in-csr",
      "dynamic-alloca",
      "deep-recursion",
      "threads",
      "stuck-thread",
      "globals",
      "tree",
      "linked-list",
      "pointer-array",
      "raw-bytes",
    ]) {
      expect(features.has(f), f).toBe(true);
    }
  });

  for (const entry of NATIVE_PROGRAMS) {
    it(`${entry.name} (${entry.mode}) returns ${entry.expectedResult}`, async () => {
      const run = await runReference(entry);
      expect(run.stderr).toBe("");
      expect(run.signal).toBeNull();
      expect(run.status).toBe(0);
      expect(run.result).toBe(entry.expectedResult);
      expect(run.gcInitCalls).toBeGreaterThanOrEqual(entry.files.length);
      expect(run.allocs).toBeGreaterThan(0);
      expect(run.allocs).toBeLessThan(20_000);
      expect((run.safepoints ?? 0) + (run.collects ?? 0)).toBeGreaterThan(0);
      if (entry.features.includes("threads")) expect(run.threads).toBeGreaterThanOrEqual(4);
      if (entry.features.includes("globals")) expect(run.globals).toBeGreaterThanOrEqual(1);
    }, 60_000);
  }
});

describe("native test programs for AArch64 under the reference runtime (cross gcc, qemu-aarch64)", () => {
  // The differential suite's programs compiled with llc -mtriple=aarch64-linux-gnu, linked with
  // aarch64-linux-gnu-gcc against the same malloc-only runtime, run under qemu-user: they prove
  // the programs mean the same on AArch64, so `rootwalk run` there must print the same results
  // (test/native-programs/aarch64-run.test.ts). The statepoint programs only: the plimmix
  // plugin's _GC_MAP_ printer refuses every target but x86-64 ("target 'aarch64-unknown-linux-gnu'
  // is not supported").
  for (const entry of NATIVE_PROGRAMS.filter((p) => p.mode === "statepoint")) {
    it(`${entry.name} (${entry.mode}) returns ${entry.expectedResult} on AArch64`, async () => {
      const run = await runReference(entry, 60_000, AARCH64);
      expect(run.stderr).toBe("");
      expect(run.signal).toBeNull();
      expect(run.status).toBe(0);
      expect(run.result).toBe(entry.expectedResult);
      expect(run.gcInitCalls).toBeGreaterThanOrEqual(entry.files.length);
    }, 120_000);
  }
});

describe("feature claims, checked against the objects", () => {
  it("sp-csr keeps gc pointers in callee-saved registers", async () => {
    expect(await stackmapText("sp-csr")).toMatch(/Register R#(3|12|13|14|15)\b/);
  });

  it("sp-csr keeps gc pointers in callee-saved registers on AArch64 too (x19-x28)", async () => {
    const [object] = await compileProgramObjects(byName("sp-csr"), AARCH64);
    expect(runTool(findLlvmTool("llvm-readobj"), ["--stackmap", object!])).toMatch(/Register R#(19|2[0-8])\b/);
  });

  it("sp-dynamic-alloca has a dynamic frame", async () => {
    expect(await stackmapText("sp-dynamic-alloca")).toContain(`stack size: ${UINT64_MAX}`);
  });

  it("sp-derived-pointers has real (base, derived) pairs", async () => {
    const records = statepointRecords(await stackmapText("sp-derived-pointers"));
    let derivedPairs = 0;
    for (const locations of records) {
      const deopt = Number(/^Constant (\d+)$/.exec(locations[2] ?? "")?.[1] ?? "0");
      for (let i = 3 + deopt; i + 1 < locations.length; i += 2) {
        if (locations[i] !== locations[i + 1]) derivedPairs++;
      }
    }
    expect(derivedPairs).toBeGreaterThan(0);
  });

  it("sp-many-args pushes stack arguments right before calls", async () => {
    const [object] = await compileProgramObjects(byName("sp-many-args"));
    const lines = runTool("objdump", ["-d", "--no-show-raw-insn", object!]).split("\n");
    let pushedCalls = 0;
    lines.forEach((line, i) => {
      if (/\scall\s.*<(combine12|leaf9)>/.test(line) && /\spush/.test(lines[i - 1] ?? "")) pushedCalls++;
    });
    expect(pushedCalls).toBeGreaterThan(0);
  });

  it("sp-deep-recursion really recurses (a non-tail self call) at least 100,000 deep", async () => {
    const [object] = await compileProgramObjects(byName("sp-deep-recursion"));
    const text = runTool("objdump", ["-d", "--no-show-raw-insn", object!]);
    const rec = text.split(/\n(?=[0-9a-f]+ <)/).find((f) => /^[0-9a-f]+ <rec>:/.test(f));
    expect(rec).toMatch(/\scall\s+[0-9a-f]+ <rec>/);
    expect(rec).not.toMatch(/\sjmp\s+[0-9a-f]+ <rec>\s*$/m);
    expect(byName("sp-deep-recursion").expectedResult).toBeGreaterThanOrEqual(100_000n);
  });

  it("the plimmix objects define their _GC_MAP_ labels", async () => {
    for (const entry of NATIVE_PROGRAMS.filter((p) => p.mode === "plimmix")) {
      const objects = await compileProgramObjects(entry);
      for (const object of objects) {
        expect(runTool("nm", [object])).toMatch(/ [DdRr] _GC_MAP_\S+/);
      }
    }
  });
});
