import type { Memory, MemoryRange } from "../memory/memory.js";
import type { ArmedBarrier } from "./return-barrier-table.js";

/**
 * A core's memory as it was before the runtime armed its return barriers: a word read at an
 * armed slot that still holds the trampoline's address reads as the return address the table
 * kept, so the unwinder and everything else walk the pristine stack. A slot that no longer holds
 * the trampoline (the frame returned and the word was reused) reads as it is. Only whole aligned
 * words are restored: every return-address read is one (slots are 8-aligned, the table's decoder
 * checks it). Read-only, as a core is.
 */
export class ReturnBarrierMemory implements Memory {
  readonly ranges: readonly MemoryRange[];

  constructor(
    private readonly inner: Memory,
    private readonly trampoline: number,
    private readonly armed: ReadonlyMap<number, ArmedBarrier>,
  ) {
    this.ranges = inner.ranges;
  }

  /** True when `slot` is an armed slot whose trampoline address this memory reads as the original return address. */
  restores(slot: number): boolean {
    return this.armed.has(slot) && this.inner.readWord(slot) === this.trampoline;
  }

  readWord(address: number): number {
    const value = this.inner.readWord(address);
    if (value !== this.trampoline) return value;
    return this.armed.get(address)?.returnAddress ?? value;
  }

  readWordBigInt(address: number): bigint {
    const value = this.inner.readWordBigInt(address);
    if (value !== BigInt(this.trampoline)) return value;
    const barrier = this.armed.get(address);
    return barrier === undefined ? value : BigInt(barrier.returnAddress);
  }

  writeWord(address: number, value: number): void {
    this.inner.writeWord(address, value);
  }

  writeWordBigInt(address: number, value: bigint): void {
    this.inner.writeWordBigInt(address, value);
  }

  contains(address: number, sizeBytes: number): boolean {
    return this.inner.contains(address, sizeBytes);
  }
}
