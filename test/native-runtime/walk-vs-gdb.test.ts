import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WalkReport } from "../../walker/frame-report.js";
import { compareThreadWithGdb, type GdbThread } from "../support/gdb-compare.js";
import { ENTRY, buildRunEntry, programArguments } from "../support/native-run.js";
import { NATIVE_PROGRAMS } from "../native-programs/programs.js";

/*
 * The native runtime's own walks, live, against gdb at the same stop (issue 14, item 5). With
 * ROOTWALK_WALK_LOG the runtime appends, after each collection's root scan, every stopped
 * thread's walk (as `--walk unwind` does: managed frames by safepoint, native frames by CFI,
 * no chunk list) and calls rw_walk_logged, where gdb (gdb-walk-log.py) stops the process and
 * unwinds every thread itself. Each logged thread must be one of gdb's threads from the walk's
 * first frame on: pc, SP, CFA and callee-saved registers per frame, to the end of the stack; every
 * root's value must be the word gdb reads at its slot.
 */

const HERE = dirname(fileURLToPath(import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "rootwalk-walk-gdb-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface LoggedStop {
  collection: number;
  threads: (WalkReport & { thread: number })[];
}
interface GdbStop {
  collection: number;
  threads: GdbThread[];
  slots: Record<string, number>;
}

/**
 * Runs the program under gdb, stopping at the first `hits` collections with at least `minThreads`
 * stopped threads; both views of each stop.
 */
function stopsOf(name: string, flags: string[], hits: number, minThreads = 1): { logged: LoggedStop[]; gdb: GdbStop[] } {
  const entry = NATIVE_PROGRAMS.find((p) => p.name === name)!;
  const log = join(scratch, `${name}.jsonl`);
  const out = join(scratch, `${name}.gdb.json`);
  const r = spawnSync("gdb", ["-nx", "-batch", "-x", join(HERE, "gdb-walk-log.py"), "--args", process.execPath, ENTRY, ...programArguments(entry), "--walk", "unwind", ...flags], {
    encoding: "utf8",
    timeout: 240_000,
    env: { ...process.env, ROOTWALK_WALK_LOG: log, RW_GDB_JSON: out, RW_HITS: String(hits), RW_MIN_THREADS: String(minThreads) },
  });
  if (r.status !== 0) throw new Error(`gdb: exit ${r.status}: ${r.stderr.slice(-2000)}`);
  const logged = readFileSync(log, "utf8").trim().split("\n").map((line) => JSON.parse(line) as LoggedStop);
  const gdb = (JSON.parse(readFileSync(out, "utf8")) as { stops: GdbStop[] }).stops.map((s) => ({
    ...s,
    threads: s.threads.map((t) => ({ ...t, frames: t.frames.filter((f) => f.type !== "inline" && f.type !== "tailcall") })),
  }));
  return { logged, gdb };
}

/** Compares every logged thread of every stop; returns the totals for the closing numbers. */
function compareStops(label: string, logged: LoggedStop[], gdb: GdbStop[]): { stops: number; threads: number; frames: number; registers: number; roots: number } {
  const total = { stops: 0, threads: 0, frames: 0, registers: 0, roots: 0 };
  for (const stop of gdb) {
    const log = logged.find((l) => l.collection === stop.collection)!;
    expect(log, `${label}: collection ${stop.collection} logged`).toBeDefined();
    for (const walk of log.threads) {
      const first = walk.frames[0]!;
      const g = stop.threads.find((t) => t.frames.some((f) => f.pc === first.pc && f.sp === first.sp));
      expect(g, `${label} collection ${stop.collection} thread #${walk.thread}: no gdb thread at pc ${first.pc.toString(16)}`).toBeDefined();
      const n = compareThreadWithGdb(g!, walk, `${label} collection ${stop.collection} thread #${walk.thread}`, true);
      total.frames += n.frames;
      total.registers += n.registers;
      for (const f of walk.frames) {
        for (const root of f.roots) {
          expect(root.value, `${label} collection ${stop.collection} ${f.function} root [${root.slot.toString(16)}]`).toBe(stop.slots[String(root.slot)]);
          total.roots++;
        }
      }
      total.threads++;
    }
    total.stops++;
  }
  console.log(`${label}: ${total.stops} stops, ${total.threads} thread walks, ${total.frames} frames, ${total.registers} callee-saved registers, ${total.roots} roots equal to gdb's`);
  return total;
}

beforeAll(() => {
  buildRunEntry();
}, 300_000);

describe("the native runtime's walks (--walk unwind) equal gdb's at the same stops", () => {
  it("sp-qsort-callback: managed -> libc qsort -> managed comparator, at 3 collections", () => {
    const { logged, gdb } = stopsOf("sp-qsort-callback", ["--stress=200"], 3);
    const total = compareStops("sp-qsort-callback", logged, gdb);
    expect(total.stops).toBe(3);
    expect(total.roots).toBeGreaterThan(0);
    // The walks cross libc's qsort frames by CFI.
    expect(logged.some((l) => l.threads.some((t) => t.frames.some((f) => f.kind === "native" && f.function?.includes("libc"))))).toBe(true);
  });

  it("sp-threads: every stopped thread of a 4-worker program, at 3 collections with 2 or more threads stopped", () => {
    // Under gdb the workers start slowly (gdb handles each thread event): often only 2 or 3 threads overlap.
    const { logged, gdb } = stopsOf("sp-threads", ["--stress=400"], 3, 2);
    const total = compareStops("sp-threads", logged, gdb);
    expect(total.stops).toBe(3);
    expect(total.threads).toBeGreaterThanOrEqual(3 * 2); // workers, and rw_main waiting in gc_thread_join
  });
});
