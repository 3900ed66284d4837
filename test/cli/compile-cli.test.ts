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
