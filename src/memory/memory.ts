import { readU64, readU64BigInt, writeU64, writeU64BigInt } from "../bytes/word-codec.js";
import { InvalidArgumentError, MemoryAccessError, describeValue, hex } from "../errors.js";
import { OwnedRegion } from "./owned-region.js";
import { scanMemory } from "./scan-memory.js";

/*
 * The one way rootwalk reads and writes a stack: 64-bit little-endian words at byte addresses.
 *
 * Addresses are plain numbers (x86-64 user addresses are below 2^47). Word VALUES are returned
 * as numbers too: exact below 2^53, which covers every address and every small integer; a value
 * at or above 2^53 (never an address: poison, a negative integer) comes back as the nearest
 * double, which is enough to reject it as an address or return address. `readWordBigInt` is exact.
 *
 * Every access is checked against the valid ranges; an invalid one throws MemoryAccessError
 * naming the address and size, never a crash. Implementations: SimulatedMemory (one buffer at a
 * chosen base), RangedMemory (several, e.g. stacklets or snapshots), and the native one over
 * koffi views (with the native runtime).
 */
export interface Memory {
  readWord(address: number): number;
  readWordBigInt(address: number): bigint;
  writeWord(address: number, value: number): void;
  writeWordBigInt(address: number, value: bigint): void;
  /** True when `[address, address + sizeBytes)` lies inside one valid range. */
  contains(address: number, sizeBytes: number): boolean;
  /** The valid ranges, sorted by address, not overlapping. */
  readonly ranges: readonly MemoryRange[];
}

export interface MemoryRange {
  readonly base: number;
  readonly sizeBytes: number;
}

export const WORD_BYTES = 8;
/** Fill pattern of fresh simulated memory: reads of never-written words are conspicuous. */
export const POISON_WORD_LO = 0xdeadbeef;
export const POISON_WORD_HI = 0xdeadbeef;

/** Throws unless `base` and `sizeBytes` describe a WordMemory: 8-aligned, a positive multiple of 8 bytes. */
function checkWordRange(base: number, sizeBytes: number): void {
  // Not a number at all (a JavaScript caller's string or nothing): named as such, since the
  // message below prints both as hex (undefined made the error's own constructor throw).
  if (typeof base !== "number" || typeof sizeBytes !== "number")
    throw new InvalidArgumentError(
      "memory range",
      `base ${describeValue(base)} and size ${describeValue(sizeBytes)}`,
      "two numbers: an 8-aligned base and a size in bytes",
    );
  if (!Number.isSafeInteger(base) || base < 0 || base % WORD_BYTES !== 0 || sizeBytes % WORD_BYTES !== 0 || sizeBytes <= 0) {
    throw new MemoryAccessError(base, sizeBytes, "write", "a memory range needs an 8-aligned base and a positive multiple of 8 bytes");
  }
}

/**
 * One contiguous range of words at `base` (8-aligned) over any ArrayBuffer from `byteOffset`: a
 * simulated stack (in the scan memory), a native stack in place in the scan memory
 * (src/native/thread-stacks.ts), or a koffi view of live native memory
 * (src/native/native-memory.ts). Words are two u32 halves of a Uint32Array
 * (src/bytes/word-codec.ts); every access is checked against the range.
 */
export class WordMemory implements Memory {
  readonly ranges: readonly MemoryRange[];
  /** Replaced by empty views when a SimulatedMemory is released. */
  words: Uint32Array;
  bytes: Uint8Array;
  protected end: number;

  constructor(
    readonly base: number,
    readonly sizeBytes: number,
    buffer: ArrayBufferLike,
    byteOffset = 0,
  ) {
    checkWordRange(base, sizeBytes);
    this.words = new Uint32Array(buffer, byteOffset, sizeBytes / 4);
    this.bytes = new Uint8Array(buffer, byteOffset, sizeBytes);
    this.end = base + sizeBytes;
    this.ranges = [{ base, sizeBytes }];
  }

  contains(address: number, sizeBytes: number): boolean {
    return address >= this.base && address + sizeBytes <= this.end;
  }

  private index(address: number, operation: "read" | "write"): number {
    const offset = address - this.base;
    if (offset < 0 || address + WORD_BYTES > this.end || !Number.isInteger(address)) {
      throw new MemoryAccessError(address, WORD_BYTES, operation, `outside [${hex(this.base)}, ${hex(this.end)})`);
    }
    if ((offset & 7) !== 0) throw new MemoryAccessError(address, WORD_BYTES, operation, "not 8-byte aligned");
    return offset >>> 2;
  }

  readWord(address: number): number {
    return readU64(this.words, this.index(address, "read"));
  }
  readWordBigInt(address: number): bigint {
    return readU64BigInt(this.words, this.index(address, "read"));
  }
  writeWord(address: number, value: number): void {
    const i = this.index(address, "write");
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new MemoryAccessError(address, WORD_BYTES, "write", `value ${value} is not an integer in [0, 2^53)`);
    }
    writeU64(this.words, i, value);
  }
  writeWordBigInt(address: number, value: bigint): void {
    writeU64BigInt(this.words, this.index(address, "write"), value);
  }
}

/**
 * The one flat word array behind `memory`, when it is a single WordMemory under 4 GiB (a
 * simulated stack, a native stack's view, a snapshot of one range): loops that index its words directly (the unwinder's
 * frame checks, the fast scan loop) use it; undefined otherwise.
 */
export function flatWords(memory: Memory): WordMemory | undefined {
  const words = memory instanceof RangedMemory ? memory.onlyPart : memory;
  // A released SimulatedMemory has no words left: not flat, so every access goes through its checks.
  return words instanceof WordMemory && words.sizeBytes < 2 ** 32 && words.words.byteLength === words.sizeBytes ? words : undefined;
}

/**
 * A WordMemory over a fresh region of the scan memory (src/memory/scan-memory.ts), so the scan
 * kernel walks it in place; poison-filled: reads of never-written words are conspicuous. The
 * region goes back to the scan memory when the memory becomes unreachable, or at `release()`
 * (after which every access is a MemoryAccessError).
 */
export class SimulatedMemory extends WordMemory {
  private readonly region: OwnedRegion;

  constructor(base: number, sizeBytes: number, options: { poison?: boolean; contents?: Uint8Array } = {}) {
    checkWordRange(base, sizeBytes);
    const region = scanMemory().allocate(sizeBytes, "simulated memory");
    super(base, sizeBytes, scanMemory().buffer, region.offset);
    this.region = new OwnedRegion(this, region);
    if (options.poison ?? true) {
      for (let i = 0; i < this.words.length; i += 2) {
        this.words[i] = POISON_WORD_LO;
        this.words[i + 1] = POISON_WORD_HI;
      }
    }
    if (options.contents) this.bytes.set(options.contents.subarray(0, sizeBytes));
  }

  /** Gives the region back now; the memory is empty from then on. */
  release(): void {
    this.words = new Uint32Array(0);
    this.bytes = new Uint8Array(0);
    this.end = this.base;
    this.region.release();
  }
}

/** Several non-overlapping ranges (stacklets, the pieces of a snapshot), each a SimulatedMemory. */
export class RangedMemory implements Memory {
  readonly ranges: readonly MemoryRange[];
  private readonly parts: readonly SimulatedMemory[];
  private last: SimulatedMemory;

  constructor(parts: readonly SimulatedMemory[]) {
    if (parts.length === 0) throw new MemoryAccessError(0, 0, "read", "a ranged memory needs at least one range");
    this.parts = [...parts].sort((a, b) => a.base - b.base);
    for (let i = 1; i < this.parts.length; i++) {
      const prev = this.parts[i - 1]!;
      if (prev.base + prev.sizeBytes > this.parts[i]!.base) {
        throw new MemoryAccessError(this.parts[i]!.base, this.parts[i]!.sizeBytes, "write", `overlaps the range at ${hex(prev.base)}`);
      }
    }
    this.ranges = this.parts.map((p) => ({ base: p.base, sizeBytes: p.sizeBytes }));
    this.last = this.parts[0]!;
  }

  /** The range when there is only one: the memory is then that flat range (flatWords). */
  get onlyPart(): SimulatedMemory | undefined {
    return this.parts.length === 1 ? this.parts[0] : undefined;
  }

  /** From `{base, bytes}` pieces (a snapshot), each padded to whole words. */
  static fromPieces(pieces: readonly { base: number; bytes: Uint8Array }[]): RangedMemory {
    return new RangedMemory(pieces.map((p) => new SimulatedMemory(p.base, Math.ceil(p.bytes.length / 8) * 8, { contents: p.bytes })));
  }

  private partFor(address: number, operation: "read" | "write"): SimulatedMemory {
    const last = this.last;
    if (address >= last.base && address + WORD_BYTES <= last.base + last.sizeBytes) return last;
    for (const p of this.parts) {
      if (address >= p.base && address + WORD_BYTES <= p.base + p.sizeBytes) {
        this.last = p;
        return p;
      }
    }
    throw new MemoryAccessError(
      address,
      WORD_BYTES,
      operation,
      `outside every valid range (${this.parts.map((p) => `[${hex(p.base)}, ${hex(p.base + p.sizeBytes)})`).join(", ")})`,
    );
  }

  contains(address: number, sizeBytes: number): boolean {
    for (const p of this.parts) if (p.contains(address, sizeBytes)) return true;
    return false;
  }
  readWord(address: number): number {
    return this.partFor(address, "read").readWord(address);
  }
  readWordBigInt(address: number): bigint {
    return this.partFor(address, "read").readWordBigInt(address);
  }
  writeWord(address: number, value: number): void {
    this.partFor(address, "write").writeWord(address, value);
  }
  writeWordBigInt(address: number, value: bigint): void {
    this.partFor(address, "write").writeWordBigInt(address, value);
  }
}
