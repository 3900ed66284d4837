import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { highU32, joinHalves, lowU32, readU64, readU64BigInt, setViewU64, viewU64, writeU64, writeU64BigInt } from "../../src/bytes/word-codec.js";

/*
 * The word codec against the platform's own 64-bit little-endian accessors (DataView
 * getBigUint64/setBigUint64 over the same bytes): numbers exact on [0, 2^53), BigInts on all u64.
 */

const SAFE = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
const U64 = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });

function pair(): { words: Uint32Array; view: DataView } {
  const words = new Uint32Array(4);
  return { words, view: new DataView(words.buffer) };
}

describe("word codec", () => {
  it("writeU64/readU64 over a Uint32Array are the little-endian u64 at word pair [i, i + 1]", () => {
    fc.assert(
      fc.property(SAFE, fc.constantFrom(0, 2), (value, index) => {
        const { words, view } = pair();
        writeU64(words, index, value);
        expect(view.getBigUint64(index * 4, true)).toBe(BigInt(value));
        expect(readU64(words, index)).toBe(value);
        expect(joinHalves(lowU32(value), highU32(value))).toBe(value);
      }),
    );
  });

  it("the BigInt forms keep all 64 bits; a negative value is written as its two's complement", () => {
    fc.assert(
      fc.property(U64, (value) => {
        const { words, view } = pair();
        writeU64BigInt(words, 2, value);
        expect(view.getBigUint64(8, true)).toBe(value);
        expect(readU64BigInt(words, 2)).toBe(value);
      }),
    );
    const { words } = pair();
    writeU64BigInt(words, 0, -48n);
    expect(readU64BigInt(words, 0)).toBe((1n << 64n) - 48n);
  });

  it("viewU64/setViewU64 at any byte offset agree with DataView's BigInt accessors", () => {
    fc.assert(
      fc.property(SAFE, fc.integer({ min: 0, max: 8 }), (value, offset) => {
        const { view } = pair();
        setViewU64(view, offset, value);
        expect(view.getBigUint64(offset, true)).toBe(BigInt(value));
        expect(viewU64(view, offset)).toBe(value);
      }),
    );
  });

  it("joinHalves with a signed high half is the i64", () => {
    expect(joinHalves(0xfffffffe, -1)).toBe(-2);
    expect(joinHalves(5, 1)).toBe(2 ** 32 + 5);
  });
});
