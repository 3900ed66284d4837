/**
 * The evacuations of one collection, as (old storage start, size in bytes, new storage start)
 * triples in one growing typed array (no object per copy: this is on the tracing hot path). The
 * collector poisons the old copies from it; the stress quarantine keeps it to say what lived
 * where (gc/quarantine.ts).
 */
export class CopyLog {
  private triples = new Float64Array(3 * 256);
  count = 0;

  clear(): void {
    this.count = 0;
  }

  add(oldStart: number, sizeBytes: number, newStart: number): void {
    if (3 * this.count + 3 > this.triples.length) {
      const grown = new Float64Array(this.triples.length * 2);
      grown.set(this.triples);
      this.triples = grown;
    }
    const t = this.triples;
    const k = 3 * this.count++;
    t[k] = oldStart;
    t[k + 1] = sizeBytes;
    t[k + 2] = newStart;
  }

  oldStart(k: number): number {
    return this.triples[3 * k]!;
  }

  sizeBytes(k: number): number {
    return this.triples[3 * k + 1]!;
  }

  newStart(k: number): number {
    return this.triples[3 * k + 2]!;
  }
}
