// Observability: per-cycle statistics and the SVG heap map of a fragmented, partly evacuated heap.
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { formatCycle } from "../../gc/gc-stats.js";
import { InvalidArgumentError } from "../../src/errors.js";
import { BYTES_IN_BLOCK, LINES_IN_BLOCK } from "../../gc/heap-constants.js";
import { LINE_EVACUATED, LINE_FREE, LINE_LARGE, LINE_LIVE, renderHeapMapSvg } from "../../gc/heap-map-svg.js";
import { allocOneLineObjects, keepOnly, makeHeap } from "./support/mock-vm.js";

describe("statistics and the heap map", () => {
  it("counts the cycle and draws lines as live, free, evacuated and large", () => {
    const t = makeHeap({ sizeBytes: 16 * BYTES_IN_BLOCK, defrag: "always" });
    const { collector: c, mutator: m, scanner } = t;
    const objects = allocOneLineObjects(t, 3 * 256);
    keepOnly(t, objects, [...Array.from({ length: 32 }, (_, i) => i * 8), ...Array.from({ length: 200 }, (_, i) => 512 + i)]);
    const large = m.alloc(0, 20_000);
    scanner.roots.push(large);
    const first = c.collect();
    expect(first).toMatchObject({ cycle: 1, reason: "requested", markedObjects: 233, evacuatedObjects: 0, blocksFreed: 1, largeObjects: 1 });
    const second = c.collect("test");
    expect(second.cycle).toBe(2);
    expect(second.evacuatedObjects).toBeGreaterThan(0);
    expect(second.markedBytes).toBe(232 * 128 + 20_008);
    expect(second.pauseMs).toBeGreaterThanOrEqual(0);
    expect(c.stats.collections).toBe(2);
    expect(c.stats.totalEvacuatedObjects).toBe(second.evacuatedObjects);
    expect(formatCycle(second)).toMatch(/^gc #2 \(test\) [\d.]+ ms: marked 233 objects .* evacuated \d+ /);
    expect(c.stats.summary()).toMatch(/^2 collections, pause total/);

    const map = c.heapMap();
    const count = (kind: number): number => map.blocks.reduce((n, b) => n + b.lines.filter((k) => k === kind).length, 0);
    expect(count(LINE_LIVE)).toBe(second.markedLines);
    expect(count(LINE_EVACUATED)).toBeGreaterThanOrEqual(second.evacuatedObjects); // one line each, except where a live line remains
    expect(count(LINE_LARGE)).toBe(5 * (LINES_IN_BLOCK / 8)); // five 4 KiB pages of 32 lines
    expect(count(LINE_FREE)).toBeGreaterThan(0);
    expect(map.blocks.at(-1)!.state).toBe("large");

    const svg = renderHeapMapSvg(map, { title: "fragmented heap" });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.endsWith("</svg>")).toBe(true);
    expect(svg).toContain("<title>block 0 at 0x7f1234000000:");
    for (const name of [
      "free",
      "live (marked by the last collection)",
      "evacuated (objects copied out)",
      "large object",
      "allocated since the last collection",
    ]) {
      expect(svg).toContain(`>${name}</text>`);
    }
    expect(svg.match(/<g>/g)!.length).toBe(map.blocks.length);
    // For a person to look at: the file is written to the temporary directory.
    const dir = join(tmpdir(), "rootwalk-gc");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "heap-map.svg"), svg);
  });

  it("refuses a map that is none and options that draw no picture, by name", () => {
    const t = makeHeap({ sizeBytes: 4 * BYTES_IN_BLOCK });
    const map = t.collector.heapMap();
    expect(renderHeapMapSvg(map, { blocksPerRow: 1, cellPx: 1 })).toMatch(/^<svg/);
    expect(() => renderHeapMapSvg(undefined as unknown as typeof map)).toThrow("map: found undefined, expected a HeapMap");
    for (const blocksPerRow of [0, -3, 1.5, Number.NaN, 4097]) {
      expect(() => renderHeapMapSvg(map, { blocksPerRow }), String(blocksPerRow)).toThrow(InvalidArgumentError);
    }
    for (const cellPx of [0, -1, 2.5, Number.NaN, 65]) {
      expect(() => renderHeapMapSvg(map, { cellPx }), String(cellPx)).toThrow(`options.cellPx: found ${cellPx}, expected a whole number from 1 to 64`);
    }
  });
});
