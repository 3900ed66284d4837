import koffi from "koffi";
import { AllocationBits } from "../../gc/allocation-bits.js";
import { BYTES_IN_BLOCK } from "../../gc/heap-constants.js";
import { ImmixCollector } from "../../gc/immix-collector.js";
import { RootwalkError, hex } from "../errors.js";
import { GlobalSlotMemory } from "./global-slot-memory.js";
import { nativeBarrierLog } from "../../gc/remembered-set.js";
import type { RuntimeLibrary } from "./runtime-library.js";

/**
 * The heap and its collector: native memory reserved by runtime-alloc.c (rw_heap_reserve), seen as an
 * ArrayBuffer through koffi.view, whole blocks, managed by the Immix collector. The stress quarantine protects
 * the blocks it holds (rw_heap_protect): a stale read or write faults at once.
 */
export function createNativeCollector(
  runtime: RuntimeLibrary,
  options: {
    heapBytes: number;
    verify: boolean;
    stressEvery: number;
    poison?: boolean | undefined;
    generational?: boolean | undefined;
    nurseryBytes?: number | undefined;
  },
): ImmixCollector {
  const heapBytes = Math.floor(options.heapBytes / BYTES_IN_BLOCK) * BYTES_IN_BLOCK;
  const heapPointer = runtime.rwHeapReserve(heapBytes) as bigint | null;
  if (heapPointer === null || heapPointer === 0n) throw new RootwalkError("GC", `cannot reserve a heap of ${heapBytes} bytes`);
  // The allocation bitmap, in native memory: runtime-alloc.c's gc_alloc fast path sets its bits.
  const bitsPointer = runtime.rwAllocationBits() as bigint | null;
  if (bitsPointer === null || bitsPointer === 0n) throw new RootwalkError("GC", `cannot reserve the allocation bitmap of a ${heapBytes}-byte heap`);
  const protect = (address: number, bytes: number, accessible: boolean): void => {
    const e = runtime.rwHeapProtect(address, bytes, accessible ? 1 : 0) as number;
    if (e !== 0) throw new RootwalkError("GC", `mprotect(${hex(address)}, ${bytes}, ${accessible ? "read+write" : "none"}) failed: errno ${e}`);
  };
  const stress = options.stressEvery > 0;
  // The write barrier's unlogged bitmap and log, in native memory: gc_write_barrier (runtime-barrier.c) tests and logs in C.
  const unloggedPointer = runtime.rwUnloggedBits() as bigint | null;
  if (unloggedPointer === null || unloggedPointer === 0n) throw new RootwalkError("GC", `cannot reserve the unlogged bitmap of a ${heapBytes}-byte heap`);
  const logCapacity = Number(runtime.rwLogCapacity() as bigint | number);
  const logEntries = new Uint32Array(koffi.view(runtime.rwLogObjects() as bigint, logCapacity * 8));
  const barrierLog = nativeBarrierLog(
    logEntries,
    logCapacity,
    () => Number(runtime.rwLogCount() as bigint | number),
    () => runtime.rwLogClear(),
  );
  return new ImmixCollector({
    heap: {
      base: Number(heapPointer),
      buffer: koffi.view(heapPointer, heapBytes),
      sizeBytes: heapBytes,
      allocationBits: koffi.view(bitsPointer, AllocationBits.bytesFor(heapBytes)),
      unloggedBits: koffi.view(unloggedPointer, AllocationBits.bytesFor(heapBytes)),
      barrierLog,
      protection: { protect: (a, n) => protect(a, n, false), unprotect: (a, n) => protect(a, n, true) },
    },
    options: {
      verify: options.verify,
      stress,
      poison: options.poison === true || stress,
      globalMemory: new GlobalSlotMemory(),
      generational: options.generational === true,
      ...(options.nurseryBytes !== undefined ? { nurseryBytes: options.nurseryBytes } : {}),
    },
  });
}
