import type { RootScanner } from "./root-scanning.js";

/**
 * Word access to memory outside the heap (globals, a native data segment). src/memory's
 * SimulatedMemory, RangedMemory and the native memory satisfy it as they are.
 */
export interface SlotMemory {
  readWord(address: number): number;
  writeWord(address: number, value: number): void;
}

/**
 * Registered global slots as a RootScanner: each slot holds null (0) or an object address, is
 * reported as a root of its own, and is rewritten in place when its object moved.
 */
export class GlobalRoots implements RootScanner {
  private readonly slots: number[] = [];
  private readonly memories: SlotMemory[] = [];

  get count(): number {
    return this.slots.length;
  }

  add(slotAddress: number, memory: SlotMemory): void {
    this.slots.push(slotAddress);
    this.memories.push(memory);
  }

  /** Unregisters a slot (its first registration); false if it was not registered. */
  remove(slotAddress: number): boolean {
    const i = this.slots.indexOf(slotAddress);
    if (i < 0) return false;
    this.slots.splice(i, 1);
    this.memories.splice(i, 1);
    return true;
  }

  scanRoots(visit: (baseAddress: number) => void): void {
    for (let i = 0; i < this.slots.length; i++) {
      const value = this.memories[i]!.readWord(this.slots[i]!);
      if (value !== 0) visit(value);
    }
  }

  describeRoot(index: number): string | undefined {
    let k = 0;
    for (let i = 0; i < this.slots.length; i++) {
      if (this.memories[i]!.readWord(this.slots[i]!) === 0) continue;
      if (k++ === index) return `global slot 0x${this.slots[i]!.toString(16)}`;
    }
    return undefined;
  }

  updateRoots(forward: (oldBaseAddress: number) => number): void {
    for (let i = 0; i < this.slots.length; i++) {
      const memory = this.memories[i]!;
      const slot = this.slots[i]!;
      const value = memory.readWord(slot);
      if (value === 0) continue;
      const moved = forward(value);
      if (moved !== value) memory.writeWord(slot, moved);
    }
  }
}
