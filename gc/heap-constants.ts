/*
 * The Immix geometry (Blackburn & McKinley, PLDI 2008; MMTk's block.rs / line.rs). Every size is
 * derived from a log constant, so that changing LOG_BYTES_IN_LINE or LOG_BYTES_IN_BLOCK changes
 * every table, shift and mask consistently:
 *
 *   word   8 B      the unit of alignment, of pointer slots and of the mark bitmap
 *   line   128 B    the unit of marking and of allocation into holes
 *   block  32 KiB   256 lines; the unit the heap is carved into and that defragmentation moves out of
 *   page   4 KiB    the unit of the large-object space (objects above 8 KiB, never moved)
 *
 * Addresses are plain numbers (< 2^53). Inside the collector every address is first made an
 * offset from the heap base, and offsets stay below 2^32 (MAX_HEAP_BYTES), so `>>>` turns an
 * offset into a line, block, page or bitmap index without a division.
 */

export const LOG_BYTES_IN_WORD = 3;
export const BYTES_IN_WORD = 1 << LOG_BYTES_IN_WORD;

export const LOG_BYTES_IN_LINE = 7;
export const BYTES_IN_LINE = 1 << LOG_BYTES_IN_LINE;

export const LOG_BYTES_IN_BLOCK = 15;
export const BYTES_IN_BLOCK = 1 << LOG_BYTES_IN_BLOCK;

export const LOG_LINES_IN_BLOCK = LOG_BYTES_IN_BLOCK - LOG_BYTES_IN_LINE;
export const LINES_IN_BLOCK = 1 << LOG_LINES_IN_BLOCK;
/** `line & LINE_IN_BLOCK_MASK` is a line's index inside its block (0 = the block's first line). */
export const LINE_IN_BLOCK_MASK = LINES_IN_BLOCK - 1;

/**
 * Most holes a block can have (free and marked lines alternating). The defragmentation
 * histograms are indexed by hole count, 0..MAX_HOLES_IN_BLOCK.
 */
export const MAX_HOLES_IN_BLOCK = LINES_IN_BLOCK >> 1;

/** Objects whose storage (header included) exceeds this go to the large-object space: 8 KiB. */
export const LOG_MAX_IMMIX_OBJECT_BYTES = LOG_BYTES_IN_BLOCK - 2;
export const MAX_IMMIX_OBJECT_BYTES = 1 << LOG_MAX_IMMIX_OBJECT_BYTES;

export const LOG_BYTES_IN_LARGE_PAGE = 12;
export const BYTES_IN_LARGE_PAGE = 1 << LOG_BYTES_IN_LARGE_PAGE;
export const LOG_LARGE_PAGES_IN_BLOCK = LOG_BYTES_IN_BLOCK - LOG_BYTES_IN_LARGE_PAGE;
export const LARGE_PAGES_IN_BLOCK = 1 << LOG_LARGE_PAGES_IN_BLOCK;
export const LOG_LINES_IN_LARGE_PAGE = LOG_BYTES_IN_LARGE_PAGE - LOG_BYTES_IN_LINE;

/** One mark bit per word-sized granule; one 32-bit bitmap word covers 2^(3+5) = 256 bytes. */
export const LOG_BYTES_IN_MARK_WORD = LOG_BYTES_IN_WORD + 5;

/** Heap offsets must stay below 2^32 (see the top of this file); whole blocks only. */
export const MAX_HEAP_BYTES = 2 ** 32 - BYTES_IN_BLOCK;

/** Line marks hold the epoch of the collection that marked them, 1..MAX_LINE_EPOCH; 0 = never. */
export const MAX_LINE_EPOCH = 255;

/** The defragmentation headroom of the paper: 2.5 % of the heap, kept free of mutator objects. */
export const DEFAULT_HEADROOM_FRACTION = 0.025;
