import { InvalidArgumentError, hex } from "../errors.js";

/*
 * The scan memory: the one WebAssembly.Memory the scan kernel works in, and the regions carved
 * out of it (simulated stacks, native thread stacks, the safepoint table and recipes, output).
 *
 * Invariants:
 * - One per process, made at first use with its final size (initial = maximum = SCAN_MEMORY_BYTES)
 *   and never grown: a grow would make every mprotect'ed guard page inside it read-write again
 *   (../shared notes: wasm-scan-kernel.md). V8 reserves the pages; only touched pages are resident.
 * - It is shared, so `memory.buffer` never detaches and views made once stay valid; koffi takes a
 *   typed-array view on it as a `void *` (never the bare buffer: that passes NULL).
 * - Regions are whole pages (REGION_ALIGN_BYTES; a caller may ask for a coarser alignment), never
 *   overlap, and start zero-filled. Offset 0
 *   to REGION_ALIGN_BYTES is never handed out, so offset 0 can mean "none" to the kernel.
 * - Everything in it is addressed by a byte offset below 2^32 (memory32): the sum of everything
 *   placed in it is at most 4 GiB; `allocate` refuses what does not fit with a one-line message.
 */

/** 4 GiB: the most a 32-bit WebAssembly memory can hold (65536 pages of 64 KiB). */
export const SCAN_MEMORY_BYTES = 2 ** 32;
const WASM_PAGE_BYTES = 65536;
/** Regions start and end on OS pages so guard pages can be placed between them. */
export const REGION_ALIGN_BYTES = 4096;

/** A region of the scan memory: `sizeBytes` at `offset`, until `release()`. */
export interface ScanRegion {
  readonly offset: number;
  readonly sizeBytes: number;
  release(): void;
}

/** The process's scan memory and its free ranges (first fit, coalesced on release). */
export class ScanMemory {
  readonly memory: WebAssembly.Memory;
  readonly buffer: SharedArrayBuffer;
  readonly bytes: Uint8Array;
  readonly words: Uint32Array;
  /** Free ranges as [offset, sizeBytes] pairs sorted by offset, never adjacent. */
  private free: number[] = [REGION_ALIGN_BYTES, SCAN_MEMORY_BYTES - REGION_ALIGN_BYTES];
  private usedBytes = 0;
  /** Every byte at or above this offset has never been handed out: still the kernel's zeros. */
  private untouchedFrom = REGION_ALIGN_BYTES;

  constructor() {
    const pages = SCAN_MEMORY_BYTES / WASM_PAGE_BYTES;
    this.memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
    this.buffer = this.memory.buffer as SharedArrayBuffer;
    this.bytes = new Uint8Array(this.buffer);
    this.words = new Uint32Array(this.buffer);
  }

  /** Bytes handed out and not released. */
  get allocatedBytes(): number {
    return this.usedBytes;
  }

  /** The largest region `allocate` could return now. */
  get largestFreeBytes(): number {
    let largest = 0;
    for (let i = 1; i < this.free.length; i += 2) largest = Math.max(largest, this.free[i]!);
    return largest;
  }

  /**
   * A zero-filled region of at least `sizeBytes` (rounded up to whole pages) at an offset that is
   * a multiple of `alignBytes` (a power of two, at least REGION_ALIGN_BYTES; the bytes skipped to
   * reach it stay free); `what` names the region in the message when it does not fit.
   */
  allocate(sizeBytes: number, what: string, alignBytes: number = REGION_ALIGN_BYTES): ScanRegion {
    if (!Number.isSafeInteger(sizeBytes) || sizeBytes <= 0) throw new InvalidArgumentError(what, String(sizeBytes), "a positive whole number of bytes");
    const size = Math.ceil(sizeBytes / REGION_ALIGN_BYTES) * REGION_ALIGN_BYTES;
    for (let i = 0; i < this.free.length; i += 2) {
      const free = this.free[i]!;
      const start = Math.ceil(free / alignBytes) * alignBytes;
      const lead = start - free;
      const tail = this.free[i + 1]! - lead - size;
      if (tail < 0) continue;
      this.free.splice(i, 2, ...(lead > 0 ? [free, lead] : []), ...(tail > 0 ? [start + size, tail] : []));
      this.usedBytes += size;
      // Only reused bytes are cleared: filling fresh pages would make them resident for nothing.
      if (start < this.untouchedFrom) this.bytes.fill(0, start, Math.min(start + size, this.untouchedFrom));
      this.untouchedFrom = Math.max(this.untouchedFrom, start + size);
      return this.region(start, size);
    }
    throw new InvalidArgumentError(
      what,
      `${size} bytes with ${this.usedBytes} of the scan memory's ${SCAN_MEMORY_BYTES} in use (largest free range ${this.largestFreeBytes})`,
      "stacks, tables and simulated memory that fit together in the 4 GiB scan memory (a 32-bit WebAssembly memory)",
    );
  }

  private region(offset: number, sizeBytes: number): ScanRegion {
    let live = true;
    return {
      offset,
      sizeBytes,
      release: () => {
        if (!live) return;
        live = false;
        this.release(offset, sizeBytes);
      },
    };
  }

  private release(offset: number, sizeBytes: number): void {
    this.usedBytes -= sizeBytes;
    let i = 0;
    while (i < this.free.length && this.free[i]! < offset) i += 2;
    if (i < this.free.length && offset + sizeBytes > this.free[i]!) throw new Error(`scan memory: region ${hex(offset)} overlaps a free range`);
    this.free.splice(i, 0, offset, sizeBytes);
    // Coalesce with the next range, then with the previous one.
    if (i + 2 < this.free.length && this.free[i]! + this.free[i + 1]! === this.free[i + 2]!) {
      this.free[i + 1]! += this.free[i + 3]!;
      this.free.splice(i + 2, 2);
    }
    if (i >= 2 && this.free[i - 2]! + this.free[i - 1]! === this.free[i]!) {
      this.free[i - 1]! += this.free[i + 1]!;
      this.free.splice(i, 2);
    }
  }
}

let theScanMemory: ScanMemory | undefined;

/** The process's scan memory, made at first use. */
export function scanMemory(): ScanMemory {
  theScanMemory ??= new ScanMemory();
  return theScanMemory;
}
