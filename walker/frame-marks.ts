/**
 * The frames of one walk at exponentially spaced depths 1, 2, 4, 8, ... (frame 0 is the innermost,
 * at the safepoint): for frame k, the stack slot its return address is read from (where frame k-1
 * keeps it: x86-64 CFA - 8, AArch64 where it saved x30), that return address and frame k's SP
 * (frame k-1's CFA), recorded by the scan as it passes frame k-1 (walker/fast-scan.ts: the scan
 * kernel stops there, the general unwinder checks its index). Where a runtime puts its return barriers (src/native/return-barriers.ts): the frames
 * a collection walked, spaced as Go's stack barriers were, so that the bookkeeping stays
 * logarithmic in the depth.
 *
 * Fixed capacity, reused across walks (reset): nothing is allocated per frame or per walk.
 * Only frames whose return address is a safepoint are recorded (a managed frame, whose caller's
 * return-address slot the runtime may name exactly); the depth sequence advances past the others.
 */
export class FrameMarks {
  static readonly CAPACITY = 64;
  /** The stack slot holding the marked frame's return address (in its callee's frame). */
  readonly slots = new Float64Array(FrameMarks.CAPACITY);
  /** SP of the marked frame (its callee's CFA). */
  readonly sps = new Float64Array(FrameMarks.CAPACITY);
  /** The return address at which the marked frame resumes. */
  readonly ras = new Float64Array(FrameMarks.CAPACITY);
  /** Its frame index in the walk. */
  readonly indexes = new Float64Array(FrameMarks.CAPACITY);
  count = 0;
  /** The frame index the next mark is for (1, then doubling). */
  nextIndex = 1;
  /** Set by the scan that filled the marks: it is complete; the frames it walked and left out (skipped). */
  filled = false;
  frames = 0;
  skipped = 0;

  reset(): void {
    this.count = 0;
    this.nextIndex = 1;
    this.filled = false;
  }

  /** The walk that filled the marks ended: `frames` walked, `skipped` left out below them. */
  finish(frames: number, skipped: number): void {
    this.frames = frames;
    this.skipped = skipped;
    this.filled = true;
  }

  /**
   * Called for frame `index` = nextIndex (while the walk is at its callee, index - 1): records it
   * (when `usable`: its return address is a safepoint, read from a stack slot) and moves on.
   */
  mark(index: number, slot: number, sp: number, ra: number, usable: boolean): void {
    if (usable && this.count < FrameMarks.CAPACITY) {
      this.slots[this.count] = slot;
      this.sps[this.count] = sp;
      this.ras[this.count] = ra;
      this.indexes[this.count] = index;
      this.count++;
    }
    this.nextIndex = index * 2;
  }
}
