import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { InvalidArgumentError, ToolError } from "../../src/errors.js";
import { activeLlvm, LLVM_ENV_VARIABLE, selectLlvm } from "../../src/toolchain/llvm-selection.js";
import { compileToObject, repoRoot, runTool } from "../../src/toolchain/llvm-toolchain.js";
import { run } from "../support/run-cli.js";
import { buildRunEntry, runNative } from "../support/native-run.js";

/**
 * LLVM selection (src/toolchain/llvm-selection.ts) against the real installs: this machine (and
 * CI, through .ci/run) has LLVM 14 and 19. Each test that changes ROOTWALK_LLVM puts it back,
 * since the test project sets ROOTWALK_LLVM itself. A command's `--llvm` is no process state: it
 * is passed to activeLlvm and the selection handed down.
 */

const scratch = mkdtempSync(join(tmpdir(), "rootwalk-llvm-selection-"));
const savedEnv = process.env[LLVM_ENV_VARIABLE];
afterEach(() => {
  if (savedEnv === undefined) delete process.env[LLVM_ENV_VARIABLE];
  else process.env[LLVM_ENV_VARIABLE] = savedEnv;
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const SOURCE = join(repoRoot(), "test", "ll", "stack-args.ll");

function majorReportedBy(tool: string): number {
  return Number(/LLVM version (\d+)\./.exec(runTool(tool, ["--version"]))![1]);
}

describe("selectLlvm", () => {
  it.each([14, 19])("LLVM %i by version: every tool reports that major", (major) => {
    const llvm = selectLlvm(String(major), "test");
    expect(llvm.major).toBe(major);
    expect(llvm.version.startsWith(`${major}.`)).toBe(true);
    for (const name of ["llc", "opt", "llvm-readobj", "llvm-objdump"]) expect(majorReportedBy(llvm.tool(name))).toBe(major);
    expect(runTool(llvm.tool("llvm-config"), ["--version"]).trim()).toBe(llvm.version);
  });

  it("by folder: the tools come from that folder", () => {
    const llvm = selectLlvm("/usr/lib/llvm-19/bin", "test");
    expect(llvm.major).toBe(19);
    expect(llvm.tool("llc")).toBe("/usr/lib/llvm-19/bin/llc");
  });

  it("bad requests: a typed error naming what is accepted", () => {
    expect(() => selectLlvm("13", "ROOTWALK_LLVM")).toThrow(InvalidArgumentError);
    expect(() => selectLlvm("13", "ROOTWALK_LLVM")).toThrow(/14, 15, 16, 17, 18, 19/);
    expect(() => selectLlvm(join(scratch, "missing"), "ROOTWALK_LLVM")).toThrow(InvalidArgumentError);
    expect(() => selectLlvm(scratch, "ROOTWALK_LLVM")).toThrow(ToolError);
    expect(() => activeLlvm("nineteen")).toThrow(InvalidArgumentError);
    expect(() => selectLlvm("19", "test").tool("llvm-no-such-tool")).toThrow(
      "install it with: apt-get install -y llvm-19 llvm-19-tools llvm-19-dev (in a rootwalk checkout: bash scripts/system-packages",
    );
  });
});

describe("activeLlvm: the command line's --llvm, else ROOTWALK_LLVM, else the newest installed", () => {
  it("--llvm wins over ROOTWALK_LLVM; ROOTWALK_LLVM when the command line names none", () => {
    process.env[LLVM_ENV_VARIABLE] = "14";
    expect(activeLlvm("19").major).toBe(19);
    expect(activeLlvm("19").chosenBy).toBe("--llvm 19");
    expect(activeLlvm().major).toBe(14);
    expect(activeLlvm().chosenBy).toBe("ROOTWALK_LLVM=14");
  });

  it("--llvm when ROOTWALK_LLVM is unset", () => {
    delete process.env[LLVM_ENV_VARIABLE];
    expect(activeLlvm("14").major).toBe(14);
    expect(activeLlvm("19").major).toBe(19);
  });

  it("the newest installed otherwise (19 here, and never older than any llc-N that runs)", () => {
    delete process.env[LLVM_ENV_VARIABLE];
    const llvm = activeLlvm();
    expect(llvm.chosenBy).toBe("newest installed");
    expect(llvm.major).toBe(19);
    expect(majorReportedBy(llvm.tool("llc"))).toBe(19);
  });
});

describe("the CLI", () => {
  it("--version prints the LLVM it found, as llc itself reports it", async () => {
    delete process.env[LLVM_ENV_VARIABLE];
    const newest = await run("--version");
    expect(newest.code).toBe(0);
    expect(newest.stdout).toContain(`LLVM ${/LLVM version ([\d.]+)/.exec(runTool("llc-19", ["--version"]))![1]} (newest installed`);
    process.env[LLVM_ENV_VARIABLE] = "14";
    expect((await run("--version")).stdout).toContain(`LLVM ${/LLVM version ([\d.]+)/.exec(runTool("llc-14", ["--version"]))![1]} (ROOTWALK_LLVM=14`);
  });

  it.each([14, 19])("compile --llvm %i builds with that llc (the same bytes as its llc -O2), ROOTWALK_LLVM naming the other", async (major) => {
    process.env[LLVM_ENV_VARIABLE] = major === 14 ? "19" : "14"; // the command line wins
    const out = join(scratch, `cli-${major}.o`);
    const r = await run("compile", "--llvm", String(major), SOURCE, "-o", out);
    // SOURCE is statepoint code compiled plainly on purpose (the bytes llc makes): the one warning.
    expect(r.stderr).toMatch(/^rootwalk: \S+: warning: function @\w+ uses gc "statepoint-example" but --statepoint was not given[^\n]*\n$/);
    expect(r.code).toBe(0);
    const direct = join(scratch, `direct-${major}.o`);
    runTool(`llc-${major}`, ["-filetype=obj", "-O2", SOURCE, "-o", direct]);
    expect(readFileSync(out).equals(readFileSync(direct))).toBe(true);
  });

  it("compile --llvm 13: exit 1 and one line", async () => {
    delete process.env[LLVM_ENV_VARIABLE];
    const r = await run("compile", "--llvm", "13", SOURCE, "-o", join(scratch, "x.o"));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^rootwalk: .*13.*14, 15, 16, 17, 18, 19/);
  });
});

describe("caches are keyed by the tool version", () => {
  it("one source, two LLVMs: two cached objects, each reused for its own version", () => {
    const cacheDir = join(scratch, "cache");
    const by14 = compileToObject(SOURCE, { cacheDir, llvm: selectLlvm("14", "test") });
    const by19 = compileToObject(SOURCE, { cacheDir, llvm: selectLlvm("19", "test") });
    expect(by14).not.toBe(by19);
    expect(readFileSync(by14).equals(readFileSync(by19))).toBe(false);
    expect(compileToObject(SOURCE, { cacheDir, llvm: selectLlvm("19", "test") })).toBe(by19);
  });
});

describe("opaque-pointer IR", () => {
  const OPAQUE = `
declare void @g(ptr addrspace(1))
define void @f(ptr addrspace(1) %p) {
  call void @g(ptr addrspace(1) %p)
  ret void
}
`;

  it("compiles under LLVM 19; under LLVM 14 the error says which LLVM ran and how to choose", () => {
    const source = join(scratch, "opaque.ll");
    writeFileSync(source, OPAQUE);
    const cacheDir = join(scratch, "opaque-cache");
    expect(readFileSync(compileToObject(source, { cacheDir, llvm: selectLlvm("19", "test") })).byteLength).toBeGreaterThan(0);
    expect(() => compileToObject(source, { cacheDir, llvm: selectLlvm("14", "--llvm 14") })).toThrow(
      /^llc-14: opaque-pointer IR \(ptr\) needs LLVM 17 or newer, and LLVM 14\.[\d.]+ was chosen \(--llvm 14\); choose another with ROOTWALK_LLVM or --llvm/,
    );
  });
});

describe("rootwalk run --llvm (a child process, as users run it)", () => {
  it("an opaque-pointer program runs with --llvm 19; with --llvm 14 it is refused in one line that says why", async () => {
    buildRunEntry();
    const opaque = join(scratch, "sp-many-args-opaque.ll");
    writeFileSync(opaque, runTool(selectLlvm("19", "test").tool("opt"), ["-S", join(repoRoot(), "test", "native-programs", "sp-many-args.ll"), "-o", "-"]));
    // The child inherits the environment at spawn: ROOTWALK_LLVM names 14, the command line wins.
    process.env[LLVM_ENV_VARIABLE] = "14";
    const by19 = await runNative([opaque, "--llvm", "19", "--no-gc", "--json"], 120_000);
    const by14 = await runNative([opaque, "--llvm", "14", "--no-gc", "--json"], 120_000);
    expect(by19.status, by19.stderr).toBe(0);
    expect(JSON.parse(by19.stdout).result).toBe("324750");
    expect(by14.status).toBe(1);
    expect(by14.stderr).toMatch(/^rootwalk run: opt-14: opaque-pointer IR \(ptr\) needs LLVM 17 or newer, and LLVM 14\.[\d.]+ was chosen \(--llvm 14\)/);
  });
});
