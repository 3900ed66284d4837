import koffi from "koffi";
import { MemoryAccessError } from "../errors.js";
import { WordMemory } from "../memory/memory.js";

/**
 * A range of live native memory (one thread's stack, [sp - 256, stackTop)) as a Memory: the
 * WordMemory checks over `koffi.view(address, length)`. Nothing outside the range is ever
 * touched. Valid only while the memory stays mapped and the thread stays stopped (one collection).
 */
export class NativeMemory extends WordMemory {
  constructor(base: number, sizeBytes: number) {
    if (!Number.isSafeInteger(base) || base <= 0 || base % 8 !== 0 || sizeBytes <= 0 || sizeBytes % 8 !== 0) {
      throw new MemoryAccessError(base, sizeBytes, "read", "a native memory range needs an 8-aligned base and a positive multiple of 8 bytes");
    }
    super(base, sizeBytes, koffi.view(BigInt(base), sizeBytes));
  }
}
