import { readFileSync } from "node:fs";
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
});
