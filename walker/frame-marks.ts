/**
 * The frames of one walk at exponentially spaced depths 1, 2, 4, 8, ... (frame 0 is the innermost,
 * at the safepoint): each one's SP and return address, recorded by the scan as it passes them
 * (walker/fast-scan.ts: the scan kernel stops at each such depth, the general unwinder checks its
 * index). Where a runtime puts its return barriers (src/native/return-barriers.ts): the frames
 * a collection walked, spaced as Go's stack barriers were, so that the bookkeeping stays
 * logarithmic in the depth.
 *
 * Fixed capacity, reused across walks (reset): nothing is allocated per frame or per walk.
 * Only frames whose return address is a safepoint are recorded (a managed frame, whose caller's
 * return-address slot the runtime may name exactly); the depth sequence advances past the others.
 */
export class FrameMarks {
  static readonly CAPACITY = 64;
  /** SP of the marked frame (where its callee's frame ended), address. */
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

  /** Called with the frame at `index` when index === nextIndex: records it (when `managed`) and moves on. */
  mark(index: number, sp: number, ra: number, managed: boolean): void {
    if (managed && this.count < FrameMarks.CAPACITY) {
      this.sps[this.count] = sp;
      this.ras[this.count] = ra;
      this.indexes[this.count] = index;
      this.count++;
    }
    this.nextIndex = index * 2;
  }
}
