import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { ReportData } from "./report-data.js";
import { REPORT_PAGE_SCRIPT } from "./report-page-script.js";

/** uPlot (MIT, a dependency of the package): its script and style, inlined into every report. */
function uplotAssets(): { script: string; style: string } {
  const require = createRequire(import.meta.url);
  const main = require.resolve("uplot"); // .../uplot/dist/uPlot.cjs.js
  const dist = main.slice(0, main.lastIndexOf("/"));
  return { script: readFileSync(`${dist}/uPlot.iife.min.js`, "utf8"), style: readFileSync(`${dist}/uPlot.min.css`, "utf8") };
}

const escapeHtml = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** Inside <script>, "</" would end the element: JSON keeps its meaning with "<\/". */
const scriptSafe = (text: string): string => text.replace(/<\//g, "<\\/");

function table(caption: string, rows: readonly (readonly string[])[]): string {
  const body = rows
    .map((r) => `<tr>${r.map((cell, k) => (k === 0 ? `<th>${escapeHtml(cell)}</th>` : `<td>${escapeHtml(cell)}</td>`)).join("")}</tr>`)
    .join("\n");
  return `<table><caption>${escapeHtml(caption)}</caption>\n${body}\n</table>`;
}

function percentileTable(data: ReportData): string {
  const names: [keyof ReportData["percentiles"], string][] = [
    ["pauseMs", "pause"],
    ["stopTheWorldMs", "stop the world"],
    ["scanMs", "scan"],
    ["traceEvacuateMs", "trace and evacuate"],
    ["sweepMs", "sweep"],
    ["verifyMs", "verify"],
  ];
  const ms = (x: number): string => x.toFixed(3);
  const rows = [["phase (ms)", "p50", "p90", "p99", "max"], ...names.map(([key, name]) => [name, ...Object.values(data.percentiles[key]).map(ms)])];
  return table("Pause and phases over all collections", rows);
}

const STYLE = `
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 16px; color: #222; background: #fff; width: 1320px; }
h1 { font-size: 20px; margin: 0 0 8px; }
.chart { width: 1300px; height: 360px; margin: 8px 0 16px; }
.tables { display: flex; gap: 24px; align-items: flex-start; flex-wrap: wrap; }
table { border-collapse: collapse; font-size: 13px; }
caption { font-weight: bold; text-align: left; padding: 4px 0; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: left; }
td { font-variant-numeric: tabular-nums; }
#heap-map svg { max-width: 1300px; height: auto; }
.note { color: #666; font-size: 12px; }
`;

const CHART_IDS = ["chart-pause", "chart-histogram", "chart-heap", "chart-blocks", "chart-moved", "chart-scan", "chart-threads", "chart-thread-roots"];

/**
 * The run report: one self-contained HTML page (uPlot, its style, the data and the heap map all
 * inline; it requests nothing from any host), drawn by REPORT_PAGE_SCRIPT.
 */
export function renderReportHtml(data: ReportData): string {
  const { script, style } = uplotAssets();
  const kinds = Object.entries(data.kinds).map(([kind, n]) => `${n} ${kind}`);
  const svg = data.heapMapSvg.replace(/^<\?xml[^>]*>\s*/, "");
  const json = scriptSafe(JSON.stringify({ ...data, heapMapSvg: undefined }));
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(data.title)}</title>
<style>${style}</style><style>${STYLE}</style></head>
<body>
<h1>${escapeHtml(data.title)}</h1>
<p class="note">${data.collections} collections (${escapeHtml(kinds.join(", ") || "none")})${data.bucket > 1 ? `; charts per collection show the mean of each ${data.bucket} collections (the histogram and percentiles count every one)` : ""}; <span id="render-time"></span></p>
<div class="tables">${table("Parameters", data.parameters)}${table("Summary", data.summary)}${percentileTable(data)}</div>
${CHART_IDS.map((id) => `<div class="chart" id="${id}"></div>`).join("\n")}
<h2>Heap map after the run</h2>
<div id="heap-map">${svg}</div>
<script type="application/json" id="rw-data">${json}</script>
<script>${scriptSafe(script)}</script>
<script>${REPORT_PAGE_SCRIPT}</script>
</body></html>
`;
}
