import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { walkCore, type CoreWalk } from "../../src/cli/roots-command.js";
import { CoreFile } from "../../src/core/core-file.js";
import {
  CORE_BUILDS,
  GDB_SETUP,
  KERNEL_CORE_BUILDS,
  bareFunctionName,
  buildCoreProgram,
  expectFramesEqualGdb,
  expectRootsEqualGdbReads,
} from "../support/aarch64-core-programs.js";
import { arm64Kernel, kernelCores } from "../support/aarch64-kernel.js";
import { compareWithGdb, gdbReadCore, run } from "../support/gdb-compare.js";
import { AARCH64_SYSROOT } from "../support/qemu-aarch64.js";
import { run as runCli } from "../support/run-cli.js";

/*
 * `rootwalk roots` on AArch64 cores written by the Linux kernel (Debian's arm64 kernel under
 * qemu-system-aarch64, test/support/aarch64-kernel.ts): NT_FILE names the mapped files by their
 * paths in the emulated machine (/progs/NAME, /lib/libc.so.6, found under the cross sysroot),
 * the program's mapping starts with its ELF headers (so gdb-multiarch places a PIE too), and the
 * C frame built with pointer authentication really signs its return address, with the mask in
 * NT_ARM_PAC_MASK. The five builds of test/support/aarch64-core-programs.ts, one core each from
 * one boot; for every core each frame gdb-multiarch shows (pc, SP, CFA, each of x19-x30 gdb
 * knows) and each root (against gdb's read of its slot) must agree.
 */

const kernel = arm64Kernel();
if ("missing" in kernel) console.warn(`[aarch64-kernel-core] skipped: ${kernel.missing}`);
const walks = new Map<string, { program: string; core: string; walk: CoreWalk }>();

beforeAll(() => {
  if ("missing" in kernel) return;
  const programs = new Map([...CORE_BUILDS, ...KERNEL_CORE_BUILDS].map((b) => [b.name, buildCoreProgram(b)]));
  const { cores, bootSeconds } = kernelCores(kernel.kernel, programs);
  console.log(`[aarch64-kernel-core] ${cores.size} cores ${bootSeconds === undefined ? "from the cache" : `from one boot of ${bootSeconds.toFixed(1)} s`}`);
  for (const [name, core] of cores) {
    const program = programs.get(name)!;
    walks.set(name, { program, core, walk: walkCore(core, program, undefined, AARCH64_SYSROOT) });
  }
}, 420_000);

describe.skipIf("missing" in kernel).each(CORE_BUILDS.map((b) => b.name))("an AArch64 core the Linux kernel wrote (%s build)", (name) => {
  it("frames equal gdb-multiarch's: pc, SP, CFA and every one of x19-x30 gdb knows", () => {
    const c = walks.get(name)!;
    const { frames, registers } = expectFramesEqualGdb(c.program, c.core, c.walk);
    const names = c.walk.threads[0]!.frames.map(bareFunctionName);
    expect(names.slice(names.indexOf("stop_here"))).toEqual([
      "stop_here",
      "mgd_cb",
      "apply_cb",
      "mgd_outer",
      "main",
      ...names.slice(names.indexOf("main") + 1),
    ]);
    console.log(`[aarch64-kernel-core] ${name}: ${frames} frames and ${registers} callee-saved registers equal to gdb-multiarch's`);
  });

  it("every root is what gdb-multiarch reads at its slot, and an object main passed", () => {
    const c = walks.get(name)!;
    const roots = expectRootsEqualGdbReads(c.program, c.core, c.walk);
    console.log(`[aarch64-kernel-core] ${name}: ${roots} roots equal to gdb-multiarch's reads`);
  });
});

describe.skipIf("missing" in kernel)("an AArch64 kernel core of two threads, one crashed in a signal handler", () => {
  it("every thread's frames equal gdb-multiarch's, across the vDSO's signal return", () => {
    const c = walks.get("signal-threads")!;
    const gdbThreads = gdbReadCore(c.program, c.core, "gdb-multiarch", GDB_SETUP);
    expect(gdbThreads.length).toBe(2);
    const { frames, registers } = compareWithGdb(gdbThreads, c.walk.threads);
    expect(frames).toBe(gdbThreads[0]!.frames.length + gdbThreads[1]!.frames.length);
    // The crashed thread: abort ... mgd_outer, on_usr1, the signal frame, raise, main.
    const crashed = c.walk.threads[0]!.frames;
    const signal = crashed.findIndex((f) => f.kind === "signal");
    expect(crashed.slice(signal - 3, signal + 1).map(bareFunctionName)).toEqual(["apply_cb", "mgd_outer", "on_usr1", "<signal handler called>"]);
    expect(crashed.slice(signal + 1).map(bareFunctionName)).toContain("main");
    // The worker: parked in pause under the same managed frames, down to the thread's start.
    expect(c.walk.threads[1]!.frames.map(bareFunctionName).slice(0, 6)).toEqual(["pause", "stop_here", "mgd_cb", "apply_cb", "mgd_outer", "worker"]);
    expect(c.walk.threads[1]!.stopReason).toBe("stack-end");
    console.log(`[aarch64-kernel-core] signal-threads: ${frames} frames and ${registers} callee-saved registers equal to gdb-multiarch's`);
  });

  it("each thread's roots are what gdb-multiarch reads, the objects that thread passed", () => {
    const c = walks.get("signal-threads")!;
    const roots = expectRootsEqualGdbReads(c.program, c.core, c.walk, [
      [0, 1],
      [2, 3],
    ]);
    console.log(`[aarch64-kernel-core] signal-threads: ${roots} roots equal to gdb-multiarch's reads`);
  });
});

describe.skipIf("missing" in kernel)("what the kernel's AArch64 cores hold", () => {
  it("NT_FILE names the program and the libraries by their paths in the emulated machine", () => {
    for (const [name, c] of walks) {
      const core = CoreFile.open(c.core);
      try {
        expect(core.architecture.name).toBe("AArch64");
        const paths = core.files.map((f) => f.path);
        expect(paths).toContain(`/progs/${name}`);
        if (name !== "fp" && name !== "signal-threads") expect(paths).toContain("/lib/libc.so.6"); // fp is linked statically
      } finally {
        core.close();
      }
    }
  });

  it("pac: the core holds the PAC mask, apply_cb saved its return address signed, the walk strips the PAC", () => {
    const c = walks.get("pac")!;
    expect(run("readelf", ["-n", c.core])).toMatch(/NT_ARM_PAC_MASK/);
    const frames = c.walk.threads[0]!.frames;
    const at = frames.findIndex((f) => bareFunctionName(f) === "apply_cb");
    const signed = c.walk.memory.readWordBigInt(frames[at]!.cfa! - 8);
    // The PAC has 7 bits here (bits 48-54 with 48-bit addresses, gdb's pauth_cmask), from keys
    // random per process: about one boot in 128 signs this address with a PAC of 0.
    if (signed >> 48n === 0n) console.warn("[aarch64-kernel-core] pac: this boot's PAC of apply_cb's return address is 0");
    else expect(Number(signed >> 48n) & ~0x7f).toBe(0);
    expect(frames[at + 1]!.pc).toBe(Number(signed & ((1n << 48n) - 1n)));
    expect(frames[at + 1]!.function).toBe("mgd_outer");
  });

  it("csr: mgd_outer's roots live in callee-saved registers, read from where the frames further in saved them", () => {
    const frames = walks.get("csr")!.walk.threads[0]!.frames;
    const outer = frames.find((f) => f.function === "mgd_outer")!;
    expect(outer.roots).toHaveLength(2);
    // Each slot lies below mgd_outer's own frame: a save slot of apply_cb or mgd_cb.
    for (const r of outer.roots) expect(r.slot).toBeLessThan(outer.sp);
  });
});

describe.skipIf("missing" in kernel)("rootwalk roots on an AArch64 kernel core (the command)", () => {
  it("prints the frames and roots through libc's abort, exit 0", async () => {
    const c = walks.get("csr")!;
    const r = await runCli("roots", c.core, c.program, "--sysroot", AARCH64_SYSROOT);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.match(/\[managed\]/g)?.length).toBe(2);
    expect(r.stdout).toMatch(/libc\.so\.6!abort\+0x[0-9a-f]+ {2}\[native\]/);
  });

  it("a sysroot whose libc is another machine's is passed over: the walk ends in libc, naming it, exit 0", async () => {
    const c = walks.get("csr")!;
    const sysroot = mkdtempSync(join(tmpdir(), "rootwalk-x86-sysroot-"));
    try {
      mkdirSync(join(sysroot, "lib"));
      copyFileSync("/bin/sh", join(sysroot, "lib", "libc.so.6")); // the host's, an x86-64 ELF file
      const r = await runCli("roots", c.core, c.program, "--sysroot", sysroot);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/1 frames, 0 roots; no-unwind-info: .*\/lib\/libc\.so\.6/);
    } finally {
      rmSync(sysroot, { recursive: true, force: true });
    }
  });
});
