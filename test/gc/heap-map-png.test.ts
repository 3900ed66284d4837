// The heap map looked at as a picture: rendered to PNG with librsvg (test/support/svg-to-png.ts)
// and kept at .cache/heap-map/heap-map.png for a person to open. The title and every text line
// fit inside the picture, the legend shows every fill and outline colour the grid uses, lines
// allocated since the last collection are drawn as allocated (not free), and the header says
// what the epoch is.
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BYTES_IN_BLOCK, BYTES_IN_LINE, LINES_IN_BLOCK } from "../../gc/heap-constants.js";
import { LINE_ALLOCATED, LINE_COLORS, LINE_EVACUATED, LINE_FREE, LINE_LARGE, LINE_LIVE, STATE_STROKE, renderHeapMapSvg } from "../../gc/heap-map-svg.js";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { renderSvg } from "../support/svg-to-png.js";
import { HEAP_BASE, allocOneLineObjects, keepOnly, makeHeap } from "./support/mock-vm.js";

const OUT = join(repoRoot(), ".cache", "heap-map");
const LONG_TITLE =
  "rootwalk run /home/someone/projects/a-runtime/build/objects/generational-benchmark-with-a-long-name.ll --stress=400 --verify: the heap after rw_main returned";

function rgbOf(color: string): [number, number, number] {
  return [1, 3, 5].map((i) => parseInt(color.slice(i, i + 2), 16)) as [number, number, number];
}

function near(pixel: readonly number[], color: string): boolean {
  const rgb = rgbOf(color);
  return pixel[3]! === 255 && rgb.every((c, i) => Math.abs(c - pixel[i]!) <= 3);
}

describe("heap map picture", () => {
  it("a fragmented heap with allocation since the last collection, rendered to .cache/heap-map/heap-map.png", () => {
    const t = makeHeap({ sizeBytes: 16 * BYTES_IN_BLOCK, defrag: "always" });
    const { collector: c, mutator: m, scanner } = t;
    const objects = allocOneLineObjects(t, 3 * 256);
    keepOnly(t, objects, [...Array.from({ length: 32 }, (_, i) => i * 8), ...Array.from({ length: 200 }, (_, i) => 512 + i)]);
    scanner.roots.push(m.alloc(0, 20_000));
    c.collect();
    const second = c.collect("test");
    expect(second.evacuatedObjects).toBeGreaterThan(0);
    // Allocation after the collection: 40 one-line objects (128 B each, header included).
    const fresh = allocOneLineObjects(t, 40);
    const map = c.heapMap();
    const count = (kind: number): number => map.blocks.reduce((n, b) => n + b.lines.filter((k) => k === kind).length, 0);
    expect(count(LINE_ALLOCATED)).toBe(40);
    for (const o of fresh) {
      const line = Math.floor((o - 8 - HEAP_BASE) / BYTES_IN_LINE);
      expect(map.blocks[Math.floor(line / LINES_IN_BLOCK)]!.lines[line % LINES_IN_BLOCK]).toBe(LINE_ALLOCATED);
    }
    expect(count(LINE_LIVE)).toBe(second.markedLines);
    for (const kind of [LINE_FREE, LINE_EVACUATED, LINE_LARGE]) expect(count(kind)).toBeGreaterThan(0);

    const svg = renderHeapMapSvg(map, { title: LONG_TITLE });
    const [, width, height] = /^<svg[^>]* width="(\d+)" height="(\d+)"/.exec(svg)!.map(Number);
    mkdirSync(OUT, { recursive: true });
    const png = join(OUT, "heap-map.png");
    const picture = renderSvg(svg, width!, height!, png);
    expect([...readFileSync(png).subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

    // The title and every text line fit: drawn on a canvas three times as wide, nothing is
    // painted right of the picture's own width.
    const wide = renderSvg(
      svg.replace(/^<svg([^>]*) width="\d+"/, `<svg$1 width="${3 * width!}"`).replace(/viewBox="0 0 \d+ /, `viewBox="0 0 ${3 * width!} `),
      3 * width!,
      height!,
    );
    let inkOutside = 0;
    for (let y = 0; y < height!; y++) for (let x = width!; x < 3 * width!; x++) if (wide.at(x, y)[3] !== 0) inkOutside++;
    expect(inkOutside).toBe(0);
    // ... and the title was wrapped, not left as one long line.
    const titleLines = /<g id="header">([\s\S]*?)<\/g>/.exec(svg)![1]!.match(/font-weight="bold">[^<]*</g)!;
    expect(titleLines.length).toBeGreaterThan(1);
    expect(titleLines.map((l) => l.slice(19, -1)).join(" ")).toBe(LONG_TITLE);

    // Every colour the grid uses is in the legend, and the legend's swatch shows it.
    const legend = /<g id="legend">([\s\S]*?)<\/g>/.exec(svg)![1]!;
    const grid = svg.slice(svg.indexOf('<g id="legend">') + legend.length);
    const fills = new Set([...grid.matchAll(/<rect [^>]*fill="(#[0-9a-f]{6})"\/>/g)].map((x) => x[1]!));
    const strokes = new Set([...grid.matchAll(/fill="none" stroke="(#[0-9a-f]{6})"/g)].map((x) => x[1]!));
    expect(fills.size).toBe(5); // free, live, evacuated, large, allocated all occur in this heap
    expect(fills).toEqual(new Set(LINE_COLORS));
    expect(strokes.size).toBeGreaterThanOrEqual(3);
    for (const color of fills) {
      const swatch = new RegExp(`<rect x="(\\d+)" y="(\\d+)" width="10" height="10" fill="${color}"/><text[^>]*>([^<]+)</text>`).exec(legend);
      expect(swatch, `legend swatch for fill ${color}`).not.toBeNull();
      expect(near(picture.at(Number(swatch![1]) + 5, Number(swatch![2]) + 5), color), `pixel of swatch ${color}`).toBe(true);
    }
    for (const color of strokes) {
      const swatch = new RegExp(
        `<rect x="(\\d+)" y="(\\d+)" width="8" height="8" fill="#ffffff" stroke="${color}" stroke-width="2"/><text[^>]*>([^<]+)</text>`,
      ).exec(legend);
      expect(swatch, `legend swatch for outline ${color}`).not.toBeNull();
      expect(near(picture.at(Number(swatch![1]), Number(swatch![2]) + 4), color), `pixel of outline swatch ${color}`).toBe(true);
    }
    expect(Object.values(STATE_STROKE).every((color) => legend.includes(`stroke="${color}"`))).toBe(true);

    // The allocated lines are drawn in the allocated colour: the first fresh object's cell.
    const line = Math.floor((fresh[0]! - 8 - HEAP_BASE) / BYTES_IN_LINE);
    const blockIndex = Math.floor(line / LINES_IN_BLOCK);
    const n = map.blocks.findIndex((b) => b.index === blockIndex);
    const cellRect = new RegExp(`<title>block ${blockIndex} at [^<]*</title>\\n<rect x="(\\d+)" y="(\\d+)"`).exec(svg)!;
    const within = line % LINES_IN_BLOCK;
    const px = Number(cellRect[1]) + (within % 16) * 3 + 1;
    const py = Number(cellRect[2]) + Math.floor(within / 16) * 3 + 1;
    expect(n).toBeGreaterThanOrEqual(0);
    expect(near(picture.at(px, py), LINE_COLORS[LINE_ALLOCATED])).toBe(true);

    // The epoch is explained, with its value.
    expect(svg).toContain(`>Epoch ${map.epoch}: the line-mark stamp of the last collection.`);
    expect(map.epoch).toBe(3);
  });
});
