import { encodeLocationWord0 } from "../../../src/location/location-word.js";
import { SimulatedMemory, type Memory, type MemoryRange } from "../../../src/memory/memory.js";
import { FrameDescriptorBuilder } from "../../../src/safepoints/frame-descriptors.js";
import { SafepointRegistry } from "../../../src/safepoints/registry.js";

/** A safepoint of a synthetic map: a frame size and SP-relative root pairs. */
export interface SyntheticSafepoint {
  ra: number;
  frameSizeBytes: number;
  /** [baseOffset, derivedOffset] from SP; equal offsets for a plain root. */
  pairs: [number, number][];
  /** Root types (ROOT_TYPE_*) per pair, for _GC_MAP_-style typed roots; default untyped. */
  types?: number[];
  /** Callee-saved register k saved at CFA + offset (CALLEE_SAVED_DWARF order). */
  saved?: Partial<Record<number, number>>;
}

/**
 * Registers synthetic safepoints (Indirect [sp+off] roots) in a fresh registry: as one module, or
 * dealt round-robin into `modules` modules (safepoint r goes to module r % modules).
 */
export function syntheticRegistry(safepoints: readonly SyntheticSafepoint[], modules = 1): SafepointRegistry {
  const registry = new SafepointRegistry();
  for (let m = 0; m < modules; m++) {
    const b = new FrameDescriptorBuilder();
    const fn = b.addFunction({ name: `synthetic${m}`, address: 0x1000, stackSizeBytes: 0 });
    safepoints.forEach((s, r) => {
      if (r % modules !== m) return;
      const locStart = b.nextLocationIndex;
      const pairStart = b.nextPairIndex;
      for (const [p, [baseOff, derivedOff]] of s.pairs.entries()) {
        const type = s.types?.[p] ?? 0;
        const base = b.addLocation(encodeLocationWord0(3, type, 7, 8), baseOff);
        const derived = baseOff === derivedOff ? base : b.addLocation(encodeLocationWord0(3, type, 7, 8), derivedOff);
        b.addPair(base, derived);
      }
      const saved = [0, 0, 0, 0, 0, 0];
      for (const [k, off] of Object.entries(s.saved ?? {})) saved[Number(k)] = off!;
      b.addSafepoint({
        returnAddress: s.ra,
        frameSizeBytes: s.frameSizeBytes,
        stackSizeBytes: s.frameSizeBytes,
        cfaRegister: 7,
        cfaOffsetBytes: s.frameSizeBytes + 8,
        savedRegOffsets: saved,
        flags: 0,
        functionIndex: fn,
        blobIndex: 0,
        recordIndex: r,
        locStart,
        deoptCount: 0,
        pairStart,
        pairCount: s.pairs.length,
        allocaCount: 0,
      });
    });
    registry.register({ name: modules === 1 ? "synthetic" : `synthetic${m}`, format: "llvm-v3", descriptors: b.finish(), contentKey: `synthetic${m}` });
  }
  return registry;
}

/** Records every access attempted outside the valid ranges (the walker must never make one). */
export class SpyMemory implements Memory {
  readonly outOfRange: number[] = [];
  readonly reads: number[] = [];
  constructor(readonly inner: Memory) {}
  get ranges(): readonly MemoryRange[] {
    return this.inner.ranges;
  }
  contains(address: number, sizeBytes: number): boolean {
    return this.inner.contains(address, sizeBytes);
  }
  private check(address: number): void {
    this.reads.push(address);
    if (!this.inner.contains(address, 8)) this.outOfRange.push(address);
  }
  readWord(address: number): number {
    this.check(address);
    return this.inner.readWord(address);
  }
  readWordBigInt(address: number): bigint {
    this.check(address);
    return this.inner.readWordBigInt(address);
  }
  writeWord(address: number, value: number): void {
    this.check(address);
    this.inner.writeWord(address, value);
  }
  writeWordBigInt(address: number, value: bigint): void {
    this.check(address);
    this.inner.writeWordBigInt(address, value);
  }
}

export { SimulatedMemory };
