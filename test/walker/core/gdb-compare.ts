import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import type { CoreThreadWalk } from "../../../src/cli/roots-command.js";

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

const HERE = dirname(fileURLToPath(import.meta.url));
const CALLEE_SAVED = ["rbx", "rbp", "r12", "r13", "r14", "r15"] as const;

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
  run("gdb", ["-nx", "-batch", "-x", join(HERE, "gdb-core.py"), "--args", program], env);
  const threads = (JSON.parse(readFileSync(json, "utf8")) as { threads: GdbThread[] }).threads.map((t) => ({
    ...t,
    frames: t.frames.filter((f) => f.type !== "inline" && f.type !== "tailcall"),
  }));
  rmSync(json);
  return threads;
}

/**
 * Checks every frame gdb shows against rootwalk's walk of the same thread: pc, SP, CFA (the
 * caller's SP) and each callee-saved register both know. Returns how many were compared.
 */
export function compareWithGdb(gdbThreads: readonly GdbThread[], walked: readonly CoreThreadWalk[]): { frames: number; registers: number } {
  let frames = 0;
  let registers = 0;
  for (const g of gdbThreads) {
    const w = walked.find((t) => t.tid === g.tid)!;
    expect(w.stopReason, `${g.tid}: ${w.stopDetail}`).toBe("stack-end");
    expect(w.frames.length).toBeGreaterThanOrEqual(g.frames.length);
    g.frames.forEach((gf, i) => {
      const f = w.frames[i]!;
      expect(f.pc, `thread ${g.tid} frame #${i} ${gf.name}`).toBe(gf.pc);
      expect(f.sp, `thread ${g.tid} frame #${i} ${gf.name}`).toBe(gf.sp);
      const caller = g.frames[i + 1];
      if (caller?.sp != null) expect(f.cfa, `thread ${g.tid} frame #${i} CFA`).toBe(caller.sp);
      for (const name of CALLEE_SAVED) {
        const expected = gf.registers[name];
        if (expected == null || f.registers[name] === null) continue;
        expect(f.registers[name], `thread ${g.tid} frame #${i} ${gf.name} ${name}`).toBe(expected);
        registers++;
      }
      frames++;
    });
  }
  return { frames, registers };
}
