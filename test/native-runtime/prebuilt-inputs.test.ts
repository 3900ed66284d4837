import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { NATIVE_PROGRAMS } from "../native-programs/programs.js";
import { buildRunEntry, runNative, runNativeJson } from "../support/native-run.js";
import { run as runCli } from "../support/run-cli.js";

/*
 * `rootwalk run` takes what a user built with their own front end and flags: relocatable
 * objects (.o) linked as they are, and shared libraries (.so) loaded as they are, alone or mixed
 * with .ll sources. The objects here are built the way a user would: `rootwalk compile` for the
 * .o, then plain `gcc -shared` for the .so (no rootwalk involved in that link).
 */

const OUT = join(repoRoot(), ".cache", "prebuilt-inputs");

function program(name: string): (typeof NATIVE_PROGRAMS)[number] {
  const entry = NATIVE_PROGRAMS.find((p) => p.name === name);
  if (entry === undefined) throw new Error(`no native program ${name}`);
  return entry;
}

async function userCompile(mode: "--statepoint" | "--plimmix", source: string, object: string): Promise<void> {
  const r = await runCli("compile", mode, source, "-o", object);
  if (r.code !== 0) throw new Error(`rootwalk compile ${source}: exit ${r.code}\n${r.stderr}`);
}

beforeAll(() => {
  mkdirSync(OUT, { recursive: true });
  buildRunEntry();
}, 300_000);

describe("rootwalk run with prebuilt inputs", () => {
  it("a statepoint program as a .o and as a .so linked by gcc (with and without a SONAME): same result as from .ll, collected and verified", async () => {
    const entry = program("sp-linked-list");
    const object = join(OUT, "sp-linked-list.o");
    await userCompile("--statepoint", entry.files[0]!, object);
    const library = join(OUT, "libsp-linked-list.so");
    const link = spawnSync("gcc", ["-shared", "-Wl,-z,notext", "-o", library, object], { encoding: "utf8" });
    expect(link.stderr).toBe("");
    expect(link.status).toBe(0);
    // A library whose DT_SONAME is not its file name (the program library records the SONAME).
    const named = join(OUT, "libsp-linked-list-named.so");
    const linkNamed = spawnSync("gcc", ["-shared", "-Wl,-z,notext", "-Wl,-soname,libsp-linked-list.so.1", "-o", named, object], { encoding: "utf8" });
    expect(linkNamed.status).toBe(0);
    for (const input of [object, library, named]) {
      const r = await runNativeJson([input, "--stress=20", "--verify", "--heap", "16M"], 120_000);
      expect(r.result).toBe(String(entry.expectedResult));
      expect(r.collections).toBeGreaterThan(0);
      expect(r.objectsMoved).toBeGreaterThan(0);
      expect(r.rootsRelocated).toBeGreaterThan(0);
      expect(r.verifyFailures).toBe(0);
    }
  }, 180_000);

  it("a plimmix program from one .ll and one prebuilt .o", async () => {
    const entry = program("pl-two-modules");
    const objectB = join(OUT, "pl-mod-b.o");
    await userCompile("--plimmix", entry.files[1]!, objectB);
    const r = await runNativeJson([entry.files[0]!, objectB, "--plimmix", "--stress=3", "--verify", "--heap", "16M"], 120_000);
    expect(r.result).toBe(String(entry.expectedResult));
    expect(r.collections).toBeGreaterThan(0);
    expect(r.objectsMoved).toBeGreaterThan(0);
    expect(r.verifyFailures).toBe(0);
  }, 180_000);

  it("refuses what is not an x86-64 object or shared library: one line naming the file, exit 1", async () => {
    const notElf = join(OUT, "not-elf.o");
    writeFileSync(notElf, "this is text\n");
    const text = await runNative([notElf], 60_000);
    expect(text.status).toBe(1);
    expect(text.stderr).toBe(
      `rootwalk run: program: found ${notElf}, expected PROGRAM.ll, an x86-64 ELF object (.o) or shared library (.so); this is not an ELF file\n`,
    );

    const executable = process.execPath; // node itself: an ELF executable, not a library
    const exe = await runNative([executable], 60_000);
    expect(exe.status).toBe(1);
    expect(exe.stderr).toMatch(new RegExp(`^rootwalk run: program: found ${executable.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}, expected .*executable.*\\n$`));
    expect(exe.stdout).toBe("");
  }, 120_000);
});
