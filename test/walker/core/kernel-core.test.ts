import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { walkCore, type CoreWalk } from "../../../src/cli/roots-command.js";
import { cacheSubdir } from "../../../src/toolchain/cache-dir.js";
import { cacheKey, compileToObject } from "../../../src/toolchain/llvm-toolchain.js";
import { irSource } from "../../support/ir-source.js";
import { compareWithGdb, gdbReadCore, run, type GdbThread } from "../../support/gdb-compare.js";

/*
 * The same 3-thread program as core-walk.test.ts, built with RW_CORE_ABORT: the main thread
 * aborts where gdb would have stopped it, and the kernel writes the core (its own note layout and
 * dump filter: file-backed text is not dumped, only the pages with each ELF's headers). rootwalk
 * roots must walk it as gdb reading the same core does, frame by frame, and every root must be
 * what gdb reads at its slot. Needs the kernel to write "core" files into the working directory
 * (/proc/sys/kernel/core_pattern not a pipe); elsewhere the test says so and is skipped.
 */

const HERE = dirname(fileURLToPath(import.meta.url));
const pattern = readFileSync("/proc/sys/kernel/core_pattern", "utf8").trim();
const kernelWritesCores = !pattern.startsWith("|") && !pattern.includes("/");
const scratch = mkdtempSync(join(tmpdir(), "rootwalk-kernel-core-"));
let program = "";
let core = "";
let gdbThreads: GdbThread[] = [];
let walk: CoreWalk;

afterAll(() => rmSync(scratch, { recursive: true, force: true })); // the core: 17 MB

beforeAll(() => {
  if (!kernelWritesCores) return;
  const object = compileToObject(irSource(join(HERE, "callback.ll")), { optPasses: ["-passes=rewrite-statepoints-for-gc"], llcFlags: ["-O2"] });
  const key = cacheKey(["kernel-core", readFileSync(object), readFileSync(join(HERE, "harness.c")), readFileSync(join(HERE, "apply.c"))]).slice(0, 16);
  const dir = join(cacheSubdir("walker-core"), `kernel-${key}`);
  mkdirSync(dir, { recursive: true });
  program = join(dir, "prog-abort");
  if (!existsSync(program)) {
    run("gcc", ["-O2", "-fomit-frame-pointer", "-c", join(HERE, "apply.c"), "-o", join(dir, "apply.o")]);
    run("gcc", ["-O1", "-DRW_CORE_ABORT", join(HERE, "harness.c"), join(dir, "apply.o"), object, "-Wl,-z,notext", "-lpthread", "-o", program]);
  }
  const r = spawnSync("sh", ["-c", 'ulimit -c unlimited && exec "$0"', program], { cwd: scratch, encoding: "utf8", timeout: 60_000 });
  expect(r.signal, r.stderr).toBe("SIGABRT");
  const written = readdirSync(scratch).find((f) => f.startsWith("core"));
  expect(written, `no core in ${scratch} (core_pattern ${pattern})`).toBeDefined();
  core = join(scratch, written!);
  gdbThreads = gdbReadCore(program, core);
  walk = walkCore(core);
}, 300_000);

describe.skipIf(!kernelWritesCores)(`rootwalk roots on a kernel-written core (core_pattern ${pattern})`, () => {
  it("agrees with gdb on every thread, frame by frame: pc, SP, CFA and callee-saved registers", () => {
    expect(walk.threads.map((t) => t.tid).sort()).toEqual(gdbThreads.map((t) => t.tid).sort());
    expect(walk.threads.length).toBe(3);
    const { frames, registers } = compareWithGdb(gdbThreads, walk.threads);
    console.log(`kernel core: ${frames} frames and ${registers} callee-saved registers equal to gdb's over ${gdbThreads.length} threads`);
    expect(frames).toBeGreaterThanOrEqual(30); // abort's frames on the main thread, a signal frame on thread 3
    expect(walk.threads.some((t) => t.frames.some((f) => f.kind === "signal"))).toBe(true);
    expect(walk.threads.flatMap((t) => t.frames).filter((f) => f.kind === "managed").length).toBe(6);
  });

  it("every root is what gdb reads at its slot in the core", () => {
    const roots = walk.threads.flatMap((t) => t.frames.flatMap((f) => f.roots));
    expect(roots.length).toBe(9);
    const commands = roots.flatMap((r) => ["-ex", `printf "RW %lu\\n", *(unsigned long *)${r.slot}`]);
    const out = run("gdb", ["-nx", "-batch", "-ex", "set debuginfod enabled off", ...commands, program, core])
      .split("\n")
      .filter((l) => l.startsWith("RW "))
      .map((l) => Number(l.slice(3)));
    roots.forEach((r, i) => expect(r.value, `[${r.slot.toString(16)}]`).toBe(out[i]));
    console.log(`kernel core: ${roots.length} roots equal to gdb's reads of their slots`);
  });
});
