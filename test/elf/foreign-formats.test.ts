import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ElfFile } from "../../src/elf/elf-file.js";
import { UnsupportedInputError } from "../../src/errors.js";
import { repoRoot, runTool } from "../../src/toolchain/llvm-toolchain.js";
import { run } from "../support/run-cli.js";

/*
 * Objects of other systems are refused by name (issue 20 item 6: "Mach-O and Windows refused with a
 * clear message"), not as "ELF magic: found cf fa ed fe". The objects are llc's own, built for a
 * macOS and a Windows triple from the corpus.
 */

const scratch = mkdtempSync(join(tmpdir(), "rootwalk-foreign-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const SOURCE = join(repoRoot(), "test", "ll", "call-chain.ll");

function objectFor(triple: string): string {
  const out = join(scratch, `${triple}.o`);
  runTool("llc", [`-mtriple=${triple}`, "-filetype=obj", SOURCE, "-o", out]);
  return out;
}

describe("objects of other systems", () => {
  for (const [triple, name] of [
    ["x86_64-apple-macosx", "a 64-bit Mach-O file \\(macOS\\) \\(cf fa ed fe\\)"],
    ["arm64-apple-macosx", "a 64-bit Mach-O file \\(macOS\\) \\(cf fa ed fe\\)"],
    ["x86_64-pc-windows-msvc", "a COFF object \\(Windows, x86-64\\) \\(64 86"],
  ] as const) {
    it(`${triple}: dump names the format and what rootwalk reads, exit 1`, async () => {
      const r = await run("dump", objectFor(triple));
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`^rootwalk: .*: file format at offset 0x0: found ${name}.*, supported ELF \\(Linux, x86-64 and AArch64\\)\\n$`));
    });
  }

  it("a Windows executable (MZ) is named too, and the library throws the typed error", () => {
    expect(() => ElfFile.parse(new Uint8Array(Buffer.concat([Buffer.from("MZ"), Buffer.alloc(126)])))).toThrow(UnsupportedInputError);
    expect(() => ElfFile.parse(new Uint8Array(Buffer.concat([Buffer.from("MZ"), Buffer.alloc(126)])))).toThrow(/PE\/COFF file \(Windows\)/);
  });
});
