import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import type { CoreWalk } from "../../src/cli/roots-command.js";
import { ElfFile } from "../../src/elf/elf-file.js";
import { cacheSubdir } from "../../src/toolchain/cache-dir.js";
import { cacheKey, compileToObject } from "../../src/toolchain/llvm-toolchain.js";
import { compareWithGdb, gdbReadCore, run } from "./gdb-compare.js";
import { irSource } from "./ir-source.js";
import { AARCH64_SYSROOT } from "./qemu-aarch64.js";

/*
 * The AArch64 programs whose cores `rootwalk roots` is compared with gdb-multiarch on, written by
 * qemu-user (test/walker/aarch64-core.test.ts) and by the Linux kernel under qemu-system
 * (test/walker/aarch64-kernel-core.test.ts). One program (test/walker/core/callback.ll, llc
 * -mtriple=aarch64-linux-gnu): main (C) -> mgd_outer (managed; roots a, b across the call) ->
 * apply_cb (C, -O2 -fomit-frame-pointer, in the middle) -> mgd_cb (managed; root p) -> stop_here
 * (C) -> abort. Five builds:
 *   csr      llc -max-registers-for-gc-values=4 -fixup-allow-gcptr-in-csr: the roots live in
 *            x19/x20, saved by the frames further in (apply_cb, mgd_cb); linked dynamically, not
 *            PIE (libc's abort and raise frames)
 *   fp       llc -frame-pointer=all (frame records: x29, x30 pairs), linked statically
 *   default  llc's defaults: no frame record (x30 saved like any callee-saved register), roots
 *            spilled; linked dynamically, not PIE
 *   pie      the same code as a PIE (its load bias from the core's auxiliary vector)
 *   pac      csr with apply.c built -mbranch-protection=pac-ret: its saved x30 is signed
 */

export const CORE_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "walker", "core");
/** gdb-multiarch finds the libraries the cores name (/lib/libc.so.6, ...) under the cross sysroot. */
export const GDB_SETUP = [`set sysroot ${AARCH64_SYSROOT}`];

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

/**
 * For kernel cores: two threads and a signal frame. A worker runs the same managed code with
 * objects 2 and 3 and parks in stop_here (pause); main then raises SIGUSR1, whose handler runs it
 * with objects 0 and 1 to the abort, so the crashing thread's stack crosses the vDSO's signal
 * return trampoline (__kernel_rt_sigreturn) between the handler and raise.
 */
const SIGNAL_THREADS_HARNESS = `#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
long mgd_outer(void *a, void *b, long k);
long objects[4][8] __attribute__((aligned(64)));
static volatile int parked;
__attribute__((noinline)) void stop_here(long k) {
  if (k == 7) abort();
  parked = 1;
  for (;;) pause();
}
static void *worker(void *arg) { return (void *)mgd_outer(objects[2], objects[3], 5); }
static void on_usr1(int sig) { printf("%ld\\n", mgd_outer(objects[0], objects[1], 3)); }
int main(void) {
  for (int i = 0; i < 8; i++)
    for (int o = 0; o < 4; o++) objects[o][i] = 0x100 * (o + 1) + i;
  // A small stack (PTHREAD_STACK_MIN is 128 KB on AArch64): the kernel dumps the whole mapping.
  pthread_attr_t small;
  pthread_attr_init(&small);
  pthread_attr_setstacksize(&small, 1 << 18);
  pthread_t t;
  pthread_create(&t, &small, worker, NULL);
  while (!parked) usleep(1000);
  usleep(50000);
  signal(SIGUSR1, on_usr1);
  raise(SIGUSR1);
  return 0;
}
`;

export interface CoreBuild {
  name: string;
  /** The C side (main, stop_here); HARNESS unless given. */
  harness?: string;
  llcFlags: string[];
  linkFlags: string[];
  /** Flags for apply.c, the C frame in the middle. */
  cFlags?: string[];
}
export const CORE_BUILDS: CoreBuild[] = [
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

/** Programs only the kernel's cores are compared on (test/walker/aarch64-kernel-core.test.ts). */
export const KERNEL_CORE_BUILDS: CoreBuild[] = [
  {
    name: "signal-threads",
    harness: SIGNAL_THREADS_HARNESS,
    llcFlags: ["-max-registers-for-gc-values=4", "-fixup-allow-gcptr-in-csr"],
    linkFlags: ["-no-pie", "-pthread"],
  },
];

/** Every stack reaches these, innermost first (libc's abort frames come before). */
export const EXPECTED_FUNCTIONS = ["stop_here", "mgd_cb", "apply_cb", "mgd_outer", "main"];
/** The managed functions of the program. */
export const MANAGED_FUNCTIONS = ["mgd_cb", "mgd_outer"];

/** Builds the program of `b` with the cross gcc (cached by its inputs): its path. */
export function buildCoreProgram(b: CoreBuild): string {
  const object = compileToObject(irSource(join(CORE_DIR, "callback.ll")), {
    optPasses: ["-passes=rewrite-statepoints-for-gc"],
    llcFlags: ["-O2", "-mtriple=aarch64-linux-gnu", ...b.llcFlags],
  });
  const harness = b.harness ?? HARNESS;
  const key = cacheKey(["a64-core", readFileSync(object), harness, readFileSync(join(CORE_DIR, "apply.c")), JSON.stringify([b.linkFlags, b.cFlags])]).slice(
    0,
    16,
  );
  const dir = join(cacheSubdir("walker-core"), `a64-${b.name}-${key}`);
  mkdirSync(dir, { recursive: true });
  const program = join(dir, `prog-${b.name}`);
  if (existsSync(program)) return program;
  // Built in a folder of this process's own and renamed into place: the qemu-user and the kernel
  // core tests may build the same program at once, in two workers.
  const work = mkdtempSync(join(dir, "build-"));
  try {
    writeFileSync(join(work, "harness.c"), harness);
    run("aarch64-linux-gnu-gcc", ["-O2", "-fomit-frame-pointer", ...(b.cFlags ?? []), "-c", join(CORE_DIR, "apply.c"), "-o", join(work, "apply.o")]);
    run("aarch64-linux-gnu-gcc", ["-O1", ...b.linkFlags, join(work, "harness.c"), join(work, "apply.o"), object, "-o", join(work, "program")]);
    renameSync(join(work, "program"), program);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return program;
}

/** The address of `objects` (the two objects main passes) in a program loaded at `bias`. */
export function objectsAddress(program: string, bias: number): number {
  const symbol = ElfFile.parse(readFileSync(program))
    .symbols()
    .find((s) => s.name === "objects");
  return symbol!.value + bias;
}

/** A frame's function without its module and offset (`libc.so.6!abort+0x10` -> `abort`). */
export function bareFunctionName(f: { function?: string | null | undefined }): string | undefined {
  return f.function?.replace(/^[^!]*!/, "").replace(/\+0x[0-9a-f]+$/, "") ?? undefined;
}

/**
 * Compares the walk of a one-thread core with gdb-multiarch's unwind of it: every frame gdb
 * shows must agree (pc, SP, CFA and each of x19-x30 gdb knows), gdb must show every function of
 * EXPECTED_FUNCTIONS, and the walk's managed frames are the managed functions. Returns the counts.
 */
export function expectFramesEqualGdb(program: string, core: string, walk: CoreWalk): { frames: number; registers: number } {
  const gdbThreads = gdbReadCore(program, core, "gdb-multiarch", GDB_SETUP);
  expect(walk.threads.length).toBe(1);
  const thread = walk.threads[0]!;
  expect(thread.stopReason, thread.stopDetail).toBe("stack-end");
  const gdbNames = gdbThreads[0]!.frames.map((f) => f.name);
  for (const fn of EXPECTED_FUNCTIONS) expect(gdbNames, `gdb shows ${fn}`).toContain(fn);
  const counts = compareWithGdb(gdbThreads, walk.threads);
  gdbThreads[0]!.frames.forEach((gf, i) => {
    const kind = MANAGED_FUNCTIONS.includes(gf.name ?? "") ? "managed" : "native";
    expect(thread.frames[i]!.kind, `frame #${i} ${gf.name}`).toBe(kind);
  });
  expect(counts.frames).toBe(gdbThreads[0]!.frames.length);
  expect(counts.frames).toBeGreaterThanOrEqual(EXPECTED_FUNCTIONS.length);
  expect(counts.registers).toBeGreaterThan(counts.frames);
  return counts;
}

/**
 * Each root of each thread (mgd_cb's p, mgd_outer's a and b) must be what gdb-multiarch reads at
 * its slot (or in its register, in that thread: gdb numbers a core's threads 1, 2, ... in the
 * order of their NT_PRSTATUS notes, as the walk lists them), and the address of one of the two
 * objects the thread passed: `objectsPerThread[i]` indexes `objects` (0 and 1, one object each
 * 64 bytes). Returns how many roots were compared.
 */
export function expectRootsEqualGdbReads(program: string, core: string, walk: CoreWalk, objectsPerThread: [number, number][] = [[0, 1]]): number {
  expect(walk.threads.length).toBe(objectsPerThread.length);
  const roots = walk.threads.flatMap((t, thread) => t.frames.flatMap((f) => f.roots.map((r) => ({ ...r, fn: f.function, thread }))));
  const reads = roots.flatMap((r) => [
    "-ex",
    `thread ${r.thread + 1}`,
    "-ex",
    r.register === undefined ? `printf "RW %lu\\n", *(unsigned long *)${r.slot}` : `printf "RW %lu\\n", $${r.register}`,
  ]);
  const out = run("gdb-multiarch", ["-nx", "-batch", ...GDB_SETUP.flatMap((s) => ["-ex", s]), ...reads, program, core])
    .split("\n")
    .filter((l) => l.startsWith("RW "))
    .map((l) => Number(l.slice(3)));
  roots.forEach((r, i) => expect(r.value, `thread ${r.thread + 1} ${r.fn} [${r.slot.toString(16)}]`).toBe(out[i]));
  const objects = objectsAddress(program, walk.modules.modules.find((m) => m.path === program)!.loadBias);
  objectsPerThread.forEach(([a, b], thread) => {
    const own = roots.filter((r) => r.thread === thread);
    // p = b in mgd_cb; a and b in mgd_outer (in map order).
    expect(own.map((r) => r.fn)).toEqual(["mgd_cb", "mgd_outer", "mgd_outer"]);
    expect(new Set(own.map((r) => r.value))).toEqual(new Set([objects + 64 * a, objects + 64 * b]));
  });
  return roots.length;
}
