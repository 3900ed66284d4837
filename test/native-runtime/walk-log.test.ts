import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { buildRunEntry, runProcess, ENTRY } from "../support/native-run.js";

/*
 * The walk log (ROOTWALK_WALK_LOG, docs/cli.md "rootwalk run") as a user reads it: a program keeps
 * 0x123456789abcdef1 (above 2^53) live in a callee-saved register across a collection. The log
 * wrote registers as JSON numbers, so the value read back as 0x123456789abcdef0 (the nearest
 * double); every address and register must be a hex string, registers exact to 64 bits.
 */

const PROGRAM = join(repoRoot(), "test", "native-runtime", "programs", "wide-register.ll");
const WIDE = "0x123456789abcdef1";
const scratch = mkdtempSync(join(tmpdir(), "rootwalk-walk-log-"));

beforeAll(() => buildRunEntry(), 300_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the walk log", () => {
  it("writes a register above 2^53 exactly, and every address as a hex string", async () => {
    const log = join(scratch, "walks.jsonl");
    const r = await runProcess(process.execPath, [ENTRY, PROGRAM, "--json", "--progress=0"], 120_000, { ...process.env, ROOTWALK_WALK_LOG: log });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim().split("\n").at(-1)!)).toMatchObject({ result: "0", collections: 1 });
    const stops = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as LoggedStop);
    expect(stops).toHaveLength(1);
    const frames = stops[0]!.threads.flatMap((t) => [...t.frames, ...t.scan.frames]);
    expect(frames.length).toBeGreaterThan(1);
    const hexText = /^0x[0-9a-f]+$/;
    for (const f of frames) {
      for (const value of [f.pc, f.sp, ...(f.cfa === null ? [] : [f.cfa]), ...f.roots.flatMap((x) => Object.values(x))]) expect(value).toMatch(hexText);
      for (const value of Object.values(f.registers)) if (value !== null) expect(value).toMatch(hexText);
    }
    const mainFrame = stops[0]!.threads[0]!.frames.find((f) => f.function?.startsWith("rw_main"));
    expect(mainFrame, "rw_main's frame in the whole walk").toBeDefined();
    expect(Object.values(mainFrame!.registers), "rw_main's callee-saved registers").toContain(WIDE);
  }, 180_000);
});

describe("the walk log under --generational's return barriers", () => {
  it("says per collection and per thread how many frames the scan walked and skipped: together, the whole chunk walk", async () => {
    const log = join(scratch, "barriers.jsonl");
    const program = join(repoRoot(), "test", "native-runtime", "programs", "longjmp-over-barriers.ll");
    const args = [ENTRY, program, "--generational", "--nursery", "64K", "--json", "--progress=0"];
    const r = await runProcess(process.execPath, args, 120_000, { ...process.env, ROOTWALK_WALK_LOG: log });
    expect(r.status, r.stderr).toBe(0);
    const stops = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as LoggedStop & { kind: string; framesScanned: number; framesSkipped: number });
    expect(stops.length).toBeGreaterThan(10);
    for (const stop of stops) {
      expect(stop.kind).toBe("nursery");
      const thread = stop.threads[0]!;
      expect(thread.framesScanned + thread.framesSkipped, `collection ${stop.collection}`).toBe(thread.scan.frames.length);
      expect(stop.framesScanned).toBe(thread.framesScanned);
      expect(stop.framesSkipped).toBe(thread.framesSkipped);
    }
    expect(stops.filter((s) => s.framesSkipped > 0).length).toBeGreaterThan(stops.length / 2);
  }, 180_000);
});

interface LoggedFrame {
  pc: string;
  sp: string;
  cfa: string | null;
  function: string | null;
  registers: Record<string, string | null>;
  roots: Record<string, string>[];
}

interface LoggedStop {
  collection: number;
  threads: { frames: LoggedFrame[]; scan: { frames: LoggedFrame[] }; framesScanned: number; framesSkipped: number }[];
}
