import { BYTES_IN_BLOCK } from "../gc/heap-constants.js";
import { ImmixCollector } from "../gc/immix-collector.js";
import type { RootScanner } from "../gc/root-scanning.js";
import { prng } from "./synthetic-stackmap.js";

/*
 * A fixed heap for the Collector case: `objects` objects allocated by gc/'s ImmixCollector over
 * an ArrayBuffer, 0-4 pointer slots and 0-40 raw bytes each, every slot pointing at a random
 * object with probability 0.7, `rootCount` random roots. Collections never move anything
 * (defrag "never"), so every collection marks the same graph and the heap bytes dumped for the C
 * reference stay valid.
 */

export const HEAP_BASE = 0x2000_0000;
const HEAP_MAGIC = 0x3130415045485752n; // bytes "RWHEAP01"; must match mark-ref.c

/** Roots from a plain array (the mock of gc/root-scanning.ts's contract). */
export class ArrayRoots implements RootScanner {
  constructor(readonly roots: number[]) {}
  scanRoots(visit: (base: number) => void): void {
    for (const r of this.roots) if (r !== 0) visit(r);
  }
  updateRoots(forward: (old: number) => number): void {
    for (let i = 0; i < this.roots.length; i++) if (this.roots[i] !== 0) this.roots[i] = forward(this.roots[i]!);
  }
}

export interface HeapCorpus {
  collector: ImmixCollector;
  roots: ArrayRoots;
  objects: number;
}

export function buildHeapCorpus(objects: number, rootCount: number, seed: number): HeapCorpus {
  const random = prng(seed);
  const sizeBytes = Math.ceil((objects * 96 * 2) / BYTES_IN_BLOCK) * BYTES_IN_BLOCK;
  const collector = new ImmixCollector({ heap: { base: HEAP_BASE, buffer: new ArrayBuffer(sizeBytes), sizeBytes }, options: { defrag: "never" } });
  const mutator = collector.newMutator();
  const addresses = new Float64Array(objects);
  for (let i = 0; i < objects; i++) addresses[i] = mutator.alloc(Math.floor(random() * 5), Math.floor(random() * 41));
  for (let i = 0; i < objects; i++) {
    const a = addresses[i]!;
    const n = collector.pointerSlotCount(a);
    for (let s = 0; s < n; s++) if (random() < 0.7) collector.writePointer(a, s, addresses[Math.floor(random() * objects)]!);
  }
  const roots = new ArrayRoots(Array.from({ length: rootCount }, () => addresses[Math.floor(random() * objects)]!));
  collector.addRootScanner(roots);
  return { collector, roots, objects };
}

/** The file bench/native/mark-ref.c reads: header, roots, then the heap bytes in use. */
export function heapCorpusFile(h: HeapCorpus): Uint8Array {
  const space = h.collector.space;
  const heapBytes = space.immixTopBlock * BYTES_IN_BLOCK;
  const roots = h.roots.roots;
  const out = new Uint8Array(32 + roots.length * 8 + heapBytes);
  const dv = new DataView(out.buffer);
  [HEAP_MAGIC, BigInt(space.base), BigInt(heapBytes), BigInt(roots.length)].forEach((v, i) => dv.setBigUint64(i * 8, v, true));
  roots.forEach((r, i) => dv.setBigUint64(32 + i * 8, BigInt(r), true));
  out.set(space.bytes.subarray(0, heapBytes), 32 + roots.length * 8);
  return out;
}
