import koffi from "koffi";
import { MemoryAccessError, hex } from "../errors.js";
import type { Memory, MemoryRange } from "../memory/memory.js";

const TWO_32 = 0x1_0000_0000;
const WORD = 8;

/**
 * A range of live native memory (one thread's stack, [sp - 256, stackTop)) as a Memory: a
 * Uint32Array over `koffi.view(address, length)`. Words are read as `lo + hi * 2^32`. Every
 * access is checked against the range: nothing outside it is ever touched. Valid only while the
 * memory stays mapped and the thread stays stopped (one collection).
 */
export class NativeMemory implements Memory {
  readonly ranges: readonly MemoryRange[];
  private readonly words: Uint32Array;
  private readonly end: number;

  constructor(
    readonly base: number,
    readonly sizeBytes: number,
  ) {
    if (!Number.isSafeInteger(base) || base <= 0 || base % WORD !== 0 || sizeBytes <= 0 || sizeBytes % WORD !== 0) {
      throw new MemoryAccessError(base, sizeBytes, "read", "a native memory range needs an 8-aligned base and a positive multiple of 8 bytes");
    }
    this.words = new Uint32Array(koffi.view(BigInt(base), sizeBytes));
    this.end = base + sizeBytes;
    this.ranges = [{ base, sizeBytes }];
  }

  contains(address: number, sizeBytes: number): boolean {
    return address >= this.base && address + sizeBytes <= this.end;
  }

  private index(address: number, operation: "read" | "write"): number {
    const offset = address - this.base;
    if (!(offset >= 0 && address + WORD <= this.end) || !Number.isInteger(address)) {
      throw new MemoryAccessError(address, WORD, operation, `outside [${hex(this.base)}, ${hex(this.end)})`);
    }
    if ((offset & 7) !== 0) throw new MemoryAccessError(address, WORD, operation, "not 8-byte aligned");
    return offset >>> 2;
  }

  readWord(address: number): number {
    const i = this.index(address, "read");
    return this.words[i + 1]! * TWO_32 + this.words[i]!;
  }

  readWordBigInt(address: number): bigint {
    const i = this.index(address, "read");
    return (BigInt(this.words[i + 1]!) << 32n) | BigInt(this.words[i]!);
  }

  writeWord(address: number, value: number): void {
    const i = this.index(address, "write");
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new MemoryAccessError(address, WORD, "write", `value ${value} is not an integer in [0, 2^53)`);
    }
    this.words[i] = value % TWO_32;
    this.words[i + 1] = Math.floor(value / TWO_32);
  }

  writeWordBigInt(address: number, value: bigint): void {
    const i = this.index(address, "write");
    this.words[i] = Number(BigInt.asUintN(32, value));
    this.words[i + 1] = Number(BigInt.asUintN(32, value >> 32n));
  }
}
