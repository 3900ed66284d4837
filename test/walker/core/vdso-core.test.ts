import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { walkCore, type CoreWalk } from "../../../src/cli/roots-command.js";
import { cacheSubdir } from "../../../src/toolchain/cache-dir.js";
import { cacheKey } from "../../../src/toolchain/llvm-toolchain.js";
import { compareWithGdb, gdbStopAndCore, run, type GdbThread } from "../../support/gdb-compare.js";

/*
 * A thread stopped inside the vDSO (gdb breaks in __vdso_clock_gettime and writes a core). No
 * file holds that code: the module map takes the vDSO's image from the core's memory (NT_AUXV's
 * AT_SYSINFO_EHDR names its address) and climbs out of it by its own CFI, into libc and the
 * program; every frame must be gdb's.
 */

const HERE = dirname(fileURLToPath(import.meta.url));
let core = "";
let gdbThreads: GdbThread[] = [];
let walk: CoreWalk;

beforeAll(() => {
  const source = join(HERE, "vdso.c");
  const dir = join(cacheSubdir("walker-core"), `vdso-${cacheKey([readFileSync(source)]).slice(0, 16)}`);
  mkdirSync(dir, { recursive: true });
  const program = join(dir, "vdso-prog");
  if (!existsSync(program)) run("gcc", ["-O2", source, "-o", program]);
  core = join(dir, `core-${process.pid}`);
  gdbThreads = gdbStopAndCore(program, core, "__vdso_clock_gettime", true);
  walk = walkCore(core);
}, 120_000);

afterAll(() => {
  if (core !== "") rmSync(core, { force: true });
});

describe("a core stopped inside the vDSO", () => {
  it("the innermost frame is the vDSO's, named from its own symbols", () => {
    const frame = walk.threads[0]!.frames[0]!;
    expect(walk.modules.modules.some((m) => m.path === "[vdso]")).toBe(true);
    expect(frame.kind).toBe("native");
    expect(frame.function).toMatch(/^\[vdso\]!(__vdso_)?clock_gettime\+0x[0-9a-f]+$/);
  });

  it("climbs out of it by its CFI: every frame gdb shows, with pc, SP, CFA and callee-saved registers", () => {
    const { frames, registers } = compareWithGdb(gdbThreads, walk.threads);
    console.log(`vdso core: ${frames} frames and ${registers} callee-saved registers equal to gdb's`);
    expect(frames).toBeGreaterThanOrEqual(4); // vDSO, libc's clock_gettime, sample, main
    expect(walk.threads[0]!.frames.some((f) => f.function?.includes("main"))).toBe(true);
  });
});
