// The run report's data for a run of thousands of collections (src/cli/report/report-data.ts): a
// real `sim --stress` run whose report is read back from its page. Per-collection series are
// bucketed to at most MAX_POINTS_PER_SERIES points, while the histogram and the percentiles count
// every collection, and the page's numbers agree with the run's --json.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_POINTS_PER_SERIES } from "../../src/cli/report/report-data.js";
import { embeddedReportData } from "../support/report-page.js";
import { run } from "../support/run-cli.js";

const dir = mkdtempSync(join(tmpdir(), "rootwalk-report-data-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the report's data for a run of thousands of collections", () => {
  it("buckets the charts to at most 2,000 points and counts every pause in the histogram", async () => {
    const report = join(dir, "sim.html");
    const r = await run("sim", "--stress", "--scale", "0.008", "--json", "--report", report);
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout) as { collections: number; maxPauseMs: number };
    expect(json.collections).toBeGreaterThan(2 * MAX_POINTS_PER_SERIES);
    const data = embeddedReportData(readFileSync(report, "utf8"));
    expect(data.collections).toBe(json.collections);
    expect(data.bucket).toBe(Math.ceil(json.collections / MAX_POINTS_PER_SERIES));
    expect(data.x.length).toBe(Math.ceil(json.collections / data.bucket));
    expect(data.x.length).toBeLessThanOrEqual(MAX_POINTS_PER_SERIES);
    expect(data.x.slice(0, 3)).toEqual([1, 1 + data.bucket, 1 + 2 * data.bucket]);
    for (const values of Object.values(data.series)) expect(values).toHaveLength(data.x.length);
    expect(data.series.promotedBytes).toBeUndefined(); // no generations: no promoted series
    expect(data.histogram.counts.reduce((a, b) => a + b, 0)).toBe(json.collections);
    expect(data.percentiles.pauseMs.max.toFixed(3)).toBe(json.maxPauseMs.toFixed(3));
    expect(Math.max(...data.pauseMaxMs).toFixed(3)).toBe(json.maxPauseMs.toFixed(3));
    const p = data.percentiles.pauseMs;
    expect(p.p50).toBeLessThanOrEqual(p.p90);
    expect(p.p90).toBeLessThanOrEqual(p.p99);
    expect(p.p99).toBeLessThanOrEqual(p.max);
    expect(data.kinds).toEqual({ full: json.collections });
    expect(data.threads.map((t) => t.label)).toEqual(["thread #0"]);
    expect(data.threads[0]!.frames.every((f) => f > 0)).toBe(true);
    // sim has no return barriers: every scan walks whole stacks.
    expect(data.series.framesSkipped!.every((f) => f === 0)).toBe(true);
    expect(data.threads[0]!.framesSkipped.every((f) => f === 0)).toBe(true);
  });
});
