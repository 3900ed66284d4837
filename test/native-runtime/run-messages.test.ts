import { spawn } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { ENTRY, buildRunEntry, runNative } from "../support/native-run.js";

/*
 * What `rootwalk run` tells a person while and after it runs (issue 17 item 12): where the heap
 * map went, what a collection that cannot start is waiting for, and that Ctrl-C was seen.
 */

const PROGRAMS = join(repoRoot(), "test", "native-runtime", "programs");
const SPINNER = join(PROGRAMS, "no-safepoint-loop.ll");
const scratch = mkdtempSync(join(tmpdir(), "rootwalk-run-messages-"));

beforeAll(() => {
  buildRunEntry();
}, 300_000);

/** Starts `rootwalk run args`, sends SIGINT once stderr matches `when`; resolves at exit. */
function interruptWhen(args: readonly string[], when: RegExp, timeoutMs: number): Promise<{ status: number | null; signal: string | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [ENTRY, ...args], { cwd: repoRoot(), stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    let sent = false;
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      if (!sent && when.test(stderr)) {
        sent = true;
        child.kill("SIGINT");
      }
    });
    child.stdout.resume();
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stderr });
    });
  });
}

describe("rootwalk run says what it is doing", () => {
  it("--svg: the path of the heap map on stderr", async () => {
    const svg = join(scratch, "map.svg");
    const r = await runNative([join(PROGRAMS, "list-tree.ll"), "--no-gc", "--progress=0", "--svg", svg], 120_000);
    expect(r.status).toBe(0);
    expect(existsSync(svg)).toBe(true);
    expect(r.stderr).toContain(`rootwalk run: heap map written to ${svg}\n`);
  }, 180_000);

  it("--progress while a collection waits for a thread without safepoints: who and where, then Ctrl-C: 'interrupted', exit 130", async () => {
    const r = await interruptWhen([SPINNER, "--safepoint-timeout=0", "--progress=0.3"], /for [1-9]\.\d s\n/, 120_000);
    // "rootwalk run: 1.2 s, collection pending, waiting for thread #1 at spin_forever+0x6 for 1.1 s"
    expect(r.stderr).toMatch(/^rootwalk run: \d+\.\d s, collection pending, waiting for thread #1 at spin_forever\+0x[0-9a-f]+ for \d+\.\d s$/m);
    expect(r.stderr).not.toMatch(/0 collections/);
    expect(r.stderr.trim().split("\n").at(-1)).toBe("rootwalk run: interrupted");
    expect(r.signal).toBeNull();
    expect(r.status).toBe(130);
  }, 180_000);
});
