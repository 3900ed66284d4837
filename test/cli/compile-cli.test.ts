import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../support/run-cli.js";
import { loadObjectStackMaps } from "../../src/loader/object-file.js";
import { loadPlimmixFromElf } from "../../src/loader/plimmix-loader.js";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";

describe("rootwalk compile", () => {
  const out = join(repoRoot(), ".cache", "cli-test");
  mkdirSync(out, { recursive: true });

  it("--statepoint: RewriteStatepointsForGC then llc -O2 (pushed arguments kept)", async () => {
    const o = join(out, "stack-args.o");
    const r = await run("compile", "--statepoint", join(repoRoot(), "test", "ll", "stack-args.ll"), "-o", o);
    expect(r.code).toBe(0);
    const maps = loadObjectStackMaps(readFileSync(o), o)!;
    expect(maps.descriptors.count).toBe(2);
    expect([...maps.descriptors.frameSizeBytes].some((size, i) => size !== maps.descriptors.stackSizeBytes[i])).toBe(true);
  });

  it("--plimmix with --llc-flag: the plugin's _GC_MAP_ map", async () => {
    const o = join(out, "four-types.o");
    const r = await run("compile", "--plimmix", "--llc-flag=-frame-pointer=all", join(repoRoot(), "test", "plimmix", "ll", "four-types.ll"), "-o", o);
    expect(r.code).toBe(0);
    const maps = loadPlimmixFromElf(readFileSync(o), o)!;
    expect(maps.maps).toHaveLength(1);
    expect(maps.descriptors.count).toBeGreaterThan(0);
  });

  it("bad arguments and compiler errors: exit 1 with one line", async () => {
    expect((await run("compile", "--statepoint", "--plimmix", "x.ll", "-o", "y.o")).code).toBe(1);
    expect((await run("compile", "x.ll")).code).toBe(1);
    const broken = await run("compile", join(repoRoot(), "package.json"), "-o", join(out, "broken.o"));
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/^rootwalk: llc/);
  });
});

/*
 * `--target x86-64|aarch64` as a user on an x86-64 machine building for an AArch64 board types it:
 * compile and check take it (llc and opt get the architecture's -mtriple; no --llc-flag spelling
 * a triple), run refuses another machine than its own in one line (it runs the program natively),
 * and an unknown name is one line naming it and the two known ones. Before, `--target` was an
 * unknown option of all three.
 */
describe("--target", () => {
  const out = join(repoRoot(), ".cache", "cli-test");
  mkdirSync(out, { recursive: true });
  const source = join(repoRoot(), "test", "ll", "call-chain.ll");
  const EM_X86_64 = 62;
  const EM_AARCH64 = 183;
  const machineOf = (path: string): number => readFileSync(path).readUInt16LE(18);

  it("compile --target aarch64 writes an AArch64 object whose stack maps load as AArch64's; --target x86-64 an x86-64 one", async () => {
    for (const [target, machine, architecture] of [
      ["aarch64", EM_AARCH64, "AArch64"],
      ["x86-64", EM_X86_64, "x86-64"],
    ] as const) {
      const o = join(out, `call-chain-${target}.o`);
      const r = await run("compile", "--statepoint", "--target", target, source, "-o", o);
      expect(r.code, r.stderr).toBe(0);
      expect(machineOf(o)).toBe(machine);
      const maps = loadObjectStackMaps(readFileSync(o), o)!;
      expect(maps.descriptors.architecture.name).toBe(architecture);
      expect(maps.descriptors.count).toBe(3);
    }
  });

  it("check --target aarch64 checks the IR for AArch64 (clean program: exit 0)", async () => {
    const r = await run("check", "--target", "aarch64", source);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/no findings/);
  });

  it("an unknown target: one line naming it and the two known ones, exit 1 (compile, check, run)", async () => {
    for (const args of [
      ["compile", "--statepoint", "--target", "sparc", source, "-o", join(out, "sparc.o")],
      ["check", "--target", "sparc", source],
      ["run", "--target", "sparc", source],
    ]) {
      const r = await run(...args);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(/--target: found "sparc", expected x86-64 or aarch64$/m);
    }
  });

  it("run --target of another machine than this one is refused in one line saying how AArch64 runs; --plimmix is x86-64 only", async () => {
    const other = process.arch === "arm64" ? "x86-64" : "aarch64";
    const r = await run("run", "--target", other, source);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr.trim()).toMatch(
      new RegExp(
        `^rootwalk run: --target: found ${other}, expected \\S+, the machine rootwalk runs on \\(run executes the program natively; .*docs/aarch64.md\\)$`,
      ),
    );
    const plimmix = await run("compile", "--plimmix", "--target", "aarch64", source, "-o", join(out, "p.o"));
    expect(plimmix.code).toBe(1);
    expect(plimmix.stderr).toMatch(/--target: found aarch64, expected x86-64 with --plimmix/);
  });
});
