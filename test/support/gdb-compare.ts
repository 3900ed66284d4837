import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import type { FrameReportJson, WalkReport } from "../../walker/frame-report.js";

/** gdb's view of one frame of a stopped thread (gdb-core.py). */
export interface GdbFrame {
  pc: number;
  sp: number | null;
  name: string | null;
  /** normal, sigtramp, or inline / tailcall: frames gdb builds from debug info, not on the stack. */
  type: string;
  registers: Record<string, number | null>;
}

export interface GdbThread {
  tid: number;
  frames: GdbFrame[];
}

const CORE_TESTS = join(dirname(fileURLToPath(import.meta.url)), "..", "walker", "core");

export function run(tool: string, args: string[], env: NodeJS.ProcessEnv = process.env): string {
  const r = spawnSync(tool, args, { encoding: "utf8", timeout: 120_000, env });
  if (r.status !== 0) throw new Error(`${tool} ${args.join(" ")}: ${r.status} ${r.stderr}`);
  return r.stdout;
}

/**
 * Runs `program` under gdb to a breakpoint on `breakAt` (after `starti` when `startFirst`, so
 * vDSO functions can be named), writes the core to `core` with gcore and returns gdb's unwind of
 * every thread. Inline and tail-call frames exist only in gdb's debug info (no return address
 * on the stack marks them; an unwinder by CFI has none) and are left out.
 */
export function gdbStopAndCore(program: string, core: string, breakAt: string, startFirst = false): GdbThread[] {
  const json = `${core}.gdb.json`;
  const env = { ...process.env, RW_CORE: core, RW_CORE_JSON: json, RW_BREAK: breakAt, RW_STARTI: startFirst ? "1" : "0" };
  run("gdb", ["-nx", "-batch", "-x", join(CORE_TESTS, "gdb-core.py"), "--args", program], env);
  return stackFramesOf(json);
}

/**
 * gdb's unwind of every thread of an existing core (one the kernel or qemu-user wrote), as
 * gdbStopAndCore. `setup` commands run before the core is read (gdb-multiarch's `set sysroot`).
 */
export function gdbReadCore(program: string, core: string, gdb = "gdb", setup: readonly string[] = []): GdbThread[] {
  const json = `${core}.gdb.json`;
  run(gdb, ["-nx", "-batch", ...setup.flatMap((c) => ["-ex", c]), "-ex", `core-file ${core}`, "-x", join(CORE_TESTS, "gdb-core.py"), program], {
    ...process.env,
    RW_CORE_READ: "1",
    RW_CORE_JSON: json,
  });
  return stackFramesOf(json);
}

function stackFramesOf(json: string): GdbThread[] {
  const threads = (JSON.parse(readFileSync(json, "utf8")) as { threads: GdbThread[] }).threads.map((t) => ({
    ...t,
    frames: t.frames.filter((f) => f.type !== "inline" && f.type !== "tailcall"),
  }));
  rmSync(json);
  return threads;
}

/**
 * Checks rootwalk's walk of a thread against gdb's unwind of the same thread, frame by frame: pc,
 * SP, CFA (the caller's SP) and each callee-saved register both know, over every frame gdb shows
 * from the walk's first one on. With `align`, the walk may start further out than gdb's frame #0
 * (a live stop is walked from the managed frame that entered the runtime; gdb also shows the
 * runtime's and libc's frames below it): the first gdb frame with the walk's pc and SP is frame
 * #0. A walk that must end before the stack does (`end` "boundary": a chunk walk, which stops
 * where the thread entered managed code) is compared over its own frames, each of which gdb must
 * show. Returns how many frames and registers were compared.
 */
export function compareThreadWithGdb(
  g: GdbThread,
  w: WalkReport,
  label: string,
  align = false,
  end: "stack-end" | "boundary" = "stack-end",
): { frames: number; registers: number } {
  let frames = 0;
  let registers = 0;
  expect(w.stopReason, `${label}: ${w.stopDetail}`).toBe(end);
  const first = align ? g.frames.findIndex((f) => f.pc === w.frames[0]?.pc && f.sp === w.frames[0]?.sp) : 0;
  expect(first, `${label}: gdb shows no frame at the walk's start`).toBeGreaterThanOrEqual(0);
  const fromFirst = g.frames.slice(first);
  if (end === "stack-end") expect(w.frames.length, label).toBeGreaterThanOrEqual(fromFirst.length);
  else expect(w.frames.length, label).toBeLessThanOrEqual(fromFirst.length);
  const shown = end === "stack-end" ? fromFirst : fromFirst.slice(0, w.frames.length);
  shown.forEach((gf, i) => {
    const f = w.frames[i]!;
    expect(f.pc, `${label} frame #${i} ${gf.name}`).toBe(gf.pc);
    expect(f.sp, `${label} frame #${i} ${gf.name}`).toBe(gf.sp);
    const caller = fromFirst[i + 1];
    if (caller?.sp != null) expect(f.cfa, `${label} frame #${i} CFA`).toBe(caller.sp);
    // gdb names the machine's callee-saved registers (rbx..r15, x19..x30), as the walk does.
    for (const [name, expected] of Object.entries(gf.registers)) {
      const ours = (f.registers as Record<string, bigint | null | undefined>)[name];
      if (expected == null || ours == null) continue;
      // gdb's JSON numbers are read as doubles: compared as one (ours is exact).
      expect(Number(ours), `${label} frame #${i} ${gf.name} ${name}`).toBe(expected);
      registers++;
    }
    frames++;
  });
  return { frames, registers };
}

/** compareThreadWithGdb for every thread gdb shows (matched by thread id). */
export function compareWithGdb(gdbThreads: readonly GdbThread[], walked: readonly (WalkReport & { tid: number })[]): { frames: number; registers: number } {
  let frames = 0;
  let registers = 0;
  for (const g of gdbThreads) {
    const n = compareThreadWithGdb(
      g,
      walked.find((t) => t.tid === g.tid)!,
      `thread ${g.tid}`,
    );
    frames += n.frames;
    registers += n.registers;
  }
  return { frames, registers };
}

/** A walk as the walk log (ROOTWALK_WALK_LOG) writes it: frames as frameReportJson, hex strings. */
export type LoggedWalkJson = Omit<WalkReport, "frames"> & { frames: FrameReportJson[] };

/** A logged walk read back: addresses as numbers, registers as exact bigints. */
export function readLoggedWalk(w: LoggedWalkJson): WalkReport {
  return {
    ...w,
    frames: w.frames.map((f, index) => ({
      index,
      kind: f.kind,
      pc: Number(f.pc),
      sp: Number(f.sp),
      cfa: f.cfa === null ? null : Number(f.cfa),
      function: f.function ?? undefined,
      registers: Object.fromEntries(Object.entries(f.registers).map(([k, v]) => [k, v === null ? null : BigInt(v)])),
      roots: f.roots.map((r) => ({
        slot: "slot" in r ? Number(r.slot) : Number.NaN,
        register: "register" in r ? r.register : undefined,
        value: Number(r.value),
      })),
      pcSlot: Number.NaN,
    })),
  };
}
