import { describe, expect, it } from "vitest";
import { run } from "../support/run-cli.js";

// `sim --poison` is spelled as in `run`; with it (and with --stress, which implies it) every
// collection poisons what it frees, and a correct workload still verifies clean.
describe("rootwalk sim --poison", () => {
  it("poisons without stress and says so; the heap verifies", async () => {
    const r = await run("sim", "--workload", "gcbench", "--poison", "--verify", "--scale", "0.2", "--heap", "4M");
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/mode\s+normal, verify, poison, scale 0.2/);
    expect(Number(/collections\s+(\d+)/.exec(r.stdout)![1])).toBeGreaterThan(0);
    expect(r.stdout).toMatch(/verify failures\s+0/);
    expect(Number(/poisoned \(total\)\s+([\d.]+) MiB/.exec(r.stdout)![1])).toBeGreaterThan(0);
  });

  it("--stress implies it", async () => {
    const r = await run("sim", "--workload", "deep-recursion", "--stress", "--scale", "0.005");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/mode\s+stress \(collect at every allocation, evacuate all\), poison, scale 0.005/);
    expect(Number(/poisoned \(total\)\s+([\d.]+) MiB/.exec(r.stdout)![1])).toBeGreaterThan(0);
  });

  it("without it (and without --stress) nothing is poisoned", async () => {
    const r = await run("sim", "--workload", "gcbench", "--scale", "0.2", "--heap", "4M");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/mode\s+normal, scale 0.2/);
    expect(Number(/collections\s+(\d+)/.exec(r.stdout)![1])).toBeGreaterThan(0);
    expect(r.stdout).toMatch(/poisoned \(total\)\s+0.00 MiB/);
  });
});
