import { hex } from "../src/errors.js";
import {
  BYTES_IN_BLOCK,
  BYTES_IN_LINE,
  LARGE_PAGES_IN_BLOCK,
  LINES_IN_BLOCK,
  LOG_LINES_IN_BLOCK,
  LOG_LINES_IN_LARGE_PAGE,
} from "./heap-constants.js";
import { BLOCK_STATE_NAMES, BLOCK_UNALLOCATED, type BlockStateName, type HeapSpace } from "./heap-space.js";
import { PAGE_FREE } from "./large-object-space.js";

/** What a line of the heap map shows. */
export const LINE_FREE = 0;
export const LINE_LIVE = 1;
export const LINE_EVACUATED = 2;
export const LINE_LARGE = 3;
export const LINE_KIND_NAMES = ["free", "live", "evacuated", "large"] as const;

export interface HeapMapBlock {
  index: number;
  address: number;
  /** Immix state, or "large" for a block of the large-object space. */
  state: BlockStateName | "large";
  holes: number;
  /** LINES_IN_BLOCK entries, one LINE_* kind each. */
  lines: Uint8Array;
}

/** A picture of the heap as the last collection left it (take it right after collect()). */
export interface HeapMap {
  base: number;
  epoch: number;
  limitBytes: number;
  usedBytes: number;
  blocks: HeapMapBlock[];
  /** Untouched blocks between the Immix blocks and the large-object space (not drawn). */
  untouchedBlocks: number;
}

/**
 * The Immix blocks used so far (up to the highest top reached) and the blocks of the large-object space, line by line: live
 * (marked in the last epoch), evacuated (an object was copied out of it and nothing live is
 * left), large (part of a large object) or free.
 */
export function buildHeapMap(space: HeapSpace): HeapMap {
  const blocks: HeapMapBlock[] = [];
  const e = space.epoch;
  const firstLargeBlock = Math.floor(space.los.bottomPage / LARGE_PAGES_IN_BLOCK);
  const immixBlocks = Math.min(firstLargeBlock, Math.max(space.immixTopBlock, space.immixHighWaterBlock));
  for (let b = 0; b < immixBlocks; b++) {
    const lines = new Uint8Array(LINES_IN_BLOCK);
    const state = b < space.immixTopBlock ? space.blockState[b]! : BLOCK_UNALLOCATED;
    if (state !== BLOCK_UNALLOCATED) {
      for (let i = 0; i < LINES_IN_BLOCK; i++) {
        const l = (b << LOG_LINES_IN_BLOCK) + i;
        lines[i] = space.lineMarks[l] === e ? LINE_LIVE : space.lineEvacuated[l] === e ? LINE_EVACUATED : LINE_FREE;
      }
    } else {
      for (let i = 0; i < LINES_IN_BLOCK; i++) if (space.lineEvacuated[(b << LOG_LINES_IN_BLOCK) + i] === e) lines[i] = LINE_EVACUATED;
    }
    blocks.push({ index: b, address: space.blockAddress(b), state: BLOCK_STATE_NAMES[state] ?? "unallocated", holes: space.blockHoles[b]!, lines });
  }
  for (let b = Math.max(firstLargeBlock, immixBlocks); b < space.totalBlocks; b++) {
    const lines = new Uint8Array(LINES_IN_BLOCK);
    for (let i = 0; i < LINES_IN_BLOCK; i++) {
      const page = ((b << LOG_LINES_IN_BLOCK) + i) >>> LOG_LINES_IN_LARGE_PAGE;
      if (page >= space.los.bottomPage && space.los.pageKind[page] !== PAGE_FREE) lines[i] = LINE_LARGE;
    }
    blocks.push({ index: b, address: space.blockAddress(b), state: "large", holes: 0, lines });
  }
  return {
    base: space.base,
    epoch: e,
    limitBytes: space.limitBytes,
    usedBytes: space.usedBytes(),
    blocks,
    untouchedBlocks: Math.max(0, firstLargeBlock - immixBlocks),
  };
}

export interface HeapMapSvgOptions {
  /** Blocks per row of the grid (default 16). */
  blocksPerRow?: number;
  /** Pixels per line cell (default 3); a block is 16 x 16 cells. */
  cellPx?: number;
  title?: string;
}

const COLORS = ["#e6e6e6", "#2f6db5", "#f0a030", "#8e44ad"] as const;
const STATE_STROKE: Record<string, string> = { unallocated: "#bbbbbb", unmarked: "#c0392b", marked: "#1b3d66", reusable: "#4a90d9", large: "#5b2c6f" };
const LINES_PER_ROW = 16;

/**
 * An SVG a person can open in a browser: a grid of blocks, each drawn as its 256 lines
 * (16 x 16 cells, address order left to right, top to bottom), colored free / live / evacuated /
 * large, outlined by block state, with a tooltip per block and a legend. Runs of same-colored
 * cells in a row are one rectangle, so big heaps stay small files.
 */
export function renderHeapMapSvg(map: HeapMap, options: HeapMapSvgOptions = {}): string {
  const perRow = options.blocksPerRow ?? 16;
  const cell = options.cellPx ?? 3;
  const blockPx = LINES_PER_ROW * cell;
  const gap = Math.max(2, cell);
  const header = 44;
  const rows = Math.max(1, Math.ceil(map.blocks.length / perRow));
  const width = perRow * (blockPx + gap) + gap;
  const height = header + rows * (blockPx + gap) + gap;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`);
  const title = options.title ?? "Immix heap map";
  out.push(`<title>${escapeXml(title)}</title>`);
  out.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  const kib = (n: number): string => `${(n / 1024).toFixed(0)} KiB`;
  out.push(
    `<text x="${gap}" y="14">${escapeXml(title)}: base ${hex(map.base)}, epoch ${map.epoch}, used ${kib(map.usedBytes)} of ${kib(map.limitBytes)}, ` +
      `${map.blocks.length} blocks drawn${map.untouchedBlocks ? `, ${map.untouchedBlocks} untouched not drawn` : ""}, ${BYTES_IN_BLOCK / 1024} KiB blocks of ${BYTES_IN_LINE} B lines</text>`,
  );
  LINE_KIND_NAMES.forEach((name, k) => {
    const x = gap + k * 90;
    out.push(`<rect x="${x}" y="22" width="10" height="10" fill="${COLORS[k]}"/><text x="${x + 14}" y="31">${name}</text>`);
  });
  map.blocks.forEach((block, n) => {
    const bx = gap + (n % perRow) * (blockPx + gap);
    const by = header + Math.floor(n / perRow) * (blockPx + gap);
    const counts = [0, 0, 0, 0];
    for (const k of block.lines) counts[k] = counts[k]! + 1;
    out.push(
      `<g><title>block ${block.index} at ${hex(block.address)}: ${block.state}, ${block.holes} holes, ` +
        `lines live ${counts[LINE_LIVE]} free ${counts[LINE_FREE]} evacuated ${counts[LINE_EVACUATED]} large ${counts[LINE_LARGE]}</title>`,
    );
    for (let row = 0; row < LINES_IN_BLOCK / LINES_PER_ROW; row++) {
      let runStart = 0;
      for (let i = 1; i <= LINES_PER_ROW; i++) {
        const at = row * LINES_PER_ROW;
        if (i === LINES_PER_ROW || block.lines[at + i] !== block.lines[at + runStart]) {
          const kind = block.lines[at + runStart]!;
          out.push(`<rect x="${bx + runStart * cell}" y="${by + row * cell}" width="${(i - runStart) * cell}" height="${cell}" fill="${COLORS[kind] ?? "#000"}"/>`);
          runStart = i;
        }
      }
    }
    out.push(`<rect x="${bx - 0.5}" y="${by - 0.5}" width="${blockPx + 1}" height="${blockPx + 1}" fill="none" stroke="${STATE_STROKE[block.state] ?? "#000"}"/></g>`);
  });
  out.push("</svg>");
  return out.join("\n");
}

function escapeXml(s: string): string {
  return s.replace(/[<>&"]/g, (c) => (c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === "&" ? "&amp;" : "&quot;"));
}
