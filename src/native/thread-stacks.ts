import { RootwalkError, hex } from "../errors.js";
import { WordMemory } from "../memory/memory.js";
import { type ScanMemory, type ScanRegion, scanMemory } from "../memory/scan-memory.js";
import type { RuntimeLibrary } from "./runtime-library.js";
import { GUARD_BYTES, STACK_ALIGN_BYTES, type StackPlan, checkStackPlan, stackRegionBytes } from "./stack-limits.js";

/**
 * The managed threads' stacks, placed in the scan memory so the root scan reads them in place: a
 * stopped thread's stack is a WordMemory over the scan memory's buffer at the stack's byte offset
 * (no koffi view, no copy), the same bytes the scan kernel indexes.
 *
 * Invariants:
 * - Made before rw_run_main: one region for rw_main (the first), `plan.threads` for gc_thread_start
 *   threads, reserved up front (stack-limits.ts checks they fit; untouched pages cost nothing).
 *   Each goes to runtime.c (rw_stack_add) as a typed-array view on the shared memory, never its
 *   buffer (koffi passes NULL for that); C protects the region's lowest GUARD_BYTES.
 * - The scan memory is module-global (scanMemory()), so the WebAssembly.Memory stays referenced
 *   while any thread lives on it: V8 would free it under them otherwise.
 * - `release` gives a region back only once C says no live thread uses it (it joins finished
 *   threads) and its guard is readable again; a region a live thread still runs on is kept.
 */
export class ThreadStacks {
  /** The native address of the scan memory's byte 0. */
  readonly scanBaseAddress: number;
  /** Sorted by offset. */
  private readonly regions: ScanRegion[] = [];
  private readonly memory: ScanMemory;

  constructor(
    private readonly runtime: RuntimeLibrary,
    plan: StackPlan,
  ) {
    checkStackPlan(plan);
    this.memory = scanMemory();
    this.scanBaseAddress = Number(runtime.rwAddressOf(this.memory.bytes.subarray(0, 8)));
    try {
      this.regions.push(this.memory.allocate(stackRegionBytes(plan.mainStackBytes), "rw_main's stack (--stack)", STACK_ALIGN_BYTES));
      for (let t = 0; t < plan.threads; t++) {
        this.regions.push(this.memory.allocate(stackRegionBytes(plan.threadStackBytes), "thread stacks (--threads)", STACK_ALIGN_BYTES));
      }
      for (const region of this.regions) {
        const error = runtime.rwStackAdd(this.view(region), region.sizeBytes) as string | null;
        if (error !== null) throw new RootwalkError("GC", `cannot place a thread stack in the scan memory: ${error}`);
      }
    } catch (e) {
      for (const region of this.regions) if (runtime.rwStackRetire(this.view(region)) !== 1) region.release();
      throw e;
    }
    this.regions.sort((a, b) => a.offset - b.offset);
  }

  /** A typed-array view on the region: what koffi passes to C as its native address. */
  private view(region: ScanRegion): Uint8Array {
    return new Uint8Array(this.memory.buffer, region.offset, region.sizeBytes);
  }

  /** The region whose stack (above its guard) holds the native `address`, or undefined. */
  private regionHolding(address: number): ScanRegion | undefined {
    const offset = address - this.scanBaseAddress;
    let low = 0;
    let high = this.regions.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.regions[mid]!.offset <= offset) low = mid + 1;
      else high = mid;
    }
    const region = this.regions[low - 1];
    return region !== undefined && offset >= region.offset + GUARD_BYTES && offset < region.offset + region.sizeBytes ? region : undefined;
  }

  /** The native address just above the stack that holds `sp` (its region's end). */
  stackEnd(sp: number, label: string): number {
    const region = this.regionHolding(sp);
    if (region === undefined) throw new RootwalkError("GC", `${label}'s SP ${hex(sp)} is not in a thread stack of the scan memory`);
    return this.scanBaseAddress + region.offset + region.sizeBytes;
  }

  /** `[low, low + sizeBytes)` of one thread's stack as memory, in place in the scan memory. */
  memoryAt(low: number, sizeBytes: number, label: string): WordMemory {
    const region = this.regionHolding(low);
    const offset = low - this.scanBaseAddress;
    if (region === undefined || offset + sizeBytes > region.offset + region.sizeBytes) {
      throw new RootwalkError("GC", `${label}'s stack [${hex(low)}, ${hex(low + sizeBytes)}) is not inside one thread stack of the scan memory`);
    }
    return new WordMemory(low, sizeBytes, this.memory.buffer, offset);
  }

  /** Gives back every region no live thread uses (after rw_run_main returned). */
  release(): void {
    const kept = this.regions.filter((region) => {
      const status = this.runtime.rwStackRetire(this.view(region)) as number;
      if (status < 0)
        throw new RootwalkError("GC", `cannot give back the thread stack at scan memory offset ${hex(region.offset)} (rw_stack_retire: ${status})`);
      if (status === 0) region.release();
      return status === 1;
    });
    this.regions.splice(0, this.regions.length, ...kept);
  }
}
