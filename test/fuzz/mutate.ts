/**
 * Byte mutations for fuzzing the decoders: deterministic for a seed, so a failing case can be
 * replayed from the seed that `runFuzz` prints.
 */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0 || 0x9e3779b9;
  }
  /** mulberry32 */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(maxExclusive: number): number {
    return Math.floor(this.next() * maxExclusive);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}

const INTERESTING_U32 = [0, 1, 2, 3, 7, 8, 0x7f, 0x80, 0xff, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff];

/** One to four mutations of `seed`: flips, overwrites with boundary values, truncation, growth, splices. */
export function mutate(seed: Uint8Array, rng: Rng): Uint8Array {
  let bytes = new Uint8Array(seed); // a copy, also when seed is a Node Buffer
  const steps = 1 + rng.int(4);
  for (let s = 0; s < steps; s++) {
    const len = bytes.length;
    switch (rng.int(8)) {
      case 0: // flip one bit
        if (len > 0) bytes[rng.int(len)]! ^= 1 << rng.int(8);
        break;
      case 1: // random byte
        if (len > 0) bytes[rng.int(len)] = rng.int(256);
        break;
      case 2: // boundary u32 at an aligned offset (counts, sizes, offsets)
        if (len >= 4) new DataView(bytes.buffer, bytes.byteOffset).setUint32(rng.int(len >> 2) * 4, rng.pick(INTERESTING_U32), true);
        break;
      case 3: // boundary u16
        if (len >= 2) new DataView(bytes.buffer, bytes.byteOffset).setUint16(rng.int(len >> 1) * 2, rng.pick(INTERESTING_U32) & 0xffff, true);
        break;
      case 4: // truncate
        bytes = new Uint8Array(bytes.subarray(0, rng.int(len + 1)));
        break;
      case 5: {
        // append random bytes (or a copy of the start: a second blob)
        const extra = rng.int(2) === 0 ? new Uint8Array(bytes.subarray(0, rng.int(len + 1))) : Uint8Array.from({ length: rng.int(64) }, () => rng.int(256));
        const grown = new Uint8Array(len + extra.length);
        grown.set(bytes);
        grown.set(extra, len);
        bytes = grown;
        break;
      }
      case 6: {
        // delete a range
        const at = rng.int(len + 1);
        const n = rng.int(Math.min(32, len - at) + 1);
        const shrunk = new Uint8Array(len - n);
        shrunk.set(bytes.subarray(0, at));
        shrunk.set(bytes.subarray(at + n), at);
        bytes = shrunk;
        break;
      }
      default: {
        // copy a range over another
        if (len < 2) break;
        const from = rng.int(len);
        const to = rng.int(len);
        const n = Math.min(rng.int(24) + 1, len - from, len - to);
        bytes.copyWithin(to, from, from + n);
      }
    }
  }
  return bytes;
}
