import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { buildRunEntry, runNative } from "../support/native-run.js";

/*
 * `rootwalk run --json | jq` (issue 17 item 8): stdout carries one JSON object and nothing else,
 * on success (the program's own printf/puts/write(1) output goes to stderr: fd 1 points there
 * while it runs) and on failure ({error, exitCode, message, ...what was known}), whether the
 * failure is found in TypeScript (bad input), in a collector callback (heap exhausted) or in the
 * runtime itself (a fault: runtime.c json_failure).
 */

const PROGRAMS = join(repoRoot(), "test", "native-runtime", "programs");

beforeAll(() => {
  buildRunEntry();
}, 300_000);

/** stdout as exactly one JSON object (one line). */
function onlyJson(stdout: string): Record<string, unknown> {
  const lines = stdout.split("\n").filter((l) => l !== "");
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

describe("rootwalk run --json", () => {
  it("a program that prints: its printf, puts and write(1) output on stderr, the JSON alone on stdout", async () => {
    const r = await runNative([join(PROGRAMS, "prints.ll"), "--json", "--stress", "--verify"], 120_000);
    expect(r.status).toBe(0);
    expect(onlyJson(r.stdout)).toMatchObject({ result: "7", verifyFailures: 0 });
    expect(r.stderr).toContain("printf 42\n");
    expect(r.stderr).toContain("puts\n");
    expect(r.stderr).toContain("write\n");
    // Without --json the program's output stays on stdout.
    const plain = await runNative([join(PROGRAMS, "prints.ll"), "--progress=0"], 120_000);
    expect(plain.stdout).toMatch(/printf 42\nputs\n/);
    expect(plain.stdout).toContain("write\n");
  }, 240_000);

  it("failures: one object with error, exitCode and message, and the exit code as before", async () => {
    const badInput = await runNative(["/nonexistent.ll", "--json"], 60_000);
    expect(badInput.status).toBe(1);
    expect(onlyJson(badInput.stdout)).toEqual({ error: "bad-input", exitCode: 1, message: expect.stringMatching(/nonexistent\.ll/) });

    // Found in a collector callback; what was known: the collections before it.
    const exhausted = await runNative([join(PROGRAMS, "heap-exhausted.ll"), "--heap", "4M", "--json"], 120_000);
    expect(exhausted.status).toBe(3);
    const e = onlyJson(exhausted.stdout);
    expect(e).toEqual({
      error: "runtime-failure",
      exitCode: 3,
      message: expect.stringMatching(/^heap exhausted: \d+ live bytes of 4194304; try --heap \d+M$/),
      collections: expect.any(Number),
    });
    expect(e["collections"]).toBeGreaterThan(0);

    // Found by the runtime's fault handler (a stale pointer into poisoned memory).
    const fault = await runNative([join(PROGRAMS, "stale-pointer.ll"), "--plimmix", "--stress", "--json"], 120_000);
    expect(fault.status).toBe(3);
    expect(onlyJson(fault.stdout)).toEqual({
      error: "runtime-failure",
      exitCode: 3,
      message: expect.stringMatching(/^segmentation fault in thread #0 at rw_main\+0x[0-9a-f]+/),
      collections: expect.any(Number),
    });
  }, 300_000);
});
