/*
 * What "heap exhausted" advises (gc/collector-error.ts HeapExhaustedError): a `--heap` size from
 * the live bytes, spelled as the option takes it.
 */

/** The largest heap `--heap` takes (src/cli/run-command.ts parseHeapSize). */
const MAX_HEAP_BYTES = 2 ** 32 - 32768;

/**
 * A size rounded up to a nice `--heap` value: 1M, 2M, 3M, 4M, 6M, 8M, 12M, 16M, ... (1 or 1.5
 * times a power of two MiB), at most the 4G maximum; spelled as --heap takes it (24M, 1536M, 4G).
 */
export function spellHeapSize(bytes: number): string {
  const MiB = 1 << 20;
  let size = MiB;
  for (let power = MiB; size < bytes && size < MAX_HEAP_BYTES; power *= 2) {
    size = power * 1.5 >= bytes && power >= 2 * MiB ? power * 1.5 : power * 2;
  }
  size = Math.min(size, 4 * 2 ** 30);
  return size >= 2 ** 30 && size % 2 ** 30 === 0 ? `${size / 2 ** 30}G` : `${size / MiB}M`;
}

/**
 * The heap to suggest after "heap exhausted", from the live bytes rather than by doubling the
 * heap (which took five tries to reach what a growing program needed):
 *   - live data plus the request, twice over: Immix needs free blocks to evacuate into and loses
 *     the free part of partly used lines;
 *   - four times over when the live data filled the heap (over 3/4 of it): the live set was still
 *     growing, so what was measured is a lower bound.
 */
export function suggestedHeapBytes(liveBytes: number, requestBytes: number, heapBytes: number): number {
  const headroom = liveBytes > heapBytes * 0.75 ? 4 : 2;
  return Math.max(heapBytes + 1, (liveBytes + requestBytes) * headroom);
}

/** The advice after "heap exhausted: ...": a `--heap` to try, or that the heap is at its maximum. */
export function heapSizeAdvice(liveBytes: number, requestBytes: number, maxHeapBytes: number): string {
  return maxHeapBytes >= MAX_HEAP_BYTES - (1 << 20)
    ? "the heap is at its 4G maximum"
    : `try --heap ${spellHeapSize(suggestedHeapBytes(liveBytes, requestBytes, maxHeapBytes))}`;
}
