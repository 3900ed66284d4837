/*
 * The frames of a walk as (SP, return address) pairs, for checks (walker/scan-cross-check.ts).
 */

/** Optional per-frame record (SP and return address of every frame, walk order): for checks. */
export class FrameLog {
  count = 0;
  sps = new Float64Array(64);
  ras = new Float64Array(64);
  clear(): void {
    this.count = 0;
  }
  push(sp: number, ra: number): void {
    if (this.count === this.sps.length) {
      const sps = new Float64Array(this.count * 2);
      const ras = new Float64Array(this.count * 2);
      sps.set(this.sps);
      ras.set(this.ras);
      this.sps = sps;
      this.ras = ras;
    }
    this.sps[this.count] = sp;
    this.ras[this.count] = ra;
    this.count++;
  }
}
