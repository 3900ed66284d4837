import koffi from "koffi";
import { WordMemory } from "../memory/memory.js";
import { type ScanRegion, scanMemory } from "../memory/scan-memory.js";

/**
 * The measured alternative to scanning stacks in place (NativeRunOptions.copyStacks, the bench's
 * NativeScan "copy" run; bench/README.md says why in place was kept): each stopped stack is
 * copied into a scratch region of the scan memory at every stop (`Uint32Array.set` from a koffi
 * view of the live stack, as a stack outside the scan memory would have to be), scanned there,
 * and copied back before the thread runs again (relocated roots must reach the real stack).
 * One scratch region per thread index, reused, replaced when the stack outgrows it.
 */
export class StackCopies {
  private readonly scratch: (ScanRegion | undefined)[] = [];
  /** The copies made since the last `copyBack`: thread index -> the live range it mirrors. */
  private readonly live = new Map<number, { low: number; sizeBytes: number; region: ScanRegion }>();

  /** `[low, low + sizeBytes)` of thread t's stack, copied into its scratch region, as memory there. */
  copyIn(t: number, low: number, sizeBytes: number): WordMemory {
    const memory = scanMemory();
    let region = this.scratch[t];
    if (region === undefined || region.sizeBytes < sizeBytes) {
      region?.release();
      region = this.scratch[t] = memory.allocate(sizeBytes, `a copy of thread #${t}'s stack`);
    }
    const words = new Uint32Array(memory.buffer, region.offset, sizeBytes / 4);
    words.set(new Uint32Array(koffi.view(BigInt(low), sizeBytes)));
    this.live.set(t, { low, sizeBytes, region });
    return new WordMemory(low, sizeBytes, memory.buffer, region.offset);
  }

  /**
   * Copies every stack copied since the last call back to where it lives (the scan may have
   * relocated roots in it), for the threads `stopped(t)` says still wait (a stuck thread runs on).
   */
  copyBack(stopped: (t: number) => boolean): void {
    const buffer = scanMemory().buffer;
    for (const [t, { low, sizeBytes, region }] of this.live) {
      if (stopped(t)) new Uint32Array(koffi.view(BigInt(low), sizeBytes)).set(new Uint32Array(buffer, region.offset, sizeBytes / 4));
    }
    this.live.clear();
  }
}
