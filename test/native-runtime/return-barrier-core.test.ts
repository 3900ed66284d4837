import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CoreFrame, type CoreThreadWalk, type CoreWalk, walkCore } from "../../src/cli/roots-command.js";
import { CoreFile } from "../../src/core/core-file.js";
import { returnBarrierSymbols } from "../../src/core/core-return-barriers.js";
import { compareThreadWithGdb, gdbReadCore, type GdbThread } from "../support/gdb-compare.js";
import { ENTRY, buildRunEntry } from "../support/native-run.js";

/*
 * `rootwalk roots` on a core taken while the runtime's return barriers are armed (issue 33,
 * acceptance): programs/deep-barriers.ll, 2,000 frames deep with a root each, runs under
 * `rootwalk run --generational --nursery 64K` and aborts after about 30 nursery collections at the
 * bottom of its recursion; the kernel writes the core (sparse: the 4 GiB scan memory is mostly
 * holes). The same run with --no-return-barriers gives the pristine stack to compare with: the
 * same frames (kind, function, pc of managed frames, SP relative to the stack's top) and the same
 * roots (slots relative to the top, nulls in the same places, and every other value the one in the
 * other core plus one constant: the heap may be mapped elsewhere). gdb, reading the same cores,
 * agrees on every frame it shows of the pristine one; on the armed one it stops at the first
 * barrier (frame named rw_return_barrier_trampoline_start, then nothing), and agrees up to there.
 */

const HERE = dirname(fileURLToPath(import.meta.url));
const PROGRAM = join(HERE, "programs", "deep-barriers.ll");
const FLAGS = ["--generational", "--nursery", "64K", "--heap", "8M", "--stack", "4M", "--thread-stack", "1M", "--threads", "1"];
const pattern = readFileSync("/proc/sys/kernel/core_pattern", "utf8").trim();
const kernelWritesCores = !pattern.startsWith("|") && !pattern.includes("/");
const scratch = mkdtempSync(join(tmpdir(), "rootwalk-barrier-core-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true })); // each core is about 30 MB on disk, 4.4 GB sparse

interface Taken {
  core: string;
  walk: CoreWalk;
  /** The thread that ran rw_main (the one whose frames reach churn). */
  mutator: CoreThreadWalk;
}

/** Runs the program (ASLR off, cores on) in its own folder until it aborts; the core walked. */
function takeCore(name: string, extra: readonly string[]): Taken {
  const dir = join(scratch, name);
  mkdirSync(dir);
  const r = spawnSync("sh", ["-c", 'ulimit -c unlimited && exec setarch "$(uname -m)" -R "$@"', "sh", process.execPath, ENTRY, PROGRAM, ...FLAGS, ...extra], {
    cwd: dir,
    encoding: "utf8",
    timeout: 120_000,
  });
  expect(r.signal ?? r.status, r.stderr).toBe("SIGABRT");
  const file = readdirSync(dir).find((f) => f === "core" || f.startsWith("core."));
  if (file === undefined) throw new Error(`${name}: the kernel wrote no core in ${dir} (core_pattern ${pattern})`);
  const core = join(dir, file);
  const walk = walkCore(core);
  const mutator = walk.threads.find((t) => t.frames.some((f) => f.function === "churn"));
  if (mutator === undefined) throw new Error(`${name}: no thread of the core is in churn`);
  return { core, walk, mutator };
}

let armed: Taken;
let off: Taken;
let trampoline = 0;

describe.skipIf(!kernelWritesCores)(`roots on a core of a run with return barriers armed (core_pattern ${pattern})`, () => {
  beforeAll(() => {
    buildRunEntry();
    armed = takeCore("armed", []);
    off = takeCore("off", ["--no-return-barriers"]);
    const runtime = armed.walk.modules.modules.find((m) => m.name.startsWith("librwruntime"))!;
    trampoline = returnBarrierSymbols(runtime.elf(), runtime.loadBias, runtime.path)!.trampoline;
  }, 240_000);

  it("the armed core's stack holds the trampoline in the slots the table names; roots restores and marks them", () => {
    const marked = armed.mutator.frames.filter((f) => f.returnBarrier);
    const raw = CoreFile.open(armed.core);
    try {
      for (const f of marked) expect(raw.memory.readWord(f.pcSlot), `frame #${f.index}`).toBe(trampoline);
    } finally {
      raw.close();
    }
    // The barriers of the last collection's scan: depths 1, 2, 4, ... of a 2,000-frame stack.
    expect(marked.length).toBeGreaterThanOrEqual(8);
    expect(marked.every((f) => f.kind === "managed" && f.function === "down")).toBe(true);
    expect(off.mutator.frames.filter((f) => f.returnBarrier)).toEqual([]);
    expect(armed.walk.note).toBeUndefined();
    console.log(`armed core: ${marked.length} frames restored from the table (#${marked.map((f) => f.index).join(", #")})`);
  });

  it("gives the frames and roots of the same run without barriers", () => {
    const a = armed.mutator;
    const o = off.mutator;
    expect(a.stopReason).toBe("stack-end");
    expect(o.stopReason).toBe("stack-end");
    expect(a.frames.length).toBe(o.frames.length);
    expect(a.frames.length).toBeGreaterThan(2000);
    const topA = a.frames[a.frames.length - 1]!.sp;
    const topO = o.frames[o.frames.length - 1]!.sp;
    const shape = (f: CoreFrame, top: number): unknown => ({
      kind: f.kind,
      function: f.function,
      pc: f.kind === "managed" ? f.pc : undefined,
      sp: top - f.sp,
      roots: f.roots.map((r) => ({ slot: top - r.slot, isNull: r.value === 0 })),
    });
    expect(a.frames.map((f) => shape(f, topA))).toEqual(o.frames.map((f) => shape(f, topO)));
    const deltas = new Set(
      a.frames.flatMap((f, i) => f.roots.filter((r) => r.value !== 0).map((r, k) => r.value - o.frames[i]!.roots.filter((s) => s.value !== 0)[k]!.value)),
    );
    expect(deltas.size).toBe(1);
    const roots = a.frames.reduce((n, f) => n + f.roots.length, 0);
    expect(roots).toBe(4002); // p and c of every down frame, 2,001 of them
    console.log(`armed vs --no-return-barriers: ${a.frames.length} frames and ${roots} roots equal (heap offset ${[...deltas][0]})`);
  });

  it("agrees with gdb: every frame gdb shows of the pristine core, and of the armed one up to the first barrier", () => {
    const gdbOf = (t: Taken): GdbThread => gdbReadCore(process.execPath, t.core).find((g) => g.tid === t.mutator.tid)!;
    const pristine = compareThreadWithGdb(gdbOf(off), off.mutator, "--no-return-barriers");
    expect(pristine.frames).toBeGreaterThanOrEqual(150);
    const g = gdbOf(armed);
    const first = armed.mutator.frames.find((f) => f.returnBarrier)!;
    // gdb unwinds into the trampoline (it looks up pc - 1: the byte before it, labelled
    // rw_return_barrier_trampoline_start, whose CFI says the caller is unknown) and ends there.
    expect(g.frames.length).toBe(first.index + 1);
    expect(g.frames[first.index]!.pc).toBe(trampoline);
    expect(g.frames[first.index]!.name).toBe("rw_return_barrier_trampoline_start");
    const upTo = { ...armed.mutator, stopReason: "boundary", frames: armed.mutator.frames.slice(0, first.index) };
    const before = compareThreadWithGdb(g, upTo, "armed", false, "boundary");
    expect(before.frames).toBe(first.index);
    console.log(
      `gdb: ${pristine.frames} frames of the pristine core equal; on the armed core ${before.frames} frames, then the trampoline at frame #${first.index}`,
    );
  });
});
