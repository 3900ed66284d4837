import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WalkReport } from "../../walker/frame-report.js";
import { compareThreadWithGdb, readLoggedWalk, type GdbThread, type LoggedWalkJson } from "../support/gdb-compare.js";
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
  /** Each thread's whole walk, and as `scan` the walk the scanner made (chunks or unwind). */
  threads: (WalkReport & { thread: number; scan: WalkReport })[];
}
interface GdbStop {
  collection: number;
  threads: GdbThread[];
  slots: Record<string, number>;
}

/**
 * Runs the program under gdb with `--walk walk`, stopping at the first `hits` collections with at
 * least `minThreads` stopped threads; both views of each stop.
 */
function stopsOf(name: string, walk: "unwind" | "chunks", flags: string[], hits: number, minThreads = 1): { logged: LoggedStop[]; gdb: GdbStop[] } {
  const entry = NATIVE_PROGRAMS.find((p) => p.name === name)!;
  const log = join(scratch, `${name}-${walk}.jsonl`);
  const out = join(scratch, `${name}-${walk}.gdb.json`);
  const r = spawnSync(
    "gdb",
    ["-nx", "-batch", "-x", join(HERE, "gdb-walk-log.py"), "--args", process.execPath, ENTRY, ...programArguments(entry), "--walk", walk, ...flags],
    {
      encoding: "utf8",
      timeout: 240_000,
      // ROOTWALK_SCAN_CROSSCHECK: the scan's fast loop must give the frames and root pairs of the
      // general unwinder, whose walk the log's `scan` reports (so the log is what the scan did).
      env: {
        ...process.env,
        ROOTWALK_SCAN_CROSSCHECK: "1",
        ROOTWALK_WALK_LOG: log,
        RW_GDB_JSON: out,
        RW_HITS: String(hits),
        RW_MIN_THREADS: String(minThreads),
      },
    },
  );
  if (r.status !== 0) throw new Error(`gdb: exit ${r.status}: ${r.stderr.slice(-2000)}`);
  const logged = readFileSync(log, "utf8")
    .trim()
    .split("\n")
    .map((line) => {
      const stop = JSON.parse(line) as { collection: number; threads: (LoggedWalkJson & { thread: number; scan: LoggedWalkJson })[] };
      const threads = stop.threads.map((t) => ({ ...readLoggedWalk(t), thread: t.thread, scan: readLoggedWalk(t.scan) }));
      return { collection: stop.collection, threads } satisfies LoggedStop;
    });
  const gdb = (JSON.parse(readFileSync(out, "utf8")) as { stops: GdbStop[] }).stops.map((s) => ({
    ...s,
    threads: s.threads.map((t) => ({ ...t, frames: t.frames.filter((f) => f.type !== "inline" && f.type !== "tailcall") })),
  }));
  return { logged, gdb };
}

/**
 * Compares every logged thread of every stop (its whole walk, or with `which` "scan" the
 * scanner's own walk: for `--walk chunks` the chunk walk, which ends at the boundary); returns
 * the totals for the closing numbers.
 */
function compareStops(
  label: string,
  logged: LoggedStop[],
  gdb: GdbStop[],
  which: "whole" | "scan" = "whole",
): { stops: number; threads: number; frames: number; registers: number; roots: number } {
  const total = { stops: 0, threads: 0, frames: 0, registers: 0, roots: 0 };
  for (const stop of gdb) {
    const log = logged.find((l) => l.collection === stop.collection)!;
    expect(log, `${label}: collection ${stop.collection} logged`).toBeDefined();
    for (const thread of log.threads) {
      const walk = which === "whole" ? thread : thread.scan;
      const first = walk.frames[0]!;
      const g = stop.threads.find((t) => t.frames.some((f) => f.pc === first.pc && f.sp === first.sp));
      expect(g, `${label} collection ${stop.collection} thread #${thread.thread}: no gdb thread at pc ${first.pc.toString(16)}`).toBeDefined();
      const end = walk.stopReason === "boundary" ? "boundary" : "stack-end";
      const n = compareThreadWithGdb(g!, walk, `${label} collection ${stop.collection} thread #${thread.thread}`, true, end);
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
  console.log(
    `${label}: ${total.stops} stops, ${total.threads} thread walks, ${total.frames} frames, ${total.registers} callee-saved registers, ${total.roots} roots equal to gdb's`,
  );
  return total;
}

beforeAll(() => {
  buildRunEntry();
}, 300_000);

describe("the native runtime's walks (--walk unwind) equal gdb's at the same stops", () => {
  it("sp-qsort-callback: managed -> libc qsort -> managed comparator, at 3 collections", () => {
    const { logged, gdb } = stopsOf("sp-qsort-callback", "unwind", ["--stress=200"], 3);
    const total = compareStops("sp-qsort-callback", logged, gdb);
    expect(total.stops).toBe(3);
    // With --walk unwind the scanner's own walk is the whole walk, frame by frame.
    for (const t of logged.flatMap((l) => l.threads)) expect(t.scan.frames).toEqual(t.frames);
    expect(total.roots).toBeGreaterThan(0);
    // The walks cross libc's qsort frames by CFI.
    expect(logged.some((l) => l.threads.some((t) => t.frames.some((f) => f.kind === "native" && f.function?.includes("libc"))))).toBe(true);
  });

  it("sp-threads: every stopped thread of a 4-worker program, at 3 collections with 2 or more threads stopped", () => {
    // Under gdb the workers start slowly (gdb handles each thread event): often only 2 or 3 threads overlap.
    const { logged, gdb } = stopsOf("sp-threads", "unwind", ["--stress=400"], 3, 2);
    const total = compareStops("sp-threads", logged, gdb);
    expect(total.stops).toBe(3);
    expect(total.threads).toBeGreaterThanOrEqual(3 * 2); // workers, and rw_main waiting in gc_thread_join
  });
});

describe("the native runtime's chunk walk (--walk chunks, the default) equals gdb's frames at the same stops", () => {
  it("sp-qsort-callback at 3 collections: every frame from the stop to the boundary, and every root", () => {
    const { logged, gdb } = stopsOf("sp-qsort-callback", "chunks", ["--stress=200"], 3);
    const total = compareStops("sp-qsort-callback --walk chunks", logged, gdb, "scan");
    expect(total.stops).toBe(3);
    expect(total.roots).toBeGreaterThan(0);
    for (const t of logged.flatMap((l) => l.threads)) {
      // The chunk walk ends where the thread entered managed code, before the stack ends.
      expect(t.scan.stopReason).toBe("boundary");
      expect(t.scan.frames.length).toBeLessThan(t.frames.length);
      expect(t.scan.frames.length).toBeGreaterThan(0);
    }
  });

  it("sp-threads at 3 collections with 2 or more threads stopped: every stopped thread's chunk walk", () => {
    const { logged, gdb } = stopsOf("sp-threads", "chunks", ["--stress=400"], 3, 2);
    const total = compareStops("sp-threads --walk chunks", logged, gdb, "scan");
    expect(total.stops).toBe(3);
    expect(total.threads).toBeGreaterThanOrEqual(3 * 2);
  });
});
