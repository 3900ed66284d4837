import { X86_64 } from "../../src/arch/x86-64.js";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AARCH64 } from "../../src/arch/aarch64.js";
import { walkCore, type CoreWalk } from "../../src/cli/roots-command.js";
import { SimulatedMemory } from "../../src/memory/memory.js";
import { RegisterContext } from "../../walker/register-context.js";
import { walkStack } from "../../walker/walk-stack.js";
import {
  CORE_BUILDS,
  GDB_SETUP,
  bareFunctionName,
  buildCoreProgram,
  expectFramesEqualGdb,
  expectRootsEqualGdbReads,
  objectsAddress,
  type CoreBuild,
} from "../support/aarch64-core-programs.js";
import { compareWithGdb, gdbReadCore } from "../support/gdb-compare.js";
import { AARCH64_SYSROOT } from "../support/qemu-aarch64.js";
import { run as runCli } from "../support/run-cli.js";

/*
 * `rootwalk roots` on AArch64 cores written by qemu-user (only NT_PRSTATUS, NT_PRPSINFO and
 * NT_AUXV: no NT_FILE), against gdb-multiarch reading the same core. The five builds of one
 * program (test/support/aarch64-core-programs.ts) crash under qemu-aarch64, one core each. The
 * dynamically linked ones get their libraries (libc's abort and raise frames) from the dynamic
 * linker's list in the core's memory, found under the cross sysroot; the PIE's load bias comes
 * from AT_ENTRY (gdb-multiarch cannot place a PIE from a qemu core: the page with the program
 * headers is not dumped, so its frames are checked against the default core's).
 * For the csr, fp and default cores every frame gdb shows (it stops at main) must agree: pc, SP,
 * CFA and each of x19-x30 gdb knows. In every core, each root's value must be what gdb reads at
 * the root's slot and the address of an object main passed. The managed part of each stack is walked again by
 * walkStack with the cross-check on (fast loop against the general unwinder: on AArch64 the fast
 * rule admits no frame, so the unwinder takes them all and both must agree).
 */

const SYSROOT = AARCH64_SYSROOT;

interface Crashed {
  program: string;
  core: string;
  walk: CoreWalk;
}

const scratch = mkdtempSync(join(tmpdir(), "rootwalk-a64-core-"));
const crashed = new Map<string, Crashed>();

/** Builds the program of `b` and crashes it under qemu-aarch64: its core. */
function buildAndCrash(b: CoreBuild): Crashed {
  const program = buildCoreProgram(b);
  // qemu-user writes qemu_<prog>_<date>-<time>_<pid>.core into the current folder.
  const cwd = join(scratch, b.name);
  mkdirSync(cwd);
  const r = spawnSync("sh", ["-c", 'ulimit -c unlimited && exec qemu-aarch64 -L "$1" "$0"', program, SYSROOT], { cwd, encoding: "utf8", timeout: 60_000 });
  expect(r.signal, r.stderr).toBe("SIGABRT");
  const written = readdirSync(cwd).find((f) => f.endsWith(".core"));
  expect(written, `qemu wrote no core in ${cwd}`).toBeDefined();
  const core = join(cwd, written!);
  return { program, core, walk: walkCore(core, program, undefined, SYSROOT) };
}

beforeAll(() => {
  for (const b of CORE_BUILDS) crashed.set(b.name, buildAndCrash(b));
}, 300_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe.each(["csr", "fp", "default"])("an AArch64 qemu-user core (%s build) against gdb-multiarch", (name) => {
  it("frames equal gdb's: pc, SP, CFA and every one of x19-x30 gdb knows", () => {
    const c = crashed.get(name)!;
    const { frames, registers } = expectFramesEqualGdb(c.program, c.core, c.walk);
    console.log(`AArch64 ${name} core: ${frames} frames and ${registers} callee-saved registers equal to gdb-multiarch's`);
    expect(frames).toBeGreaterThanOrEqual(8); // libc's abort frames, stop_here, the four managed and C frames, main
  });
});

describe.each(CORE_BUILDS.map((b) => b.name))("the roots of the AArch64 %s core", (name) => {
  it("every root is what gdb reads at its slot, and an object main passed", () => {
    const c = crashed.get(name)!;
    const roots = expectRootsEqualGdbReads(c.program, c.core, c.walk);
    console.log(`AArch64 ${name} core: ${roots} roots equal to gdb-multiarch's reads of their slots`);
  });
});

describe("an AArch64 qemu-user core of a PIE (load bias from AT_ENTRY)", () => {
  it("walks the same frames as the non-PIE build (default), with roots at the biased objects", () => {
    const c = crashed.get("pie")!;
    const thread = c.walk.threads[0]!;
    expect(thread.stopReason, thread.stopDetail).toBe("stack-end");
    const program = c.walk.modules.modules.find((m) => m.path === c.program)!;
    expect(program.loadBias).toBeGreaterThan(0);
    const names = thread.frames.map(bareFunctionName);
    const reference = crashed.get("default")!.walk.threads[0]!.frames.map(bareFunctionName);
    expect(names).toEqual(reference);
    const objects = objectsAddress(c.program, program.loadBias);
    const roots = thread.frames.flatMap((f) => f.roots.map((r) => r.value));
    expect(new Set(roots)).toEqual(new Set([objects, objects + 64]));
    expect(roots.length).toBe(3);
  });
});

describe("an AArch64 qemu-user core through a C frame built with pointer authentication (-mbranch-protection=pac-ret)", () => {
  it("agrees with gdb-multiarch as far as gdb unwinds, strips the signed return address and walks on to main", () => {
    const c = crashed.get("pac")!;
    const thread = c.walk.threads[0]!;
    expect(thread.stopReason, thread.stopDetail).toBe("stack-end");
    // qemu's cores hold no PAC mask (NT_ARM_PAC_MASK): gdb cannot unwind through apply_cb
    // ("Register 69 is not available"), so it never reaches mgd_outer; every frame it shows must agree.
    const gdbThreads = gdbReadCore(c.program, c.core, "gdb-multiarch", GDB_SETUP);
    const gdbNames = gdbThreads[0]!.frames.map((f) => f.name);
    expect(gdbNames).toContain("mgd_cb");
    expect(gdbNames).not.toContain("mgd_outer");
    const { frames } = compareWithGdb(gdbThreads, c.walk.threads);
    const names = thread.frames.map(bareFunctionName);
    const at = names.indexOf("apply_cb");
    expect(names.slice(at, at + 3)).toEqual(["apply_cb", "mgd_outer", "main"]);
    // apply_cb saved x30 signed (bits above 48 set), and mgd_outer's pc is its safepoint, unsigned.
    const applyCb = thread.frames[at]!;
    const signed = c.walk.memory.readWordBigInt(applyCb.cfa! - 8);
    expect(signed >> 48n).not.toBe(0n);
    expect(thread.frames[at + 1]!.pc).toBe(Number(signed & ((1n << 48n) - 1n)));
    expect(thread.frames[at + 1]!.kind).toBe("managed");
    const objects = objectsAddress(c.program, 0);
    expect(new Set(thread.frames.flatMap((f) => f.roots.map((r) => r.value)))).toEqual(new Set([objects, objects + 64]));
    console.log(`AArch64 pac core: ${frames} frames equal to gdb-multiarch's, ${thread.frames.length - frames} more past the signed return address`);
  });
});

describe("the managed part of each AArch64 core's stack, walked with the cross-check on", () => {
  it.each(CORE_BUILDS.map((b) => b.name))("%s: fast loop and general unwinder agree; the roots are the core walk's", (name) => {
    const c = crashed.get(name)!;
    const frames = c.walk.threads[0]!.frames;
    const first = frames.findIndex((f) => f.function === "mgd_cb");
    const mainFrame = frames.find((f) => f.function?.includes("main+"))!;
    // The stack from mgd_cb's SP to main's CFA, copied into one flat memory (the fast loop's kind).
    const from = frames[first]!.sp;
    const sizeBytes = mainFrame.cfa! - from;
    const memory = new SimulatedMemory(from, sizeBytes);
    for (let at = from; at < from + sizeBytes; at += 8) memory.writeWordBigInt(at, c.walk.memory.readWordBigInt(at));
    const registers = RegisterContext.from(
      Object.fromEntries(Object.entries(frames[first]!.registers).filter(([, v]) => v !== null)) as Record<string, bigint>,
      AARCH64,
    );
    const result = walkStack(c.walk.snapshot, memory, [{ sp: from, ra: frames[first]!.pc, registers, boundaryRa: mainFrame.pc }], {
      mode: "strict",
      modules: c.walk.modules,
      crossCheck: true,
    });
    expect(result.stopReason).toBe("boundary");
    expect(result.frames.map((f) => f.kind)).toEqual(["managed", "native", "managed"]);
    const coreRoots = frames.slice(first).flatMap((f) => f.roots.map((r) => r.value));
    expect(result.roots.map((r) => r.value)).toEqual(coreRoots);
  });
});

describe("register contexts are the walk's architecture's", () => {
  it("AArch64 holds x19-x30 (12); a register name of another architecture is refused by name", () => {
    const context = RegisterContext.from({ x20: 0x4200c0n, x30: 0x400774 }, AARCH64);
    expect(context.values.length).toBe(12);
    expect(context.toObject()).toEqual({ x20: 0x4200c0n, x30: 0x400774n });
    expect(() => RegisterContext.from({ rbx: 1 }, AARCH64)).toThrow(/register: found rbx, expected a callee-saved register of AArch64 \(x19, .*, x30\)/);
    expect(() => RegisterContext.from({ x19: 1 }, X86_64)).toThrow(/found x19, expected a callee-saved register of x86-64/);
  });
});

describe("rootwalk roots on an AArch64 qemu-user core (the command)", () => {
  it("prints the frames and roots, exit 0; --json holds x19-x30 per frame", async () => {
    const c = crashed.get("csr")!;
    const text = await runCli("roots", c.core, c.program, "--sysroot", SYSROOT);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.match(/\[managed\]/g)?.length).toBe(2);
    expect(text.stdout).toMatch(/libc\.so\.6!abort\+0x[0-9a-f]+ {2}\[native\]/);
    const json = JSON.parse((await runCli("roots", c.core, c.program, "--sysroot", SYSROOT, "--json")).stdout) as {
      threads: { frames: { registers: Record<string, string | null> }[] }[];
    };
    expect(Object.keys(json.threads[0]!.frames[0]!.registers)).toEqual([...AARCH64.calleeSavedNames]);
  });

  it("without EXECUTABLE: one line saying a qemu-user core names no files, exit 1", async () => {
    const r = await runCli("roots", crashed.get("csr")!.core);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/no NT_FILE note .*EXECUTABLE/);
  });

  it("without --sysroot, the sysroot holding the program's interpreter is used: the same walk as with --sysroot", async () => {
    const c = crashed.get("csr")!;
    const without = await runCli("roots", c.core, c.program);
    expect(without.code, without.stderr).toBe(0);
    const given = await runCli("roots", c.core, c.program, "--sysroot", SYSROOT);
    expect(without.stdout).toBe(given.stdout);
    expect(without.stdout).toMatch(/\n {2}\d+ frames, \d+ roots; end of stack\n$/);
    expect(Number(/(\d+) frames/.exec(without.stdout)![1])).toBeGreaterThanOrEqual(8);
  });

  it("with no sysroot installed for its interpreter, the walk ends in libc and its stop names --sysroot, exit 0", async () => {
    // The program as it is on a machine without the cross libraries: its interpreter path names
    // no file here (same length, so the ELF stays whole).
    const c = crashed.get("csr")!;
    const bytes = readFileSync(c.program);
    const interp = Buffer.from("/lib/ld-linux-aarch64.so.1\0");
    const at = bytes.indexOf(interp);
    expect(at).toBeGreaterThan(0);
    Buffer.from("/lib/ld-linux-nowhere.so.1\0").copy(bytes, at);
    const program = join(scratch, "csr-no-sysroot");
    writeFileSync(program, bytes);
    const r = await runCli("roots", c.core, program);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /1 frames, 0 roots; no-unwind-info: stop address 0x[0-9a-f]+ has no safepoint and lies in no mapped module; a qemu-user core names no mapped files, and \d+ of the program's libraries \(\/\S+libc\.so\.6[^)]*\) were not found: give the folder they are under with --sysroot DIR \(qemu-aarch64's -L\)\n$/,
    );
  });
});
