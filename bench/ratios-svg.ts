import type { CaseResult } from "./corpus.js";

/*
 * The ratios as an SVG chart: one panel per layer (Walk, Lookup, Parse, Collector), one bar per
 * case (input size on the label), the ratio rootwalk / reference on a log scale, a line at 1 (as
 * fast as the reference) and, on each row with a target, a dashed mark at that case's target
 * ratio (`targetOf`: bench/run-bench.ts reads it from its TARGETS table). A bar is green when it
 * meets its target, red when it misses it, grey for a case without one.
 */

const WIDTH = 900;
const BAR_HEIGHT = 22;
const LABEL_WIDTH = 260;
const MAX_RATIO = 64;

function escapeXml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

export function ratiosSvg(results: readonly CaseResult[], title: string, targetOf: (caseName: string) => number | undefined): string {
  const plotWidth = WIDTH - LABEL_WIDTH - 80;
  const x = (ratio: number): number => LABEL_WIDTH + ((Math.log2(Math.min(Math.max(ratio, 0.25), MAX_RATIO)) + 2) / (Math.log2(MAX_RATIO) + 2)) * plotWidth;
  const rows: string[] = [];
  let y = 50;
  let layer = "";
  for (const r of results) {
    const thisLayer = r.name.split("/")[0]!;
    if (thisLayer !== layer) {
      layer = thisLayer;
      y += 8;
      rows.push(`<text x="10" y="${y + 14}" font-weight="bold">${escapeXml(layer)}</text>`);
      y += BAR_HEIGHT;
    }
    const target = targetOf(r.name);
    const colour = target === undefined ? "#999999" : r.ratio <= target ? "#2a9d8f" : "#e76f51";
    rows.push(
      `<text x="20" y="${y + 15}">${escapeXml(r.name.split("/")[1] ?? r.name)}</text>`,
      `<rect x="${x(0.25)}" y="${y + 3}" width="${(x(r.ratio) - x(0.25)).toFixed(1)}" height="${BAR_HEIGHT - 6}" fill="${colour}"/>`,
      `<text x="${(x(r.ratio) + 4).toFixed(1)}" y="${y + 15}">${r.ratio.toFixed(2)}x</text>`,
    );
    if (target !== undefined) {
      const tx = x(target).toFixed(1);
      rows.push(
        `<line x1="${tx}" y1="${y}" x2="${tx}" y2="${y + BAR_HEIGHT}" stroke="#333" stroke-width="2" stroke-dasharray="3 2"><title>target ${target}x</title></line>`,
      );
    }
    y += BAR_HEIGHT;
  }
  const height = y + 40;
  const grid: string[] = [];
  for (const g of [0.25, 0.5, 1, 1.5, 2, 4, 8, 16, 32, 64]) {
    const gx = x(g).toFixed(1);
    grid.push(`<line x1="${gx}" y1="40" x2="${gx}" y2="${height - 30}" stroke="${g === 1 ? "#333" : "#ddd"}"/>`);
    grid.push(`<text x="${gx}" y="${height - 14}" text-anchor="middle" font-size="11">${g}x</text>`);
  }
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" font-family="sans-serif" font-size="13">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="24" font-size="15" font-weight="bold">${escapeXml(title)}</text>`,
    ...grid,
    ...rows,
    `</svg>`,
    "",
  ].join("\n");
}
