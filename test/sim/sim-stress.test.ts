import { describe, expect, it } from "vitest";
import { runSimulation, type SimOptions } from "../../src/cli/sim/sim-command.js";

/*
 * The walker and the collector together on simulated stacks (rootwalk sim): stress mode collects
 * at every allocation and evacuates every movable object, verify checks the reachable graph
 * (checksum, every object in a live line, no pointer into free or evacuated memory) after each
 * collection, and every workload checks its own data.
 */
const base: SimOptions = { workload: "deep-recursion", heapBytes: 16 * 1024 * 1024, stress: true, verify: true, scale: 0.02, threads: 4, seed: 7 };

describe("stress + verify", () => {
  it("at least 1,000 collections over the four workloads with zero verification failures", async () => {
    const runs = [
      await runSimulation({ ...base, workload: "deep-recursion", scale: 0.02 }),
      await runSimulation({ ...base, workload: "binary-trees", scale: 1 / 256 }),
      await runSimulation({ ...base, workload: "gcbench", scale: 1 / 256 }),
      await runSimulation({ ...base, workload: "mt-gcbench", scale: 0.002 }),
    ];
    const collections = runs.reduce((n, r) => n + r.collections, 0);
    const moved = runs.reduce((n, r) => n + r.objectsMoved, 0);
    console.log(
      `stress+verify: ${runs.map((r) => r.collections).join(" + ")} = ${collections} collections, ${moved} objects moved, verify failures ${runs.map((r) => r.verifyFailures).join("/")}`,
    );
    expect(collections).toBeGreaterThanOrEqual(1000);
    for (const r of runs) {
      expect(r.verifyFailures).toBe(0);
      expect(r.collections).toBeGreaterThan(0);
      expect(r.objectsMoved).toBeGreaterThan(0);
    }
  }, 240_000);

  it("frames with pushed arguments, a frame pointer and a derived pointer are all on the stacks", async () => {
    const r = await runSimulation({ ...base, workload: "deep-recursion", scale: 0.01 });
    expect(r.maxStackFrames).toBeGreaterThanOrEqual(100);
    expect(r.verifyFailures).toBe(0);
  });
});
