import { InvalidArgumentError, hex, requireArgument } from "../src/errors.js";
import { BYTES_IN_BLOCK, BYTES_IN_LINE, LARGE_PAGES_IN_BLOCK, LINES_IN_BLOCK, LOG_LINES_IN_BLOCK, LOG_LINES_IN_LARGE_PAGE } from "./heap-constants.js";
import { BLOCK_STATE_NAMES, BLOCK_UNALLOCATED, type BlockStateName, type HeapSpace } from "./heap-space.js";
import type { Hole } from "./immix-allocator.js";
import { PAGE_FREE } from "./large-object-space.js";

/** What a line of the heap map shows. */
export const LINE_FREE = 0;
export const LINE_LIVE = 1;
export const LINE_EVACUATED = 2;
export const LINE_LARGE = 3;
/** Handed to a mutator since the last collection (not marked yet: no collection has seen it). */
export const LINE_ALLOCATED = 4;
export const LINE_KIND_NAMES = ["free", "live", "evacuated", "large", "allocated"] as const;

export interface HeapMapBlock {
  index: number;
  address: number;
  /** Immix state, or "large" for a block of the large-object space. */
  state: BlockStateName | "large";
  holes: number;
  /** LINES_IN_BLOCK entries, one LINE_* kind each. */
  lines: Uint8Array;
}

/** A picture of the heap now: the last collection's marks and what was allocated since. */
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
 * The Immix blocks used so far (up to the highest top reached) and the blocks of the
 * large-object space, line by line: live (marked in the last epoch), allocated (handed to a
 * mutator since the last collection, minus the parts of the mutators' current holes not used
 * yet: `unusedHoles`), evacuated (an object was copied out of it and nothing live is left),
 * large (part of a large object) or free.
 */
export function buildHeapMap(space: HeapSpace, unusedHoles: readonly Hole[] = []): HeapMap {
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
        lines[i] =
          space.lineMarks[l] === e ? LINE_LIVE : space.lineAllocated[l] === e ? LINE_ALLOCATED : space.lineEvacuated[l] === e ? LINE_EVACUATED : LINE_FREE;
      }
    } else {
      for (let i = 0; i < LINES_IN_BLOCK; i++) if (space.lineEvacuated[(b << LOG_LINES_IN_BLOCK) + i] === e) lines[i] = LINE_EVACUATED;
    }
    blocks.push({ index: b, address: space.blockAddress(b), state: BLOCK_STATE_NAMES[state] ?? "unallocated", holes: space.blockHoles[b]!, lines });
  }
  // Whole lines of the current holes nothing was allocated into yet are free.
  for (const hole of unusedHoles) {
    const first = Math.ceil((hole.cursor - space.base) / BYTES_IN_LINE);
    const end = Math.floor((hole.limit - space.base) / BYTES_IN_LINE);
    for (let l = first; l < end; l++) {
      const block = blocks[l >>> LOG_LINES_IN_BLOCK];
      const i = l & (LINES_IN_BLOCK - 1);
      if (block !== undefined && block.lines[i] === LINE_ALLOCATED) block.lines[i] = LINE_FREE;
    }
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
  /** Blocks per row of the grid (default 16; 1 to MAX_BLOCKS_PER_ROW). */
  blocksPerRow?: number;
  /** Pixels per line cell (default 3; 1 to MAX_CELL_PX); a block is 16 x 16 cells. */
  cellPx?: number;
  title?: string;
}

/** Bounds of the picture's options: beyond them the picture is no use (and its coordinates overflow). */
export const MAX_BLOCKS_PER_ROW = 4096;
export const MAX_CELL_PX = 64;

/** An option that must be a whole number in [1, max]: 0, a fraction or NaN drew a broken picture. */
function wholeOption(name: string, value: number, max: number): number {
  if (!(Number.isInteger(value) && value >= 1 && value <= max))
    throw new InvalidArgumentError(`options.${name}`, String(value), `a whole number from 1 to ${max}`);
  return value;
}

/** Fill of each LINE_* kind, and what the legend calls it. */
export const LINE_COLORS = ["#e6e6e6", "#2f6db5", "#f0a030", "#8e44ad", "#9cc7ef"] as const;
const LINE_LEGEND = [
  "free",
  "live (marked by the last collection)",
  "evacuated (objects copied out)",
  "large object",
  "allocated since the last collection",
] as const;
/** Block outline of each block state, and what the legend calls it. */
export const STATE_STROKE: Readonly<Record<BlockStateName | "large", string>> = {
  unallocated: "#bbbbbb",
  unmarked: "#c0392b",
  marked: "#1b3d66",
  reusable: "#4a90d9",
  large: "#5b2c6f",
};
const STATE_LEGEND: Readonly<Record<BlockStateName | "large", string>> = {
  unallocated: "free block",
  unmarked: "in use, handed out since the last collection",
  marked: "full (no free line)",
  reusable: "reusable (has free lines)",
  large: "large-object space",
};
const LINES_PER_ROW = 16;

/*
 * Text layout without a font at hand: widths are estimated from the character count with an
 * em fraction at least as wide as DejaVu Sans / Helvetica / Arial digits (the widest common
 * glyphs in these lines), so an estimate is never short and text never runs off the picture.
 */
const FONT_PX = 11;
const TITLE_PX = 13;
const EM_PER_CHAR = 0.64;
const BOLD_EM_PER_CHAR = 0.72;
const PAD_PX = 8;
const LINE_GAP_PX = 5;
const SWATCH_PX = 10;
const MIN_WIDTH_PX = 480;

function textWidthPx(text: string, px: number, bold = false): number {
  return Math.ceil(text.length * px * (bold ? BOLD_EM_PER_CHAR : EM_PER_CHAR));
}

/** Breaks `text` at spaces into lines of at most `widthPx` (a single longer word stays whole). */
function wrap(text: string, widthPx: number, px: number, bold = false): string[] {
  const out: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    const next = line === "" ? word : `${line} ${word}`;
    if (line !== "" && textWidthPx(next, px, bold) > widthPx) {
      out.push(line);
      line = word;
    } else line = next;
  }
  if (line !== "") out.push(line);
  return out;
}

/**
 * An SVG a person can open in a browser: a header (the title, the heap's numbers, what the
 * epoch is, a legend of every fill and outline colour used), then a grid of blocks, each drawn
 * as its 256 lines (16 x 16 cells, address order left to right, top to bottom), filled by line
 * kind, outlined by block state, with a tooltip per block. Runs of same-colored cells in a row
 * are one rectangle, so big heaps stay small files. Every text line is wrapped to the picture's
 * width (estimated conservatively), so nothing is cut off at the right edge.
 */
export function renderHeapMapSvg(map: HeapMap, options: HeapMapSvgOptions = {}): string {
  requireArgument(typeof map === "object" && map !== null && Array.isArray(map.blocks), "map", map, "a HeapMap (collector.heapMap())");
  const perRow = wholeOption("blocksPerRow", options.blocksPerRow ?? 16, MAX_BLOCKS_PER_ROW);
  const cell = wholeOption("cellPx", options.cellPx ?? 3, MAX_CELL_PX);
  const blockPx = LINES_PER_ROW * cell;
  const gap = Math.max(2, cell);
  const rows = Math.max(1, Math.ceil(map.blocks.length / perRow));
  const gridWidth = perRow * (blockPx + gap) + gap;
  const width = Math.max(gridWidth, MIN_WIDTH_PX);
  const title = options.title ?? "Immix heap map";

  // The header's text lines, then the legend's rows, top to bottom, then the grid.
  const cursor: TextCursor = { y: PAD_PX };
  const header = headerElements(map, title, width - 2 * PAD_PX, cursor);
  const legend = legendElements(width, cursor);
  const gridTop = cursor.y + PAD_PX;
  const height = gridTop + rows * (blockPx + gap) + gap;

  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="${FONT_PX}">`,
  );
  out.push(`<title>${escapeXml(title)}</title>`);
  out.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  out.push(`<g id="header">`, ...header, `</g>`);
  out.push(`<g id="legend">`, ...legend, `</g>`);
  map.blocks.forEach((block, n) => {
    const bx = gap + (n % perRow) * (blockPx + gap);
    const by = gridTop + Math.floor(n / perRow) * (blockPx + gap);
    pushBlockElements(out, block, bx, by, cell);
  });
  out.push("</svg>");
  return out.join("\n");
}

/** Where the next header or legend line goes: its top, in pixels from the picture's top. */
interface TextCursor {
  y: number;
}

/** The header's text: the title, the heap's numbers and what the epoch is, each wrapped to `textWidth`. */
function headerElements(map: HeapMap, title: string, textWidth: number, cursor: TextCursor): string[] {
  const kib = (n: number): string => `${(n / 1024).toFixed(0)} KiB`;
  const header: string[] = [];
  const textLine = (text: string, px: number, bold: boolean): void => {
    cursor.y += px;
    header.push(`<text x="${PAD_PX}" y="${cursor.y}"${bold ? ` font-size="${px}" font-weight="bold"` : ""}>${escapeXml(text)}</text>`);
    cursor.y += LINE_GAP_PX - 1;
  };
  for (const line of wrap(title, textWidth, TITLE_PX, true)) textLine(line, TITLE_PX, true);
  const numbers =
    `base ${hex(map.base)}, used ${kib(map.usedBytes)} of ${kib(map.limitBytes)}; ${map.blocks.length} blocks drawn` +
    `${map.untouchedBlocks ? ` (${map.untouchedBlocks} untouched blocks not drawn)` : ""}; a block is ${BYTES_IN_BLOCK / 1024} KiB: ${LINES_IN_BLOCK} lines of ${BYTES_IN_LINE} B, one cell each.`;
  for (const line of wrap(numbers, textWidth, FONT_PX)) textLine(line, FONT_PX, false);
  const epoch =
    `Epoch ${map.epoch}: the line-mark stamp of the last collection. Every collection advances it (wrapping after 255) and stamps ` +
    `the lines it finds live, so older stamps go stale without a clearing pass; epoch 1 with nothing live means no collection yet.`;
  for (const line of wrap(epoch, textWidth, FONT_PX)) textLine(line, FONT_PX, false);
  return header;
}

/** The legend: a row of every line fill, then a row of every block outline, each wrapped to `width`. */
function legendElements(width: number, cursor: TextCursor): string[] {
  const legend: string[] = [];
  const legendRow = (heading: string, items: { swatch: (x: number, top: number) => string; label: string }[]): void => {
    const indent = PAD_PX + textWidthPx(heading, FONT_PX) + 6;
    legend.push(`<text x="${PAD_PX}" y="${cursor.y + FONT_PX}">${escapeXml(heading)}</text>`);
    let x = indent;
    for (const item of items) {
      const itemWidth = SWATCH_PX + 4 + textWidthPx(item.label, FONT_PX) + 14;
      if (x + itemWidth > width - PAD_PX && x > indent) {
        cursor.y += FONT_PX + LINE_GAP_PX;
        x = indent;
      }
      legend.push(`${item.swatch(x, cursor.y + 2)}<text x="${x + SWATCH_PX + 4}" y="${cursor.y + FONT_PX}">${escapeXml(item.label)}</text>`);
      x += itemWidth;
    }
    cursor.y += FONT_PX + LINE_GAP_PX;
  };
  cursor.y += 2;
  legendRow(
    "lines:",
    LINE_LEGEND.map((label, k) => ({
      label,
      swatch: (x, top) => `<rect x="${x}" y="${top}" width="${SWATCH_PX}" height="${SWATCH_PX}" fill="${LINE_COLORS[k]}"/>`,
    })),
  );
  legendRow(
    "block outline:",
    (Object.keys(STATE_STROKE) as (BlockStateName | "large")[]).map((state) => ({
      label: STATE_LEGEND[state],
      swatch: (x, top) =>
        `<rect x="${x + 1}" y="${top + 1}" width="${SWATCH_PX - 2}" height="${SWATCH_PX - 2}" fill="#ffffff" stroke="${STATE_STROKE[state]}" stroke-width="2"/>`,
    })),
  );
  return legend;
}

/**
 * One block at (bx, by): a group with its tooltip (state, holes, line counts), its lines as
 * cells (a run of one kind in a row is one rectangle) and its outline in its state's colour.
 */
function pushBlockElements(out: string[], block: HeapMapBlock, bx: number, by: number, cell: number): void {
  const blockPx = LINES_PER_ROW * cell;
  const counts = [0, 0, 0, 0, 0];
  for (const k of block.lines) counts[k] = counts[k]! + 1;
  out.push(
    `<g><title>block ${block.index} at ${hex(block.address)}: ${block.state}, ${block.holes} holes, ` +
      `lines live ${counts[LINE_LIVE]} allocated ${counts[LINE_ALLOCATED]} free ${counts[LINE_FREE]} evacuated ${counts[LINE_EVACUATED]} large ${counts[LINE_LARGE]}</title>`,
  );
  for (let row = 0; row < LINES_IN_BLOCK / LINES_PER_ROW; row++) {
    let runStart = 0;
    for (let i = 1; i <= LINES_PER_ROW; i++) {
      const at = row * LINES_PER_ROW;
      if (i === LINES_PER_ROW || block.lines[at + i] !== block.lines[at + runStart]) {
        const kind = block.lines[at + runStart]!;
        out.push(
          `<rect x="${bx + runStart * cell}" y="${by + row * cell}" width="${(i - runStart) * cell}" height="${cell}" fill="${LINE_COLORS[kind] ?? "#000"}"/>`,
        );
        runStart = i;
      }
    }
  }
  out.push(
    `<rect x="${bx - 0.5}" y="${by - 0.5}" width="${blockPx + 1}" height="${blockPx + 1}" fill="none" stroke="${STATE_STROKE[block.state] ?? "#000"}"/></g>`,
  );
}

function escapeXml(s: string): string {
  return s.replace(/[<>&"]/g, (c) => (c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === "&" ? "&amp;" : "&quot;"));
}
