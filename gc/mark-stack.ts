/**
 * The collector's explicit mark stack: object addresses in a Float64Array that doubles when full
 * (amortised: tracing allocates nothing per object, and never recurses).
 */
export class MarkStack {
  private items = new Float64Array(4096);
  length = 0;

  push(address: number): void {
    if (this.length === this.items.length) {
      const bigger = new Float64Array(this.items.length * 2);
      bigger.set(this.items);
      this.items = bigger;
    }
    this.items[this.length++] = address;
  }

  /** The most recently pushed address; only when length > 0. */
  pop(): number {
    return this.items[--this.length]!;
  }

  get capacity(): number {
    return this.items.length;
  }
}
