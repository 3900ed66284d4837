import { flatWords } from "../src/memory/memory.js";
import type { FrameLog } from "./frame-log.js";
import type { FrameMarks } from "./frame-marks.js";
import { type RootPairs, collectFrameRoots } from "./frame-roots.js";
import type { ScanKernel } from "./kernel-binding.js";
import type { ManagedChunk, Unwinder, WalkStart } from "./unwinder.js";

/*
 * The fast scan path: the roots of a whole stack, for a collection.
 *
 * When the stack is one flat word memory (a simulated stack, a native stack's view), the common
 * frame (src/safepoints/fast-frame-rule.ts, compiled into src/safepoints/scan-recipes.ts and laid
 * out in the scan memory by src/safepoints/scan-layout.ts) is taken by the scan kernel, a
 * WebAssembly loop (walker/scan-kernel/assembly/kernel.ts) over the stack's words in the scan
 * memory: a table probe on the return address, the frame's recipe, one range check, root slots
 * appended to the RootPairs columns, the caller's return address read from the stack.
 *
 * Every frame the kernel does not take (a chunk's end, a frame-pointer climb, roots in
 * callee-saved registers or relative to rbp / the CFA, gc allocas, typed plimmix roots,
 * split-stack crossings, an unknown return address, the depth limit, memory that is not one flat
 * range) is handed to the general Unwinder with `resumeAt`, which stays the single source of
 * truth for them: the frames, pairs, stop reason and errors are exactly those of
 * `for (u.init(); u.valid(); u.next()) collectFrameRoots(u, out)` (test/walker/fast-scan.test.ts,
 * and every stack the tests scan or walk with the `crossCheck` option, check it:
 * walker/scan-cross-check.ts).
 *
 * Invariant kept while the kernel runs: `kernel.regSlots` holds where each callee-saved register
 * lives for the frame at its cursor: copied from the unwinder when a chunk starts, moved by
 * kernel frames that saved registers as Unwinder.next moves them, and handed back with `resumeAt`.
 *
 * The kernel's binding (ScanKernel) belongs to the caller, who keeps one per thread and reuses it
 * (StackRootScanner): the Unwinder knows nothing of the kernel.
 */

/**
 * Walks `start` with `u` (its mode decides errors) and appends every root pair to `out`; returns
 * the number of frames. `kernel` is the thread's reusable binding to the scan kernel. `log`, when
 * given, gets every frame's (sp, ra). `marks`, when given (reset by the caller), gets the frames at
 * depths 1, 2, 4, ... (walker/frame-marks.ts): the kernel is stopped at each such depth (its frame
 * limit), so marks cost a kernel call per mark, not a test per frame.
 *
 * The kernel keeps SP as an index into the stack's u32 words; it stays even (SP 8-aligned)
 * because the words start 8-aligned and every fast frame size is a multiple of 8
 * (scan-recipes.ts); a chunk whose SP is not is handed over at once.
 */
export function scanStackRoots(
  u: Unwinder,
  start: WalkStart | readonly ManagedChunk[],
  out: RootPairs,
  kernel: ScanKernel,
  log?: FrameLog,
  marks?: FrameMarks,
): number {
  let frames = 0;
  u.init(start);
  const flat = flatWords(u.memory);
  if (flat === undefined || flat.base % 8 !== 0 || !kernel.bind(u, flat, log)) {
    for (; u.valid(); u.next()) {
      if (marks !== undefined && u.index === marks.nextIndex) markFrame(u, marks);
      log?.push(u.sp, u.ra);
      collectFrameRoots(u, out);
      frames++;
    }
    return frames;
  }
  try {
    return frames + scanChunks(u, out, log, kernel, marks);
  } finally {
    // Also on a strict-mode error: the binding keeps no reference to this scan's log.
    kernel.unbind();
  }
}

/** Records the unwinder's current frame in `marks` (a managed frame: its return address is a safepoint). */
function markFrame(u: Unwinder, marks: FrameMarks): void {
  marks.mark(u.index, u.sp, u.ra, u.snapshot.table.find(u.ra) >= 0);
}

/** The chunks of a bound walk: plain frames by the kernel, the others by the general unwinder. */
function scanChunks(u: Unwinder, out: RootPairs, log: FrameLog | undefined, kernel: ScanKernel, marks: FrameMarks | undefined): number {
  let frames = 0;
  const wordsBase = kernel.wordsBase;
  const wordsEnd = wordsBase + kernel.stackU32Count * 4;
  while (u.valid()) {
    if (marks !== undefined && u.index === marks.nextIndex) markFrame(u, marks);
    const firstIndex = u.index;
    const sp0 = u.sp;
    let taken = 0;
    if ((sp0 & 7) === 0 && sp0 >= wordsBase && sp0 < wordsEnd) {
      kernel.enterChunk(u.chunk, (sp0 - wordsBase) / 4, u.ra, firstIndex);
      u.copyRegSlots(kernel.regSlots);
      // With marks, the kernel stops at the next marked depth (nextIndex > firstIndex here).
      taken = kernel.run(out, marks === undefined ? Infinity : marks.nextIndex - firstIndex);
    }
    if (taken !== 0) {
      frames += taken;
      u.resumeAt(kernel.sp, kernel.ra, firstIndex + taken, kernel.regSlots);
    }
    if (!u.valid()) break;
    if (marks !== undefined && u.index === marks.nextIndex) continue; // the kernel stopped for the mark
    // The frame the kernel could not take: the general unwinder's.
    log?.push(u.sp, u.ra);
    collectFrameRoots(u, out);
    frames++;
    u.next();
  }
  return frames;
}
