import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AARCH64 } from "../../src/arch/aarch64.js";
import { walkCore, type CoreWalk } from "../../src/cli/roots-command.js";
import { ElfFile } from "../../src/elf/elf-file.js";
import { SimulatedMemory } from "../../src/memory/memory.js";
import { cacheSubdir } from "../../src/toolchain/cache-dir.js";
import { cacheKey, compileToObject } from "../../src/toolchain/llvm-toolchain.js";
import { RegisterContext } from "../../walker/register-context.js";
import { walkStack } from "../../walker/walk-stack.js";
import { compareWithGdb, gdbReadCore, run, type GdbThread } from "../support/gdb-compare.js";
import { irSource } from "../support/ir-source.js";
import { run as runCli } from "../support/run-cli.js";

/*
 * `rootwalk roots` on AArch64 cores written by qemu-user (only NT_PRSTATUS, NT_PRPSINFO and
 * NT_AUXV: no NT_FILE), against gdb-multiarch reading the same core.
 *
 * The program (test/walker/core/callback.ll, llc -mtriple=aarch64-linux-gnu): main (C) ->
 * mgd_outer (managed; roots a, b across the call) -> apply_cb (C, -O2 -fomit-frame-pointer, in
 * the middle) -> mgd_cb (managed; root p) -> stop_here (C) -> abort, so qemu writes a core. Five
 * builds, one core each:
 *   csr      llc -max-registers-for-gc-values=4 -fixup-allow-gcptr-in-csr: the roots live in
 *            x19/x20, saved by the frames further in (apply_cb, mgd_cb); linked dynamically, not
 *            PIE, so the libraries (libc's abort and raise frames) come from the dynamic
 *            linker's list in the core's memory, found under the cross sysroot
 *   fp       llc -frame-pointer=all (frame records: x29, x30 pairs), linked statically
 *   default  llc's defaults: no frame record (x30 saved like any callee-saved register), roots
 *            spilled; linked dynamically, not PIE
 *   pie      the same code as a PIE: the program's load bias comes from AT_ENTRY. gdb-multiarch
 *            cannot place a PIE from a qemu core (the page with the program headers is not
 *            dumped), so this walk's frames are checked against the default core's
 *   pac      csr with apply.c built -mbranch-protection=pac-ret: its saved x30 is signed
 * For the csr, fp and default cores every frame gdb shows (it stops at main) must agree: pc, SP,
 * CFA and each of x19-x30 gdb knows. In every core, each root's value must be what gdb reads at
 * the root's slot and the address of an object main passed. The managed part of each stack is walked again by
 * walkStack with the cross-check on (fast loop against the general unwinder: on AArch64 the fast
 * rule admits no frame, so the unwinder takes them all and both must agree).
 */

const HERE = dirname(fileURLToPath(import.meta.url));
const CORE_DIR = join(HERE, "core");
const SYSROOT = "/usr/aarch64-linux-gnu";
const GDB_SETUP = [`set sysroot ${SYSROOT}`];

const HARNESS = `#include <stdio.h>
#include <stdlib.h>
long mgd_outer(void *a, void *b, long k);
long objects[2][8] __attribute__((aligned(64)));
__attribute__((noinline)) void stop_here(long k) { if (k >= 0) abort(); }
int main(void) {
  for (int i = 0; i < 8; i++) objects[0][i] = 0x100 + i, objects[1][i] = 0x1000 + i;
  printf("%ld\\n", mgd_outer(objects[0], objects[1], 3));
  return 0;
}
`;

interface Build {
  name: string;
  llcFlags: string[];
  linkFlags: string[];
  /** Flags for apply.c, the C frame in the middle. */
  cFlags?: string[];
}
const BUILDS: Build[] = [
  { name: "csr", llcFlags: ["-max-registers-for-gc-values=4", "-fixup-allow-gcptr-in-csr"], linkFlags: ["-no-pie"] },
  { name: "fp", llcFlags: ["-frame-pointer=all"], linkFlags: ["-static"] },
  { name: "default", llcFlags: [], linkFlags: ["-no-pie"] },
  { name: "pie", llcFlags: [], linkFlags: ["-pie", "-Wl,-z,notext"] },
  {
    name: "pac",
    llcFlags: ["-max-registers-for-gc-values=4", "-fixup-allow-gcptr-in-csr"],
    linkFlags: ["-no-pie"],
    cFlags: ["-mbranch-protection=pac-ret"],
  },
];

interface Crashed {
  program: string;
  core: string;
  walk: CoreWalk;
}

const scratch = mkdtempSync(join(tmpdir(), "rootwalk-a64-core-"));
const crashed = new Map<string, Crashed>();

/** Builds the program of `b` (cached by its inputs) and crashes it under qemu-aarch64: its core. */
function buildAndCrash(b: Build): Crashed {
  const object = compileToObject(irSource(join(CORE_DIR, "callback.ll")), {
    optPasses: ["-passes=rewrite-statepoints-for-gc"],
    llcFlags: ["-O2", "-mtriple=aarch64-linux-gnu", ...b.llcFlags],
  });
  const key = cacheKey(["a64-core", readFileSync(object), HARNESS, readFileSync(join(CORE_DIR, "apply.c")), JSON.stringify([b.linkFlags, b.cFlags])]).slice(
    0,
    16,
  );
  const dir = join(cacheSubdir("walker-core"), `a64-${b.name}-${key}`);
  mkdirSync(dir, { recursive: true });
  const program = join(dir, `prog-${b.name}`);
  if (!existsSync(program)) {
    writeFileSync(join(dir, "harness.c"), HARNESS);
    run("aarch64-linux-gnu-gcc", ["-O2", "-fomit-frame-pointer", ...(b.cFlags ?? []), "-c", join(CORE_DIR, "apply.c"), "-o", join(dir, "apply.o")]);
    run("aarch64-linux-gnu-gcc", ["-O1", ...b.linkFlags, join(dir, "harness.c"), join(dir, "apply.o"), object, "-o", program]);
  }
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
  for (const b of BUILDS) crashed.set(b.name, buildAndCrash(b));
}, 300_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The address of `objects` in a program loaded at `bias`. */
function objectsAddress(program: string, bias: number): number {
  const symbol = ElfFile.parse(readFileSync(program))
    .symbols()
    .find((s) => s.name === "objects");
  return symbol!.value + bias;
}

const EXPECTED_FUNCTIONS = ["stop_here", "mgd_cb", "apply_cb", "mgd_outer", "main"];

describe.each(["csr", "fp", "default"])("an AArch64 qemu-user core (%s build) against gdb-multiarch", (name) => {
  let gdbThreads: GdbThread[] = [];
  beforeAll(() => {
    const c = crashed.get(name)!;
    gdbThreads = gdbReadCore(c.program, c.core, "gdb-multiarch", GDB_SETUP);
  }, 120_000);

  it("frames equal gdb's: pc, SP, CFA and every one of x19-x30 gdb knows", () => {
    const c = crashed.get(name)!;
    expect(c.walk.threads.length).toBe(1);
    const thread = c.walk.threads[0]!;
    expect(thread.stopReason, thread.stopDetail).toBe("stack-end");
    const gdbNames = gdbThreads[0]!.frames.map((f) => f.name);
    for (const fn of EXPECTED_FUNCTIONS) expect(gdbNames, `gdb shows ${fn}`).toContain(fn);
    const { frames, registers } = compareWithGdb(gdbThreads, c.walk.threads);
    gdbThreads[0]!.frames.forEach((gf, i) => {
      const kind = gf.name === "mgd_cb" || gf.name === "mgd_outer" ? "managed" : "native";
      expect(thread.frames[i]!.kind, `frame #${i} ${gf.name}`).toBe(kind);
    });
    console.log(`AArch64 ${name} core: ${frames} frames and ${registers} callee-saved registers equal to gdb-multiarch's`);
    expect(frames).toBe(gdbThreads[0]!.frames.length);
    expect(frames).toBeGreaterThanOrEqual(8); // libc's abort frames, stop_here, the four managed and C frames, main
    expect(registers).toBeGreaterThan(frames);
  });
});

describe.each(BUILDS.map((b) => b.name))("the roots of the AArch64 %s core", (name) => {
  it("every root is what gdb reads at its slot, and an object main passed", () => {
    const c = crashed.get(name)!;
    const roots = c.walk.threads[0]!.frames.flatMap((f) => f.roots.map((r) => ({ ...r, fn: f.function })));
    expect(roots.map((r) => r.fn)).toEqual(["mgd_cb", "mgd_outer", "mgd_outer"]);
    const reads = roots.flatMap((r) => [
      "-ex",
      r.register === undefined ? `printf "RW %lu\\n", *(unsigned long *)${r.slot}` : `printf "RW %lu\\n", $${r.register}`,
    ]);
    const out = run("gdb-multiarch", ["-nx", "-batch", ...GDB_SETUP.flatMap((s) => ["-ex", s]), ...reads, c.program, c.core])
      .split("\n")
      .filter((l) => l.startsWith("RW "))
      .map((l) => Number(l.slice(3)));
    roots.forEach((r, i) => expect(r.value, `${r.fn} [${r.slot.toString(16)}]`).toBe(out[i]));
    const objects = objectsAddress(c.program, c.walk.modules.modules.find((m) => m.path === c.program)!.loadBias);
    // p = b in mgd_cb; a and b in mgd_outer (in map order).
    expect(new Set(roots.map((r) => r.value))).toEqual(new Set([objects, objects + 64]));
    console.log(`AArch64 ${name} core: ${roots.length} roots equal to gdb-multiarch's reads of their slots`);
  });
});

describe("an AArch64 qemu-user core of a PIE (load bias from AT_ENTRY)", () => {
  it("walks the same frames as the non-PIE build (default), with roots at the biased objects", () => {
    const c = crashed.get("pie")!;
    const thread = c.walk.threads[0]!;
    expect(thread.stopReason, thread.stopDetail).toBe("stack-end");
    const program = c.walk.modules.modules.find((m) => m.path === c.program)!;
    expect(program.loadBias).toBeGreaterThan(0);
    const names = thread.frames.map((f) => f.function?.replace(/^[^!]*!/, "").replace(/\+0x[0-9a-f]+$/, ""));
    const reference = crashed.get("default")!.walk.threads[0]!.frames.map((f) => f.function?.replace(/^[^!]*!/, "").replace(/\+0x[0-9a-f]+$/, ""));
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
    const names = thread.frames.map((f) => f.function?.replace(/^[^!]*!/, "").replace(/\+0x[0-9a-f]+$/, ""));
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
  it.each(BUILDS.map((b) => b.name))("%s: fast loop and general unwinder agree; the roots are the core walk's", (name) => {
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
      Object.fromEntries(Object.entries(frames[first]!.registers).filter(([, v]) => v !== null)) as Record<string, number>,
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
    expect(() => RegisterContext.from({ x19: 1 })).toThrow(/found x19, expected a callee-saved register of x86-64/);
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

  it("without --sysroot the libraries are not found: the walk ends in libc naming the address, exit 0", async () => {
    const c = crashed.get("csr")!;
    const r = await runCli("roots", c.core, c.program);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/1 frames, 0 roots; no-unwind-info: .* lies in no mapped module/);
  });
});
