// rootwalk help / CMD --help for every command, option spellings shared by sim and run, and dump
// carrying on past a bad file like llvm-readobj, reading stdin for `-`, AArch64 dumped, other machines refused.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { COMMAND_USAGE } from "../../src/cli/command-usage.js";
import { UnsupportedInputError } from "../../src/errors.js";
import { loadObjectStackMaps } from "../../src/loader/object-file.js";
import { loadPlimmixFromElf } from "../../src/loader/plimmix-loader.js";
import { loadOcamlFromElf } from "../../src/loader/ocaml-loader.js";
import { registerFile, registerStackMapBytes } from "../../src/loader/register-maps.js";
import { AARCH64 } from "../../src/arch/aarch64.js";
import { ElfFile } from "../../src/elf/elf-file.js";
import { relocatedSection } from "../../src/elf/relocate.js";
import { listSafepoints } from "../../src/safepoints/safepoint-info.js";
import { SafepointRegistry } from "../../src/safepoints/registry.js";
import { activeLlvm } from "../../src/toolchain/llvm-selection.js";
import { runTool } from "../../src/toolchain/llvm-toolchain.js";
import { run } from "../support/run-cli.js";
import { buildRunEntry, OUT_DIR } from "../support/native-run.js";

const scratch = mkdtempSync(join(tmpdir(), "rootwalk-help-dump-"));
const STACKMAP_IR = `declare void @f()
define void @g() {
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 7, i32 0)
  call void @f()
  ret void
}
declare void @llvm.experimental.stackmap(i64, i32, ...)
`;

/** One object per target, built by the selected llc. */
function objectFor(triple: string): string {
  const source = join(scratch, "sm.ll");
  writeFileSync(source, STACKMAP_IR);
  const out = join(scratch, `sm-${triple}.o`);
  runTool(activeLlvm().tool("llc"), ["-O2", `-mtriple=${triple}`, "-filetype=obj", source, "-o", out]);
  return out;
}

describe("help", () => {
  for (const command of Object.keys(COMMAND_USAGE)) {
    it(`rootwalk help ${command} and rootwalk ${command} --help print its usage and exit 0`, async () => {
      const viaHelp = await run("help", command);
      expect(viaHelp.code).toBe(0);
      expect(viaHelp.stdout).toMatch(new RegExp(`^usage: rootwalk ${command}`));
      if (command !== "help") {
        // --help wins over everything else on the line: demo must not start running.
        const viaFlag = await run(command, "--help", "--bogus");
        expect(viaFlag).toEqual({ ...viaHelp, stdout: viaHelp.stdout });
        expect((await run(command, "-h")).stdout).toBe(viaHelp.stdout);
      }
    });
  }

  it("every option each command accepts is in its usage line", async () => {
    expect(COMMAND_USAGE["run"]!.usage).toMatch(/--svg FILE/);
    expect(COMMAND_USAGE["run"]!.usage).toMatch(/--opt-flag/);
    expect(COMMAND_USAGE["sim"]!.usage).toMatch(/--stress\[=N\]/);
    expect(COMMAND_USAGE["roots"]!.usage).toMatch(/--max-depth N/);
    expect(COMMAND_USAGE["roots"]!.options["--max-depth N"]).toMatch(/default 2000000/);
    const unknown = await run("help", "frobnicate");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/help: found frobnicate, expected dump \| walk/);
  });

  it("help and --version refuse words they would ignore: exit 1, one line, nothing printed", async () => {
    for (const [argv, line] of [
      [["help", "dump", "walk"], "rootwalk: help: found dump walk, expected at most one COMMAND\n"],
      [["--version", "--json"], "rootwalk: --version: found --json, expected no arguments\n"],
    ] as const) {
      const r = await run(...argv);
      expect([r.code, r.stdout, r.stderr]).toEqual([1, "", line]);
    }
  });

  it("--opt=value and --opt value both work; sim takes --stress=N as run does", async () => {
    const a = await run("sim", "--workload=binary-trees", "--scale=0.01", "--stress=50", "--json");
    const b = await run("sim", "--workload", "binary-trees", "--scale", "0.01", "--stress=50", "--json");
    expect(a.code).toBe(0);
    const ja = JSON.parse(a.stdout) as { collections: number };
    const jb = JSON.parse(b.stdout) as { collections: number };
    expect(ja.collections).toBe(jb.collections);
    const every = JSON.parse((await run("sim", "--workload=binary-trees", "--scale=0.01", "--stress", "--json")).stdout) as { collections: number };
    // Every 50th allocation collects about 50 times less often than every allocation.
    expect(ja.collections).toBeGreaterThan(0);
    expect(every.collections).toBeGreaterThan(ja.collections * 20);
    expect((await run("sim", "--stress=0")).stderr).toMatch(/--stress: found 0, expected a whole number/);
  });
});

describe("dump", () => {
  it("reports each bad file, prints the good ones, exits 1 at the end", async () => {
    const good = objectFor("x86_64-linux-gnu");
    const text = join(scratch, "notes.txt");
    writeFileSync(text, "root:x:0:0:root:/root:/bin/bash\n".repeat(4));
    const r = await run("dump", text, join(scratch, "missing.o"), good);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/sm-x86_64-linux-gnu.o: llvm-v3 blob #0 .* 1 functions, 1 records/);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^rootwalk: .*notes.txt: ELF magic at offset 0x0: found 72 6f 6f 74, expected 7f 45 4c 46$/);
    expect(lines[1]).toMatch(/missing.o: found ENOENT, expected a readable file/);
  });

  it("reads stdin for -, named <stdin>", () => {
    const good = objectFor("x86_64-linux-gnu");
    buildRunEntry();
    // Through a real process of the built CLI: stdin is the object's bytes.
    const r = spawnSync(process.execPath, [join(OUT_DIR, "src", "cli", "main.js"), "dump", "-"], { input: readFileSync(good), encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^<stdin>: llvm-v3 blob #0 at section offset 0x[0-9a-f]+: 1 functions, 1 records/);
    const twice = spawnSync(process.execPath, [join(OUT_DIR, "src", "cli", "main.js"), "dump", "-", "-"], { input: "", encoding: "utf8" });
    expect(twice.status).toBe(1);
    expect(twice.stderr).toMatch(/stdin at most once/);
  });

  it("an AArch64 object is dumped (test/toolchain/corpus-aarch64.test.ts checks its register names) and registered, never beside x86-64 maps", async () => {
    const a64 = objectFor("aarch64-linux-gnu");
    const good = objectFor("x86_64-linux-gnu");
    expect(runTool(activeLlvm().tool("llvm-readobj"), ["--file-headers", a64])).toMatch(/Machine: EM_AARCH64/);
    const readobj = await run("dump", "--format", "readobj", a64);
    expect(readobj.code).toBe(0);
    expect(readobj.stdout).toBe(runTool(activeLlvm().tool("llvm-readobj"), ["--stackmap", a64]));
    const text = await run("dump", a64);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/g at \.text\+0x0, stack size 16\n\s+0x8 {2}g\+0x8 {2}stackmap id 7 /);
    const bytes = readFileSync(a64);
    expect(loadObjectStackMaps(bytes, a64)?.architecture.name).toBe("AArch64");
    // No _GC_MAP_ or frame-table symbols: those loaders find nothing rather than refusing.
    expect(loadPlimmixFromElf(bytes, a64)).toBeUndefined();
    expect(loadOcamlFromElf(bytes, a64)).toBeUndefined();
    // Registered for walking (test/walker/aarch64-core.test.ts walks them); one registry walks one
    // architecture, so an x86-64 map joining AArch64 ones is refused by name.
    const registry = new SafepointRegistry();
    registerFile(registry, bytes, { path: a64 });
    expect(registry.snapshot().architecture?.name).toBe("AArch64");
    expect(() => registerFile(registry, readFileSync(good), { path: good })).toThrow(
      /found x86-64 stack maps, expected AArch64 stack maps like the modules already registered: one registry walks one architecture/,
    );
  });

  it("a section given as bytes is registered for the architecture the caller names (x86-64 when it names none)", () => {
    const a64 = objectFor("aarch64-linux-gnu");
    const section = relocatedSection(ElfFile.parse(readFileSync(a64)), ".llvm_stackmaps")!.bytes;
    const told = new SafepointRegistry();
    registerStackMapBytes(told, section, { name: "gc_init@a64", architecture: AARCH64 });
    expect(told.snapshot().architecture?.name).toBe("AArch64");
    expect(told.snapshot().modules.size).toBe(1);
    // The same safepoints as the file's (addresses of the object's .text, no load bias; frame
    // sizes may differ: the file's .eh_frame rows correct them, the bytes alone have none).
    const file = new SafepointRegistry();
    registerFile(file, readFileSync(a64), { path: a64 });
    expect(listSafepoints(told.snapshot()).map((s) => s.returnAddress)).toEqual(listSafepoints(file.snapshot()).map((s) => s.returnAddress));
    const untold = new SafepointRegistry();
    registerStackMapBytes(untold, section, { name: "gc_init@a64" });
    expect(untold.snapshot().architecture?.name).toBe("x86-64");
  });

  it("an object of any other machine is refused by name, by dump and by the library", async () => {
    const other = join(scratch, "sm-riscv.o");
    const bytes = readFileSync(objectFor("x86_64-linux-gnu"));
    new DataView(bytes.buffer, bytes.byteOffset).setUint16(18, 243, true); // EM_RISCV
    writeFileSync(other, bytes);
    for (const format of ["text", "json", "readobj"]) {
      const r = await run("dump", "--format", format, other);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toMatch(
        /^rootwalk: .*sm-riscv.o: ELF header e_machine at offset 0x12: found 243, supported EM_X86_64 \(62\) or EM_AARCH64 \(183\)/,
      );
    }
    for (const load of [loadObjectStackMaps, loadPlimmixFromElf, loadOcamlFromElf]) {
      expect(() => load(bytes, other)).toThrow(UnsupportedInputError);
    }
  });
});
