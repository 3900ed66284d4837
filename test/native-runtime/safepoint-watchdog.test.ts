import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parseRunArguments } from "../../src/cli/run-command.js";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { buildRunEntry, runNative } from "../support/native-run.js";

/*
 * The safepoint watchdog: a collection is requested while a thread loops without safepoints.
 * Without the watchdog the run hangs silently; with it the run stops with exit 3 naming the
 * thread, its last safepoint (function + offset) and how long it has run since.
 */

const PROGRAM = join(repoRoot(), "test", "native-runtime", "programs", "no-safepoint-loop.ll");

beforeAll(() => {
  buildRunEntry();
}, 300_000);

describe("safepoint watchdog", () => {
  it("--safepoint-timeout: default 10 s, seconds or ms, 0 = off, bounded", () => {
    expect(parseRunArguments(["p.ll"]).safepointTimeoutMs).toBe(10_000);
    expect(parseRunArguments(["p.ll", "--safepoint-timeout=2.5"]).safepointTimeoutMs).toBe(2_500);
    expect(parseRunArguments(["p.ll", "--safepoint-timeout", "500ms"]).safepointTimeoutMs).toBe(500);
    expect(parseRunArguments(["p.ll", "--safepoint-timeout=3s"]).safepointTimeoutMs).toBe(3_000);
    expect(parseRunArguments(["p.ll", "--safepoint-timeout=0"]).safepointTimeoutMs).toBe(0);
    expect(() => parseRunArguments(["p.ll", "--safepoint-timeout=soon"])).toThrow(/--safepoint-timeout: found soon, expected a duration/);
    expect(() => parseRunArguments(["p.ll", "--safepoint-timeout=100000"])).toThrow(/at most 86400s/);
  });

  it("a thread that never reaches a safepoint again: exit 3 within the timeout, naming it, its last safepoint and how long it ran", async () => {
    const r = await runNative([PROGRAM, "--safepoint-timeout=1", "--progress=0"], 60_000);
    expect(r.status).toBe(3);
    expect(r.stdout).toBe("");
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^rootwalk run: safepoint timeout: thread #0 requested a collection and waited 1\.\d s \(--safepoint-timeout=1000 ms\) for$/);
    expect(lines[1]).toMatch(
      /^ {2}thread #1, which has run (\d+\.\d) s since its last safepoint, spin_forever\+0x[0-9a-f]+ \(return address 0x[0-9a-f]+\), without reaching another$/,
    );
    const ran = Number(/has run (\d+\.\d) s/.exec(lines[1]!)![1]);
    expect(ran).toBeGreaterThanOrEqual(1);
    expect(lines[2]).toMatch(/poll in it/);
    expect(lines).toHaveLength(3);
    // Stopped by the watchdog, not by the test's own time limit.
    expect(r.elapsedMs).toBeLessThan(30_000);
  }, 90_000);
});
