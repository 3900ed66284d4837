import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../support/run-cli.js";
import { SPLIT_STACK_FIXTURE as FIXTURE_PATH } from "../support/fixtures.js";

describe("rootwalk walk", () => {
  const fixture = JSON.parse(readFileSync(FIXTURE_PATH, "utf8")) as { expectedRoots: { slot: string; value: string }[] };
  const expected = fixture.expectedRoots.map((r) => ({ slot: `0x${Number(r.slot).toString(16)}`, value: `0x${Number(r.value).toString(16)}` }));

  for (const method of ["segments", "find-ranges", "geometry"]) {
    it(`--json --method ${method} prints the 302 expected roots in walk order`, async () => {
      const { code, stdout } = await run("walk", FIXTURE_PATH, "--json", "--method", method);
      expect(code).toBe(0);
      const out = JSON.parse(stdout) as { roots: { slot: string; value: string }[]; transitions: number; frames: number; stoppedAt: string };
      expect(out.roots).toEqual(expected);
      expect(out.transitions).toBe(3);
      expect(out.frames).toBe(302);
      expect(out.stoppedAt).toMatch(/^0x[0-9a-f]+$/);
    });
  }

  it("--method naive falls short, and the text form says where and why it stopped", async () => {
    const { stdout } = await run("walk", FIXTURE_PATH, "--method", "naive");
    expect(stdout).toMatch(/24 frames, 24 roots, 0 stacklet transitions \(method naive\)/);
    expect(stdout).toMatch(/stopped at 0x403d02: unknown-return-address/);
  });

  it("bad arguments exit 1 with one line", async () => {
    expect((await run("walk", FIXTURE_PATH, "--method", "psychic")).code).toBe(1);
    const missing = await run("walk", "/nonexistent.json");
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim().split("\n")).toHaveLength(1);
  });

  // f's frame (16 bytes at 0x1008) returns through a slot that holds the runtime's return-barrier
  // trampoline: a snapshot has no barrier table, so the walk ends there, naming the slot.
  it("a return address at the snapshot's rw_return_barrier_trampoline ends the walk naming its slot", async () => {
    const word = (n: number): string => Buffer.from(new BigUint64Array([BigInt(n)]).buffer).toString("hex");
    const snapshot = (functions: { name: string; addr: string; stackSize: number }[]): string =>
      JSON.stringify({
        memory: [{ base: "0x1000", hex: word(0x401010) + word(0x5eed0) + word(0) + word(0x500000) + word(0) }],
        functions,
        callsites: [{ ra: "0x401010", fn: "0x401000", rootSpOffsets: [0] }],
        entryRaSlot: "0x1000",
      });
    const f = { name: "f", addr: "0x401000", stackSize: 16 };
    const dir = mkdtempSync(join(tmpdir(), "rw-walk-barrier-"));
    try {
      writeFileSync(join(dir, "armed.json"), snapshot([f, { name: "rw_return_barrier_trampoline", addr: "0x500000", stackSize: 0 }]));
      const armed = await run("walk", join(dir, "armed.json"), "--method", "naive");
      expect(armed.code).toBe(0);
      expect(armed.stdout).toMatch(/1 frames, 1 roots/);
      expect(armed.stdout).toContain("return-barrier (return-address slot 0x1018 holds the return-barrier trampoline 0x500000 and no table entry");
      writeFileSync(join(dir, "unnamed.json"), snapshot([f]));
      expect((await run("walk", join(dir, "unnamed.json"), "--method", "naive")).stdout).not.toContain("return-barrier");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
