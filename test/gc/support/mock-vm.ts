/*
 * A mock VM for collector tests (after MMTk's mock_vm.rs): roots are entries of plain arrays,
 * the heap is an ArrayBuffer at a base above 2^40 (addresses are not small numbers), and objects
 * are built with the collector's own mutator and accessors.
 */
import { BYTES_IN_BLOCK } from "../../../gc/heap-constants.js";
import { type CollectorOptions, ImmixCollector } from "../../../gc/immix-collector.js";
import type { Mutator } from "../../../gc/immix-allocator.js";
import type { ObjectModel } from "../../../gc/object-model.js";
import type { RootScanReason, RootScanner } from "../../../gc/root-scanning.js";

export const HEAP_BASE = 0x7f12_3400_0000;

/**
 * Roots over plain arrays. `roots[i]` holds an object address or 0. A derived pointer is
 * `{ baseIndex, address }`: an address computed from `roots[baseIndex]` (interior, or even
 * outside the object); scanRoots records each one's offset from its base (all reads first) and
 * updateRoots rebuilds it from the relocated base, as the stack walker does for (base, derived)
 * pairs.
 */
export class MockRootScanner implements RootScanner {
  roots: number[] = [];
  derived: { baseIndex: number; address: number }[] = [];
  scans = 0;
  /** Why each scanRoots was called, in order. */
  reasons: RootScanReason[] = [];
  updates = 0;
  /** A deliberately broken scanner: report roots but never write them back. */
  skipUpdates = false;
  /** Names its roots for verification messages (RootScanner.describeRoot) when set. */
  label: string | undefined;
  private offsets: number[] = [];

  constructor(roots: number[] = []) {
    this.roots = roots;
  }

  scanRoots(visit: (baseAddress: number) => void, reason: RootScanReason): void {
    this.scans++;
    this.reasons.push(reason);
    this.offsets = this.derived.map((d) => d.address - this.roots[d.baseIndex]!);
    for (const r of this.roots) if (r !== 0) visit(r);
  }

  describeRoot(index: number): string | undefined {
    if (this.label === undefined) return undefined;
    const i = this.roots.map((r, k) => (r === 0 ? -1 : k)).filter((k) => k >= 0)[index];
    return i === undefined ? undefined : `${this.label} roots[${i}]`;
  }

  updateRoots(forward: (oldBaseAddress: number) => number): void {
    this.updates++;
    if (this.skipUpdates) return;
    // In place, as a stack walker rewrites slots: callers may hold on to the array.
    for (let i = 0; i < this.roots.length; i++) if (this.roots[i] !== 0) this.roots[i] = forward(this.roots[i]!);
    this.derived.forEach((d, i) => {
      d.address = this.roots[d.baseIndex]! + this.offsets[i]!;
    });
  }
}

export interface TestHeap {
  collector: ImmixCollector;
  mutator: Mutator;
  scanner: MockRootScanner;
}

/** A collector over a fresh, poisoned heap of `sizeBytes` (default 1 MiB), one mutator, one mock scanner. */
export function makeHeap(options: CollectorOptions & { sizeBytes?: number; model?: ObjectModel } = {}): TestHeap {
  const sizeBytes = options.sizeBytes ?? 32 * BYTES_IN_BLOCK;
  const buffer = new ArrayBuffer(sizeBytes);
  // Poison the memory so that reads of never-written words stand out.
  new Uint32Array(buffer).fill(0xdeadbeef);
  const collector = new ImmixCollector({ heap: { base: HEAP_BASE, buffer, sizeBytes }, options, ...(options.model ? { model: options.model } : {}) });
  const scanner = new MockRootScanner();
  collector.addRootScanner(scanner);
  return { collector, mutator: collector.newMutator(), scanner };
}

/** Fills the raw bytes of `obj` with a pattern derived from `seed`. */
export function fillRaw(c: ImmixCollector, obj: number, seed: number): void {
  const raw = c.rawBytes(obj);
  for (let i = 0; i < raw.length; i++) raw[i] = (seed * 31 + i * 7) & 0xff;
}

/** True when the raw bytes of `obj` still hold fillRaw's pattern for `seed`. */
export function rawMatches(c: ImmixCollector, obj: number, seed: number): boolean {
  const raw = c.rawBytes(obj);
  for (let i = 0; i < raw.length; i++) if (raw[i] !== ((seed * 31 + i * 7) & 0xff)) return false;
  return true;
}

/** Offset of an address from the heap base, in blocks and lines: easier to read in assertions. */
export function blockOf(address: number): number {
  return Math.floor((address - HEAP_BASE) / BYTES_IN_BLOCK);
}

export function lineOf(address: number): number {
  return Math.floor((address - HEAP_BASE) / 128);
}

/** Storage of exactly one line (128 B, header included) with the default model: 0 slots, 120 raw bytes. */
export const ONE_LINE_RAW_BYTES = 120;

/**
 * Allocates `count` one-line objects with a fresh mutator's first allocations: object i then sits
 * in block floor(i / 256), line i % 256 (clean blocks 0, 1, 2, ... one hole each).
 */
export function allocOneLineObjects(t: TestHeap, count: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push(t.mutator.alloc(0, ONE_LINE_RAW_BYTES));
  return out;
}

/** Keeps exactly the objects at the given indexes as roots (in that order). */
export function keepOnly(t: TestHeap, objects: readonly number[], indexes: Iterable<number>): void {
  t.scanner.roots = [...indexes].map((i) => objects[i]!);
}
