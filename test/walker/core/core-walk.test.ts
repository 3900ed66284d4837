import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { walkCore, type CoreThreadWalk, type CoreWalk } from "../../../src/cli/roots-command.js";
import { Unwinder, WalkError } from "../../../walker/unwinder.js";
import { cacheSubdir } from "../../../src/toolchain/cache-dir.js";
import { cacheKey, compileToObject } from "../../../src/toolchain/llvm-toolchain.js";
import { irSource } from "../../support/ir-source.js";
import { compareWithGdb, gdbStopAndCore, run, type GdbThread } from "../../support/gdb-compare.js";
import { OUT_DIR, buildRunEntry } from "../../support/native-run.js";

/*
 * A core file of a 3-thread program, walked by `rootwalk roots` and by gdb, frame by frame.
 *
 * Each thread: mgd_outer (managed) -> apply_cb (C, -O2 -fomit-frame-pointer, a callback taker)
 * -> mgd_cb (managed) -> stop_here (C); one worker then sleeps in libc's nanosleep, the other
 * raises SIGUSR1 and sleeps in the handler (its walk crosses __restore_rt by the saved
 * ucontext into the interrupted raise), the main thread calls rw_core_stop. gdb (gdb-core.py) breaks there, writes the core with gcore
 * and records its own unwind of every thread. The walk starts from each thread's NT_PRSTATUS
 * registers and must agree with gdb on every frame gdb shows: pc, SP, and every callee-saved
 * register gdb can tell; every root of a managed frame must be what a second gdb, reading the
 * core, finds at the root's slot, and must be the object the thread passed (objects[t][0..1]).
 */

const HERE = dirname(fileURLToPath(import.meta.url));
let dir = "";
let program = "";
let core = "";
let compiledObject = "";
let gdbThreads: GdbThread[] = [];
let walked: CoreThreadWalk[] = [];
let coreWalk: CoreWalk;

beforeAll(() => {
  const object = compileToObject(irSource(join(HERE, "callback.ll")), { optPasses: ["-passes=rewrite-statepoints-for-gc"], llcFlags: ["-O2"] });
  compiledObject = object;
  const key = cacheKey([readFileSync(object), readFileSync(join(HERE, "harness.c")), readFileSync(join(HERE, "apply.c"))]).slice(0, 16);
  dir = join(cacheSubdir("walker-core"), key);
  mkdirSync(dir, { recursive: true });
  program = join(dir, "prog");
  if (!existsSync(program)) {
    run("gcc", ["-O2", "-fomit-frame-pointer", "-c", join(HERE, "apply.c"), "-o", join(dir, "apply.o")]);
    run("gcc", ["-O1", join(HERE, "harness.c"), join(dir, "apply.o"), object, "-Wl,-z,notext", "-lpthread", "-o", program]);
  }
  core = join(dir, `core-${process.pid}`);
  gdbThreads = gdbStopAndCore(program, core, "rw_core_stop");
  coreWalk = walkCore(core);
  walked = coreWalk.threads;
}, 300_000);

afterAll(() => {
  if (core !== "") rmSync(core, { force: true }); // 17 MB per run
});

describe("rootwalk roots on a gcore of a 3-thread program (managed -> C callback taker -> managed)", () => {
  it("finds every thread gdb shows", () => {
    expect(walked.map((t) => t.tid).sort()).toEqual(gdbThreads.map((t) => t.tid).sort());
    expect(walked.length).toBe(3);
  });

  it("agrees with gdb frame by frame: pc, SP, CFA and every callee-saved register gdb knows", () => {
    const { frames, registers } = compareWithGdb(gdbThreads, walked);
    for (const g of gdbThreads) {
      const w = walked.find((t) => t.tid === g.tid)!;
      // Every managed frame gdb names is managed for rootwalk; native names agree.
      g.frames.forEach((gf, i) => {
        if (gf.name === "mgd_cb" || gf.name === "mgd_outer") expect(w.frames[i]!.kind).toBe("managed");
        else if (gf.type === "sigtramp") expect(w.frames[i]!.kind).toBe("signal");
        else expect(w.frames[i]!.kind).toBe("native");
      });
    }
    console.log(`core: ${frames} frames and ${registers} callee-saved registers equal to gdb's over ${gdbThreads.length} threads`);
    expect(frames).toBeGreaterThanOrEqual(28);
    expect(walked.some((t) => t.frames.some((f) => f.kind === "signal"))).toBe(true);
    expect(registers).toBeGreaterThan(frames);
  });

  it("every root is what gdb reads at its slot in the core, and the object the thread passed", () => {
    const roots = walked.flatMap((t) => t.frames.flatMap((f) => f.roots.map((r) => ({ ...r, tid: t.tid, fn: f.function }))));
    expect(roots.length).toBe(9); // per thread: p in mgd_cb, a and b in mgd_outer
    const commands = roots.flatMap((r) => ["-ex", `printf "RW %lu\\n", *(unsigned long *)${r.slot}`]);
    const objects = ["-ex", `printf "RW %lu\\n", (unsigned long)&objects`];
    const out = run("gdb", ["-nx", "-batch", "-ex", "set debuginfod enabled off", ...commands, ...objects, program, core])
      .split("\n")
      .filter((l) => l.startsWith("RW "))
      .map((l) => Number(l.slice(3)));
    const base = out.pop()!;
    roots.forEach((r, i) => expect(r.value, `${r.tid} ${r.fn} [${r.slot.toString(16)}]`).toBe(out[i]));
    const valid = new Set([0, 1, 2].flatMap((t) => [base + t * 128, base + t * 128 + 64]));
    for (const r of roots) expect(valid.has(r.value), r.value.toString(16)).toBe(true);
    console.log(`core: ${roots.length} roots equal to gdb's reads of their slots`);
  });
});

describe("stops the walker must refuse or name", () => {
  const start = (pc: number): { sp: number; ra: number; pcIsExact: true } => {
    const f = walked[0]!.frames.find((x) => x.function === "mgd_cb")!;
    return { sp: f.sp, ra: pc, pcIsExact: true };
  };
  const unwinder = (mode: "strict" | "lenient"): Unwinder => new Unwinder(coreWalk.snapshot, coreWalk.memory, { mode, modules: coreWalk.modules });
  it("a managed frame stopped between safepoints: strict refuses it, lenient reports it as such", () => {
    const f = walked[0]!.frames.find((x) => x.function === "mgd_cb")!;
    const inside = f.pc + 1; // the instruction after the call's return address: no safepoint there
    expect(() => unwinder("strict").init(start(inside))).toThrow(WalkError);
    expect(() => unwinder("strict").init(start(inside))).toThrow(/managed frame .*mgd_cb.* not a safepoint/);
    const u = unwinder("lenient").init(start(inside));
    expect(u.kind).toBe("managed-unsafe");
  });
  it("an address with neither a safepoint nor CFI is a typed error naming the address and module", () => {
    const prog = coreWalk.modules.modules.find((m) => m.path === program)!;
    expect(() => unwinder("strict").init(start(prog.start))).toThrow(/0x[0-9a-f]+ \(prog!?[^)]*\) has no safepoint and no CFI in prog covers it/);
    expect(() => unwinder("strict").init(start(0x1000))).toThrow(/0x1000 has no safepoint and lies in no mapped module/);
  });
});

describe("rootwalk roots (the command)", () => {
  beforeAll(() => {
    buildRunEntry();
  }, 300_000);
  const cli = (args: string[]): { status: number | null; stdout: string; stderr: string } => {
    const r = spawnSync(process.execPath, [join(OUT_DIR, "src", "cli", "main.js"), ...args], { encoding: "utf8", timeout: 60_000 });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  it("prints every thread, its frames and roots; --json has the same frames", () => {
    const text = cli(["roots", core, program]);
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout.match(/^thread \d+/gm)?.length).toBe(3);
    expect(text.stdout.match(/\[managed\]/g)?.length).toBe(6);
    expect(text.stdout).toContain("<signal handler called>  [signal]");
    const json = JSON.parse(cli(["roots", core, "--json"]).stdout) as { threads: { frames: unknown[] }[] };
    expect(json.threads.map((t) => t.frames.length).sort()).toEqual(walked.map((t) => t.frames.length).sort());
  });
  // The same program relinked: another build id, or none where the core's mapping had one.
  it.each([
    ["another build id", "prog-other-build-id", "-Wl,--build-id=0x0123456789abcdef", "build id 0123456789abcdef"],
    ["no build id", "prog-no-build-id", "-Wl,--build-id=none", "no build id"],
  ])("an executable that is not the one the core mapped (%s) is one line naming the ids, exit 1", (_, name, flag, found) => {
    const rebuilt = join(dir, name);
    run("gcc", ["-O1", join(HERE, "harness.c"), join(dir, "apply.o"), compiledObject, "-Wl,-z,notext", flag, "-lpthread", "-o", rebuilt]);
    const r = cli(["roots", core, rebuilt]);
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(new RegExp(`${name}: found ${found}, expected build id [0-9a-f]{40} \\(the file mapped when the core was written\\)`));
    expect(r.stdout).toBe("");
  });

  it("a file that is not a core is one line and exit 1", () => {
    const r = cli(["roots", program]);
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("ET_CORE");
  });
});
