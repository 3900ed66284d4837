import { viewU64 } from "../bytes/word-codec.js";
import type { ByteSource } from "../bytes/byte-source.js";
import { MemoryAccessError, hex } from "../errors.js";
import type { Memory, MemoryRange } from "../memory/memory.js";

/** One PT_LOAD segment of a core: [vaddr, vaddr + fileSizeBytes) is at fileOffset in the file. */
export interface CoreSegment {
  vaddr: number;
  fileOffset: number;
  /** Bytes present in the core (p_filesz); the rest of p_memsz was not dumped. */
  fileSizeBytes: number;
}

/** Bytes read from the file at a time, and the unit of the cache (aligned in the segment). */
const CHUNK_BYTES = 64 * 1024;

/**
 * A core's memory (its dumped PT_LOAD segments), read from the file by position on first use
 * and kept in CHUNK_BYTES pieces: what a walk holds is the pages it read (a thread's stack, a
 * few ELF headers), whatever the size of the core. Read-only: a post-mortem walk writes nothing.
 */
export class CoreMemory implements Memory {
  readonly ranges: readonly MemoryRange[];
  private readonly segments: readonly CoreSegment[];
  private readonly chunks = new Map<number, DataView>();
  private last = 0;

  constructor(
    private readonly source: ByteSource,
    segments: readonly CoreSegment[],
  ) {
    this.segments = segments.filter((s) => s.fileSizeBytes > 0).sort((a, b) => a.vaddr - b.vaddr);
    this.ranges = this.segments.map((s) => ({ base: s.vaddr, sizeBytes: s.fileSizeBytes }));
  }

  /** Index of the segment holding all of [address, address + n), or -1. */
  private segmentOf(address: number, n: number): number {
    const last = this.segments[this.last];
    if (last !== undefined && address >= last.vaddr && address + n <= last.vaddr + last.fileSizeBytes) return this.last;
    let lo = 0;
    let hi = this.segments.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.segments[mid]!.vaddr <= address) lo = mid + 1;
      else hi = mid;
    }
    const s = this.segments[lo - 1];
    if (s === undefined || address + n > s.vaddr + s.fileSizeBytes) return -1;
    return (this.last = lo - 1);
  }

  /** The cached chunk of file bytes starting at `fileOffset` (a multiple of CHUNK_BYTES in its segment). */
  private chunk(segment: CoreSegment, offsetInSegment: number): DataView {
    const start = segment.fileOffset + offsetInSegment;
    let view = this.chunks.get(start);
    if (view === undefined) {
      const bytes = this.source.readAt(start, Math.min(CHUNK_BYTES, segment.fileSizeBytes - offsetInSegment), `core segment at ${hex(segment.vaddr)}`);
      view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      this.chunks.set(start, view);
    }
    return view;
  }

  contains(address: number, sizeBytes: number): boolean {
    return this.segmentOf(address, sizeBytes) >= 0;
  }

  /** The dumped bytes [address, address + n), or undefined when the core does not hold them all. */
  readBytes(address: number, n: number): Uint8Array | undefined {
    const i = this.segmentOf(address, n);
    if (i < 0) return undefined;
    const s = this.segments[i]!;
    const out = new Uint8Array(n);
    for (let done = 0; done < n;) {
      const offset = address + done - s.vaddr;
      const inChunk = offset % CHUNK_BYTES;
      const view = this.chunk(s, offset - inChunk);
      const take = Math.min(n - done, view.byteLength - inChunk);
      out.set(new Uint8Array(view.buffer, view.byteOffset + inChunk, take), done);
      done += take;
    }
    return out;
  }

  readWord(address: number): number {
    const i = this.segmentOf(address, 8);
    if (i < 0) throw new MemoryAccessError(address, 8, "read", "not in the core's dumped memory");
    const s = this.segments[i]!;
    const offset = address - s.vaddr;
    const inChunk = offset % CHUNK_BYTES;
    if (inChunk + 8 > CHUNK_BYTES) {
      const bytes = this.readBytes(address, 8)!;
      const view = new DataView(bytes.buffer);
      return viewU64(view, 0);
    }
    const view = this.chunk(s, offset - inChunk);
    return viewU64(view, inChunk);
  }

  readWordBigInt(address: number): bigint {
    const bytes = this.readBytes(address, 8);
    if (bytes === undefined) throw new MemoryAccessError(address, 8, "read", "not in the core's dumped memory");
    return new DataView(bytes.buffer).getBigUint64(0, true);
  }

  writeWord(address: number): void {
    throw new MemoryAccessError(address, 8, "write", "a core file's memory is read-only");
  }

  writeWordBigInt(address: number): void {
    throw new MemoryAccessError(address, 8, "write", "a core file's memory is read-only");
  }
}
