import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../support/run-cli.js";
import { defaultCacheDir } from "../../src/toolchain/llvm-toolchain.js";
import { compileCorpusEntry, corpusEntry } from "../ll/corpus.js";
import { selectLlvm } from "../../src/toolchain/llvm-selection.js";
import { runTool } from "../support/llvm-tools.js";

const stackArgs = compileCorpusEntry(corpusEntry("stack-args"));
const dynamic = compileCorpusEntry(corpusEntry("dynamic-frame"));
const constants = compileCorpusEntry(corpusEntry("constants"));

describe("rootwalk dump --format json", () => {
  it("prints one entry per safepoint with the documented fields", async () => {
    const { code, stdout } = await run("dump", stackArgs, dynamic, "--format", "json");
    expect(code).toBe(0);
    const parsed = JSON.parse(stdout) as { maps: { format: string; safepoints: Record<string, unknown>[] }[] };
    expect(parsed.maps).toHaveLength(2);
    for (const map of parsed.maps) {
      expect(map.format).toBe("llvm-v3");
      for (const s of map.safepoints) {
        expect(s.returnAddress).toMatch(/^0x[0-9a-f]+$/);
        expect(typeof s.function).toBe("string");
        expect(s.stackSizeBytes).toMatch(/^\d+$/); // u64 as a decimal string
        expect(s.id).toMatch(/^\d+$/);
        expect(Array.isArray(s.roots)).toBe(true);
        expect(s.frameSizeBytes === null || typeof s.frameSizeBytes === "number").toBe(true);
      }
    }
    const pushed = parsed.maps[0]!.safepoints.filter((s) => s.frameSizeDiffers === true);
    expect(pushed.length).toBeGreaterThanOrEqual(2);
    for (const s of pushed) expect(s.frameSizeBytes as number).toBeGreaterThan(Number(s.stackSizeBytes));
    const dyn = parsed.maps[1]!.safepoints;
    expect(
      dyn.every((s) => s.dynamicFrame === true && s.stackSizeBytes === "18446744073709551615" && s.frameSizeBytes === null && s.frameRule === "rbp+8"),
    ).toBe(true);
    // Locations are spelled [sp+16], rbx, const 0.
    const spelled = parsed.maps.flatMap((m) => m.safepoints.flatMap((s) => (s.roots as { base: string }[]).map((r) => r.base)));
    expect(spelled.every((l) => /^(\[(sp|rbp|rbx)([+-]\d+)?\]|[a-z0-9]+|const -?\d+)$/.test(l))).toBe(true);
  });

  it("spells large constants exactly", async () => {
    const { stdout } = await run("dump", constants, "--format=json");
    expect(stdout).toContain("const 9223372036854775808");
    expect(stdout).toContain("const 9223372036854775807");
  });
});

describe("rootwalk dump (text)", () => {
  it("shows function names, effective frame sizes and the pushed-argument call sites", async () => {
    const { code, stdout } = await run("dump", stackArgs);
    expect(code).toBe(0);
    expect(stdout).toMatch(/frame \d+ bytes\s+cfa sp\+\d+\s+\(differs from stack size \d+: pushed arguments\)/);
    expect(stdout).toMatch(/statepoint id 2882400000/);
  });
});

describe("bad input", () => {
  const dir = join(defaultCacheDir(), "..", "cli-test");
  mkdirSync(dir, { recursive: true });

  it("a truncated stack map section: exit 1 and one line naming the file, the offset and the problem", async () => {
    const bytes = new Uint8Array(readFileSync(stackArgs));
    // Find the section by its header via the tool's own loader, then corrupt a location kind.
    const { loadObjectStackMaps } = await import("../../src/loader/object-file.js");
    const loaded = loadObjectStackMaps(bytes, stackArgs)!;
    const blob = loaded.rawBlobs[0]!;
    const kindAt = loaded.section.offset + blob.recordOffset(0) + 16;
    bytes[kindAt] = 0x42;
    const bad = join(dir, "bad-kind.o");
    writeFileSync(bad, bytes);
    for (const format of ["readobj", "text", "json"]) {
      const { code, stdout, stderr } = await run("dump", bad, "--format", format);
      expect(code).toBe(1);
      expect(stdout).toBe("");
      expect(stderr.trim().split("\n")).toHaveLength(1);
      expect(stderr).toContain(bad);
      expect(stderr).toContain(`offset 0x${kindAt.toString(16)}`);
      expect(stderr).toContain("found 66, expected 1..5");
    }
  });

  it("not an ELF file, a missing file, an unknown format", async () => {
    const notElf = join(dir, "not-elf.o");
    writeFileSync(notElf, "hello");
    for (const format of ["readobj", "text"]) {
      expect((await run("dump", notElf, "--format", format)).stderr).toMatch(/not-elf\.o: ELF header at offset 0x0: found 5 bytes, expected 64/);
    }
    expect((await run("dump", join(dir, "missing.o"))).stderr).toMatch(/missing\.o: found ENOENT, expected a readable file/);
    expect((await run("dump", stackArgs, "--format", "yaml")).code).toBe(1);
    expect((await run("frobnicate")).code).toBe(1);
  });
});

describe("rootwalk dump --format readobj --readobj-version", () => {
  it("prints what that version's llvm-readobj --stackmap prints, for objects of either LLVM", async () => {
    const objects = [14, 19].map((major) => compileCorpusEntry(corpusEntry("constants"), { llvm: selectLlvm(String(major), "test") }));
    for (const object of objects) {
      for (const major of [14, 19]) {
        const r = await run("dump", object, "--format", "readobj", "--readobj-version", String(major));
        expect(r.code).toBe(0);
        expect(r.stdout).toBe(runTool(selectLlvm(String(major), "test").tool("llvm-readobj"), ["--stackmap", object]));
      }
    }
  });

  it("a version outside 14..19: exit 1 and one line, whatever the format (it was ignored without --format readobj)", async () => {
    for (const format of ["readobj", "text", "json"]) {
      const r = await run("dump", constants, "--format", format, "--readobj-version", "13");
      expect([r.code, r.stdout], format).toEqual([1, ""]);
      expect(r.stderr).toMatch(/^rootwalk: --readobj-version: found 13, expected 14 \| 15 \| 16 \| 17 \| 18 \| 19\n$/);
    }
  });

  it("a good version with another format: exit 1 and one line (it changed nothing, without a word)", async () => {
    for (const format of [[], ["--format", "json"]]) {
      const r = await run("dump", constants, ...format, "--readobj-version", "19");
      expect([r.code, r.stdout]).toEqual([1, ""]);
      expect(r.stderr).toBe(
        `rootwalk: --readobj-version: found 19 with --format ${format[1] ?? "text"}, expected --format readobj (the only output it changes)\n`,
      );
    }
  });
});
