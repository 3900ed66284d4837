import { describe, expect, it } from "vitest";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { run } from "../support/run-cli.js";

describe("rootwalk sim", () => {
  it("--json prints one line with the documented fields", async () => {
    const { code, stdout } = await run("sim", "--workload", "deep-recursion", "--stress", "--verify", "--scale", "0.005", "--json");
    expect(code).toBe(0);
    expect(stdout.trim().split("\n")).toHaveLength(1);
    const out = JSON.parse(stdout) as Record<string, unknown>;
    expect(Object.keys(out)).toEqual([
      "collections",
      "minorCollections",
      "majorCollections",
      "bytesPromoted",
      "rememberedSetMax",
      "rememberedSetTotal",
      "objectsMoved",
      "maxPauseMs",
      "verifyFailures",
      "verifyFailureDetails",
      "fragmentation",
    ]);
    expect(out.collections).toBeGreaterThan(0);
    expect(out.majorCollections).toBe(out.collections); // without --generational every collection is full
    expect(out.verifyFailures).toBe(0);
    expect(out.verifyFailureDetails).toEqual([]);
  });

  it("--generational: nursery collections, stores through the barrier logged and rescanned, the same checks pass", async () => {
    for (const workload of ["gcbench", "mt-gcbench", "deep-recursion", "binary-trees"]) {
      const { code, stdout } = await run("sim", "--workload", workload, "--generational", "--stress=20", "--verify", "--json");
      expect(code, workload).toBe(0);
      const out = JSON.parse(stdout) as Record<string, number>;
      expect(out.minorCollections, workload).toBeGreaterThan(0);
      expect(out.majorCollections, workload).toBeGreaterThan(0); // every 4th stress collection is full
      expect(out.minorCollections! + out.majorCollections!, workload).toBe(out.collections);
      expect(out.verifyFailures, workload).toBe(0);
    }
    const budget = await run("sim", "--workload", "gcbench", "--nursery", "256K", "--json");
    const out = JSON.parse(budget.stdout) as Record<string, number>;
    expect(out.minorCollections).toBeGreaterThan(out.majorCollections!); // the budget triggers them
    expect(out.rememberedSetMax).toBeGreaterThan(0); // gcbench's top-down trees store into old nodes
    expect(out.bytesPromoted).toBeGreaterThan(0);
  });

  it("with no options it collects: the first thing a curious user runs shows the collector at work", async () => {
    const { code, stdout } = await run("sim", "--json");
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as { collections: number }).collections).toBeGreaterThan(0);
  });

  it("a summary table, progress on stderr, and an SVG heap map a browser can open", async () => {
    const svg = join(tmpdir(), `rootwalk-sim-${process.pid}.svg`);
    rmSync(svg, { force: true });
    const { code, stdout, stderr } = await run("sim", "--workload", "mt-gcbench", "--heap", "6M", "--verify", "--scale", "0.2", "--svg", svg);
    expect(code).toBe(0);
    expect(stdout).toMatch(/collections\s+\d+/);
    expect(stdout).toMatch(/fragmentation \(last \/ max\)/);
    expect(stderr).toMatch(/mt-gcbench: \d+ %/);
    expect(existsSync(svg)).toBe(true);
    expect(readFileSync(svg, "utf8")).toMatch(/^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  });

  it("--sweep prints the minimum heap and a row for each of 1x..6x", async () => {
    const { code, stdout } = await run("sim", "--workload", "gcbench", "--sweep", "--scale", "0.01");
    expect(code).toBe(0);
    expect(stdout).toMatch(/minimum heap for gcbench/);
    for (let x = 1; x <= 6; x++) expect(stdout).toMatch(new RegExp(`\\s${x}x\\s`));
  }, 120_000);

  it("bad options: exit 1 with one line", async () => {
    expect((await run("sim", "--workload", "nbody")).code).toBe(1);
    expect((await run("sim", "--heap", "lots")).code).toBe(1);
  });
});
