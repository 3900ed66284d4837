// `rootwalk run --report FILE.html` and `sim --report` (src/cli/report/): real runs of both styles
// (statepoint and plimmix) with --stress, and a 5,000-frame recursion under --generational with
// and without return barriers, each report opened in headless Chromium (Debian's `chromium`,
// scripts/system-packages' test profile): the page must draw every chart (colored pixels inside
// each chart's plotting area in a screenshot, the boxes read from the page itself) and log nothing
// on the console; `--gc-trace` lines must parse back to the same run's --json; the frames each
// nursery collection skipped below its return barriers reach the trace and the report's data.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { CLI, buildRunEntry } from "../support/native-run.js";
import { embeddedReportData } from "../support/report-page.js";
import { readPng } from "../support/svg-to-png.js";

const ROOT = join(import.meta.dirname, "..", "..");
const OUT = join(ROOT, ".cache", "run-report");
const PROGRAMS = join(ROOT, "test", "native-programs");
/** 5,000 frames with a root each, whose bottom allocates: a dozen nursery collections at --nursery 64K. */
const DEEP = join(ROOT, "test", "native-runtime", "programs", "deep-roots-5k.ll");
/** The window the screenshot is taken in: tall enough for every chart (8 x 376 px under the tables). */
const WINDOW = { width: 1400, height: 3700 };

interface Run {
  json: Record<string, unknown>;
  stderr: string;
  report: string;
}

function rootwalk(args: string[], report: string): Run {
  const r = spawnSync(process.execPath, [CLI, ...args, "--report", report, "--gc-trace", "--json"], { encoding: "utf8", timeout: 300_000 });
  if (r.status !== 0) throw new Error(`rootwalk ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return { json: JSON.parse(r.stdout) as Record<string, unknown>, stderr: r.stderr, report };
}

function chromium(args: string[]): { stdout: string; stderr: string } {
  const r = spawnSync("chromium", ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", ...args], { encoding: "utf8", timeout: 120_000 });
  if (r.status !== 0) throw new Error(`chromium exited ${r.status}: ${r.stderr}`);
  return { stdout: r.stdout, stderr: r.stderr };
}

/** One --gc-trace line's fields (docs/cli.md "--gc-trace"). */
const TRACE_LINE =
  /^rootwalk gc (\d+) (\S+) reason=(\S+) pause_ms=([\d.]+) stw_ms=(-?[\d.]+) scan_ms=(-?[\d.]+) trace_ms=([\d.]+) sweep_ms=([\d.]+) verify_ms=(-?[\d.]+) heap_bytes=(\d+)->(\d+) live_bytes=(\d+) evacuated_bytes=(\d+)(?: promoted_bytes=(\d+))? frames=(\d+) frames_skipped=(\d+) roots=(\d+) relocated=(\d+)$/;

/** Per line: number, pause, the five phases, frames, relocated, frames skipped. */
function traceLines(stderr: string): number[][] {
  return stderr
    .split("\n")
    .filter((line) => line.startsWith("rootwalk gc "))
    .map((line) => {
      const m = TRACE_LINE.exec(line);
      if (m === null) throw new Error(`not a --gc-trace line: ${line}`);
      return [m[1], m[4], m[5], m[6], m[7], m[8], m[9], m[15], m[18], m[16]].map(Number);
    });
}

const runs: Record<string, Run> = {};

beforeAll(() => {
  buildRunEntry();
  mkdirSync(OUT, { recursive: true });
  runs["statepoint"] = rootwalk(["run", join(PROGRAMS, "sp-binary-tree.ll"), "--stress=40"], join(OUT, "statepoint.html"));
  runs["plimmix"] = rootwalk(["run", "--plimmix", join(PROGRAMS, "pl-list-tree.ll"), "--stress=20"], join(OUT, "plimmix.html"));
  runs["sim"] = rootwalk(["sim", "--workload", "mt-gcbench", "--threads", "3", "--stress=40"], join(OUT, "sim.html"));
  runs["barriers"] = rootwalk(["run", DEEP, "--generational", "--nursery", "64K"], join(OUT, "barriers.html"));
  runs["no-barriers"] = rootwalk(["run", DEEP, "--generational", "--nursery", "64K", "--no-return-barriers"], join(OUT, "no-barriers.html"));
}, 600_000);

/** The fewest collections each run must make for its lines to say anything. */
const MIN_COLLECTIONS: Record<string, number> = { statepoint: 20, plimmix: 20, barriers: 10, "no-barriers": 10 };

describe("rootwalk run --gc-trace", () => {
  for (const style of ["statepoint", "plimmix", "barriers", "no-barriers"]) {
    it(`${style}: one line per collection, parsing back to the --json numbers of the same run`, () => {
      const { json, stderr } = runs[style]!;
      const lines = traceLines(stderr);
      expect(json["collections"]).toBeGreaterThan(MIN_COLLECTIONS[style]!);
      expect(lines.map((l) => l[0])).toEqual(Array.from({ length: json["collections"] as number }, (_, k) => k + 1));
      expect(Math.max(...lines.map((l) => l[1]!)).toFixed(3)).toBe((json["maxPauseMs"] as number).toFixed(3));
      expect(lines.reduce((s, l) => s + l[7]!, 0)).toBe(json["framesScanned"]);
      expect(lines.reduce((s, l) => s + l[8]!, 0)).toBe(json["rootsRelocated"]);
      expect(lines.reduce((s, l) => s + l[9]!, 0)).toBe(json["framesSkipped"]);
      // Each line's phases are rounded to 0.001 ms: their sums are within half of that per line.
      const phases = json["phasesMs"] as Record<string, number>;
      const tolerance = lines.length * 0.0005 + 0.001;
      ["stopTheWorld", "scan", "traceEvacuate", "sweep", "verify"].forEach((phase, k) => {
        expect(Math.abs(lines.reduce((s, l) => s + l[2 + k]!, 0) - phases[phase]!)).toBeLessThanOrEqual(tolerance);
      });
    });
  }
});

describe("frames skipped by return barriers, per collection (deep-roots-5k.ll, --generational)", () => {
  /** Frames scanned and skipped per collection, from the trace lines and from the report's data (a point per collection). */
  function perCollection(name: string): { scanned: number[]; skipped: number[]; data: ReturnType<typeof embeddedReportData> } {
    const lines = traceLines(runs[name]!.stderr);
    const data = embeddedReportData(readFileSync(runs[name]!.report, "utf8"));
    expect(data.bucket).toBe(1);
    expect(data.kinds).toEqual({ nursery: lines.length });
    expect(data.series.frames).toEqual(lines.map((l) => l[7]));
    expect(data.series.framesSkipped).toEqual(lines.map((l) => l[9]));
    expect(data.threads.map((t) => t.label)).toEqual(["thread #0"]);
    expect(data.threads[0]!.framesSkipped).toEqual(data.series.framesSkipped);
    const json = runs[name]!.json;
    expect(data.summary).toContainEqual(["frames skipped", String(json["framesSkipped"])]);
    return { scanned: lines.map((l) => l[7]!), skipped: lines.map((l) => l[9]!), data };
  }

  it("with return barriers: every nursery collection after the first skips frames, and scanned + skipped is the whole stack", () => {
    const withBarriers = perCollection("barriers");
    const without = perCollection("no-barriers");
    // The first collection finds no barrier armed yet; each later one stops at the innermost.
    expect(withBarriers.skipped.slice(1).every((n) => n > 1000)).toBe(true);
    expect(withBarriers.scanned.slice(1).every((n) => n < 1000)).toBe(true);
    // The same allocations collect at the same depths: what one skipped, the other walked.
    expect(withBarriers.scanned.map((n, k) => n + withBarriers.skipped[k]!)).toEqual(without.scanned);
  });

  it("with --no-return-barriers: no frame skipped, each collection after the first walks the whole 5,000-frame stack", () => {
    const { scanned, skipped } = perCollection("no-barriers");
    expect(skipped.every((n) => n === 0)).toBe(true);
    // The first collection comes during the descent (each frame allocates its cell).
    expect(scanned[0]).toBeGreaterThan(4000);
    expect(scanned.slice(1).every((n) => n > 5000)).toBe(true);
  });
});

describe("the run report in headless Chromium", () => {
  for (const name of ["statepoint", "plimmix", "sim", "barriers", "no-barriers"]) {
    it(`${name}: a self-contained page whose every chart drew, with nothing on the console`, () => {
      const { report } = runs[name]!;
      const html = readFileSync(report, "utf8");
      // Offline: nothing is loaded from anywhere (no src/href to a host, no <link>).
      expect(html).not.toMatch(/(?:src|href)\s*=\s*["']?(?:https?:)?\/\//i);
      expect(html).not.toMatch(/<link\b/i);
      // The heap map after the run, inline (as --svg draws it).
      expect(html).toMatch(/<div id="heap-map"><svg [^>]*>/);
      const url = `file://${report}`;
      const dom = chromium(["--dump-dom", url]).stdout;
      expect(/<body data-rendered="(\d+)"/.exec(dom)?.[1]).toBe("8");
      // Frames skipped drawn beside frames scanned: in all (every run), per thread (only where some were skipped).
      const legend = [...dom.matchAll(/class="u-label">([^<]*)</g)].map((m) => m[1]);
      expect(legend).toContain("frames skipped (right axis)");
      expect(legend.includes("thread #0 skipped")).toBe(name === "barriers");
      const boxes = [...dom.matchAll(/data-box="(\d+),(\d+),(\d+),(\d+)"/g)].map((m) => m.slice(1).map(Number));
      expect(boxes).toHaveLength(8);
      const png = join(OUT, `${name}.png`);
      const shot = chromium(["--enable-logging=stderr", "--v=0", `--screenshot=${png}`, `--window-size=${WINDOW.width},${WINDOW.height}`, url]);
      expect(shot.stderr.split("\n").filter((line) => line.includes(":CONSOLE"))).toEqual([]);
      const image = readPng(png);
      expect([image.width, image.height]).toEqual([WINDOW.width, WINDOW.height]);
      for (const [x, y, width, height] of boxes) {
        expect(y! + height!).toBeLessThanOrEqual(WINDOW.height);
        // A series' stroke is a saturated color; axes, grid and text are gray.
        let colored = 0;
        for (let py = y!; py < y! + height!; py++) {
          for (let px = x!; px < x! + width!; px++) {
            const [r, g, b] = image.at(px, py);
            if (Math.max(r, g, b) - Math.min(r, g, b) > 80) colored++;
          }
        }
        expect(colored, `colored pixels in the chart at ${x},${y}`).toBeGreaterThan(300);
      }
    });
  }
});
