import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ByteView } from "../../src/bytes/byte-view.js";
import { InvalidArgumentError, MalformedInputError, MemoryAccessError, TruncatedInputError, UnsupportedInputError } from "../../src/errors.js";
import { SimulatedMemory } from "../../src/memory/memory.js";
import { PlimmixMap, parsePlimmixBlob, plimmixMapLength } from "../../src/stackmap/plimmix-map.js";
import { catchError } from "../support/catch-error.js";
import { encodePlimmix, functionOffsetOf, globalsOffsetOf, type PlimmixSpec, THREE_FUNCTIONS } from "./plimmix-encoder.js";

/*
 * The `_GC_MAP_` v1 decoder against hand-built blobs (test/stackmap/plimmix-encoder.ts): what each
 * accessor returns, one typed error with its exact offset per validation rule, and the length
 * walk over live memory that must never read past its bound.
 */

/**
 * Three functions: a static 24-byte frame with two safepoints and a POINTER and a TRAIT root; a
 * dynamic frame with RBP-relative COMPLEX and ATOMIC roots; a function without safepoints or
 * roots. Two globals. Offsets: function records at 16, 72, 120; globals count at 144; 168 bytes.
 */
const SPEC: PlimmixSpec = {
  functions: [...THREE_FUNCTIONS],
  globals: [0x40_4000, 0x40_4008],
};
const F0 = 16;
const F1 = 72;
const F2 = 120;
const GLOBALS = 144;
const SIZE = 168;

function parse(spec: PlimmixSpec): PlimmixMap {
  return PlimmixMap.parse(new ByteView(encodePlimmix(spec)), 0);
}
function withFunction(f: number, change: Partial<PlimmixSpec["functions"][number]>): PlimmixSpec {
  return { ...SPEC, functions: SPEC.functions.map((fn, i) => (i === f ? { ...fn, ...change } : fn)) };
}

describe("_GC_MAP_ v1: decoding", () => {
  it("the example blob: layout offsets as the format note gives them", () => {
    expect(functionOffsetOf(SPEC, 1)).toBe(F1);
    expect(functionOffsetOf(SPEC, 2)).toBe(F2);
    expect(globalsOffsetOf(SPEC)).toBe(GLOBALS);
    const map = parse(SPEC);
    expect(map.sizeBytes).toBe(SIZE);
    expect(map.version).toBe(1);
    expect(map.numFunctions).toBe(3);
    expect(map.numSafepoints).toBe(3);
    expect([0, 1, 2].map((f) => map.functionOffset(f))).toEqual([F0, F1, F2]);
  });

  it("functions: address, frame words (-1 dynamic), stack arguments, counts", () => {
    const map = parse(SPEC);
    expect([0, 1, 2].map((f) => map.functionAddress(f))).toEqual([0x40_1000, 0x40_1100, 0x40_1200]);
    expect(map.functionAddressLong(0).toString(16)).toBe("401000");
    expect([0, 1, 2].map((f) => map.frameWords(f))).toEqual([3, -1, 1]);
    expect([0, 1, 2].map((f) => map.frameSizeBytes(f))).toEqual([24, -1, 8]);
    expect([0, 1, 2].map((f) => map.hasDynamicFrame(f))).toEqual([false, true, false]);
    expect([0, 1, 2].map((f) => map.stackArgCount(f))).toEqual([2, 0, 0]);
    expect([0, 1, 2].map((f) => map.numSafepointsOf(f))).toEqual([2, 1, 0]);
    expect([0, 1, 2].map((f) => map.numRootsOf(f))).toEqual([2, 2, 0]);
    expect([0, 1, 2].map((f) => map.firstSafepointOf(f))).toEqual([0, 2, 3]);
    expect(map.functionAddressFieldOffset(1)).toBe(F1);
  });

  it("safepoints, roots (every type), globals", () => {
    const map = parse(SPEC);
    expect([map.safepointAddress(0, 0), map.safepointAddress(0, 1), map.safepointAddress(1, 0)]).toEqual([0x40_1010, 0x40_1020, 0x40_1130]);
    expect(map.safepointFieldOffset(0, 1)).toBe(F0 + 24 + 8);
    expect(map.safepointAddressLong(1, 0).toNumber()).toBe(0x40_1130);
    expect([map.rootOffsetBytes(0, 0), map.rootType(0, 0), map.rootOffsetBytes(0, 1), map.rootType(0, 1)]).toEqual([0, 3, 8, 1]);
    expect([map.rootOffsetBytes(1, 0), map.rootType(1, 0), map.rootOffsetBytes(1, 1), map.rootType(1, 1)]).toEqual([-24, 2, -32, 0]);
    expect(map.rootFieldOffset(1, 1)).toBe(F1 + 24 + 8 + 8);
    expect(map.numGlobals).toBe(2);
    expect([map.globalAddress(0), map.globalAddress(1)]).toEqual([0x40_4000, 0x40_4008]);
    expect(map.globalFieldOffset(1)).toBe(GLOBALS + 16);
    expect(map.globalAddressLong(1).toNumber()).toBe(0x40_4008);
  });

  it("N = 0: the global count sits at offset 16, after the header's padding (the seed's emitter put it at 12)", () => {
    const empty = parse({ functions: [] });
    expect([empty.numFunctions, empty.numGlobals, empty.sizeBytes]).toEqual([0, 0, 24]);
    const globalsOnly = parse({ functions: [], globals: [0x60_0000] });
    expect([globalsOnly.numGlobals, globalsOnly.globalAddress(0), globalsOnly.sizeBytes]).toEqual([1, 0x60_0000, 32]);
    // The seed's N = 0 bytes: version (i64), N = 0 (i32), then G = 1 at 12 and its global.
    const seed = new Uint8Array(32);
    new DataView(seed.buffer).setUint32(0, 1, true);
    new DataView(seed.buffer).setUint32(12, 1, true);
    const e = catchError(() => PlimmixMap.parse(new ByteView(seed), 0));
    expect(e).toBeInstanceOf(MalformedInputError);
    expect(e).toMatchObject({ offset: 12, found: "0x1", expected: "0x0" });
  });

  it("u64 fields keep all 64 bits: addresses above 2^53 read as NaN numbers and exact Longs", () => {
    const map = parse({
      functions: [{ address: 0xffff_ffff_ffff_fff0n, frameWords: 0, safepoints: [0x8000_0000_0000_0001n], roots: [] }],
      globals: [2n ** 60n],
    });
    expect(map.functionAddress(0)).toBeNaN();
    expect(map.functionAddressLong(0).toString(16)).toBe("fffffffffffffff0");
    expect(map.safepointAddressLong(0, 0).toString(16)).toBe("8000000000000001");
    expect(map.globalAddressLong(0).toString(16)).toBe("1000000000000000");
  });

  it("the blob may be followed by other data in its section; parsePlimmixBlob wants it alone", () => {
    const bytes = encodePlimmix(SPEC);
    const section = new Uint8Array(8 + bytes.length + 40);
    section.set(bytes, 8);
    section.fill(0xcc, 8 + bytes.length);
    const map = PlimmixMap.parse(new ByteView(section, 0x2000), 8);
    expect([map.sizeBytes, map.sectionOffset, map.numGlobals]).toEqual([SIZE, 0x2008, 2]);
    const e = catchError(() => parsePlimmixBlob(section.subarray(8)));
    expect(e).toBeInstanceOf(MalformedInputError);
    expect(e).toMatchObject({ offset: SIZE, found: "40 bytes" });
  });
});

interface ErrorCase {
  what: string;
  bytes: () => Uint8Array;
  error: new (...args: never[]) => Error;
  offset: number;
  found?: unknown;
}

/** One case per validation rule; offsets are from the label (the view starts at it). */
const ERROR_CASES: ErrorCase[] = [
  { what: "header shorter than 16 bytes", bytes: () => encodePlimmix(SPEC).subarray(0, 8), error: TruncatedInputError, offset: 0 },
  { what: "version 0", bytes: () => encodePlimmix({ ...SPEC, version: 0 }), error: MalformedInputError, offset: 0, found: 0 },
  {
    what: "version 2 (a later version: unsupported, not malformed)",
    bytes: () => encodePlimmix({ ...SPEC, version: 2 }),
    error: UnsupportedInputError,
    offset: 0,
    found: 2,
  },
  { what: "version garbage", bytes: () => encodePlimmix({ ...SPEC, version: 0x4889_4855 }), error: MalformedInputError, offset: 0 },
  { what: "high half of the i64 version", bytes: () => encodePlimmix({ ...SPEC, versionHigh: 1 }), error: MalformedInputError, offset: 4, found: "0x1" },
  { what: "negative function count", bytes: () => encodePlimmix({ ...SPEC, numFunctions: -1 }), error: MalformedInputError, offset: 8, found: -1 },
  { what: "header padding", bytes: () => encodePlimmix({ ...SPEC, padding: 7 }), error: MalformedInputError, offset: 12, found: "0x7" },
  { what: "function count beyond the bytes", bytes: () => encodePlimmix({ ...SPEC, numFunctions: 100 }), error: TruncatedInputError, offset: 16 },
  { what: "frame size -2", bytes: () => encodePlimmix(withFunction(1, { frameWords: -2 })), error: MalformedInputError, offset: F1 + 8, found: -2 },
  { what: "frame size of 2^31 bytes", bytes: () => encodePlimmix(withFunction(0, { frameWords: 0x1000_0000 })), error: MalformedInputError, offset: F0 + 8 },
  {
    what: "negative stack argument count",
    bytes: () => encodePlimmix(withFunction(0, { stackArgs: -1 })),
    error: MalformedInputError,
    offset: F0 + 12,
    found: -1,
  },
  { what: "absurd stack argument count", bytes: () => encodePlimmix(withFunction(2, { stackArgs: 0x1_0000 })), error: MalformedInputError, offset: F2 + 12 },
  { what: "negative root count", bytes: () => encodePlimmix(withFunction(0, { numRoots: -1 })), error: MalformedInputError, offset: F0 + 16, found: -1 },
  {
    what: "negative safepoint count",
    bytes: () => encodePlimmix(withFunction(0, { numSafepoints: -5 })),
    error: MalformedInputError,
    offset: F0 + 20,
    found: -5,
  },
  {
    what: "safepoint count beyond the bytes",
    bytes: () => encodePlimmix(withFunction(2, { numSafepoints: 1000 })),
    error: TruncatedInputError,
    offset: F2 + 24,
  },
  {
    what: "root type 4 (the seed's 'anything else')",
    bytes: () =>
      encodePlimmix(
        withFunction(0, {
          roots: [
            { offset: 0, type: 3 },
            { offset: 8, type: 4 },
          ],
        }),
      ),
    error: MalformedInputError,
    offset: F0 + 24 + 16 + 8 + 4,
    found: 4,
  },
  {
    what: "negative root type",
    bytes: () =>
      encodePlimmix(
        withFunction(1, {
          roots: [
            { offset: -24, type: -1 },
            { offset: -32, type: 0 },
          ],
        }),
      ),
    error: MalformedInputError,
    offset: F1 + 24 + 8 + 4,
    found: -1,
  },
  {
    what: "static root beyond the frame",
    bytes: () =>
      encodePlimmix(
        withFunction(0, {
          roots: [
            { offset: 24, type: 3 },
            { offset: 8, type: 1 },
          ],
        }),
      ),
    error: MalformedInputError,
    offset: F0 + 24 + 16,
    found: 24,
  },
  {
    what: "static root below SP",
    bytes: () =>
      encodePlimmix(
        withFunction(0, {
          roots: [
            { offset: 0, type: 3 },
            { offset: -8, type: 1 },
          ],
        }),
      ),
    error: MalformedInputError,
    offset: F0 + 24 + 16 + 8,
    found: -8,
  },
  {
    what: "misaligned static root",
    bytes: () =>
      encodePlimmix(
        withFunction(0, {
          roots: [
            { offset: 4, type: 3 },
            { offset: 8, type: 1 },
          ],
        }),
      ),
    error: MalformedInputError,
    offset: F0 + 24 + 16,
    found: 4,
  },
  {
    what: "a root in a frame of 0 words",
    bytes: () => encodePlimmix(withFunction(2, { frameWords: 0, roots: [{ offset: 0, type: 3 }] })),
    error: MalformedInputError,
    offset: F2 + 24,
    found: 0,
  },
  {
    what: "dynamic-frame root at or above RBP",
    bytes: () =>
      encodePlimmix(
        withFunction(1, {
          roots: [
            { offset: 0, type: 2 },
            { offset: -32, type: 0 },
          ],
        }),
      ),
    error: MalformedInputError,
    offset: F1 + 24 + 8,
    found: 0,
  },
  {
    what: "misaligned dynamic-frame root",
    bytes: () =>
      encodePlimmix(
        withFunction(1, {
          roots: [
            { offset: -24, type: 2 },
            { offset: -36, type: 0 },
          ],
        }),
      ),
    error: MalformedInputError,
    offset: F1 + 24 + 8 + 8,
    found: -36,
  },
  { what: "negative global count", bytes: () => encodePlimmix({ ...SPEC, numGlobals: -1 }), error: MalformedInputError, offset: GLOBALS, found: -1 },
  {
    what: "global count padding",
    bytes: () => encodePlimmix({ ...SPEC, globalsPadding: 0xff }),
    error: MalformedInputError,
    offset: GLOBALS + 4,
    found: "0xff",
  },
  { what: "global count beyond the bytes", bytes: () => encodePlimmix({ ...SPEC, numGlobals: 10 }), error: TruncatedInputError, offset: GLOBALS + 8 },
  { what: "blob cut inside the globals", bytes: () => encodePlimmix(SPEC).subarray(0, SIZE - 1), error: TruncatedInputError, offset: GLOBALS + 8 },
  { what: "blob cut before the global count", bytes: () => encodePlimmix(SPEC).subarray(0, GLOBALS + 4), error: TruncatedInputError, offset: GLOBALS },
];

describe("_GC_MAP_ v1: one typed error per rule, at its exact offset", () => {
  it.each(ERROR_CASES)("$what", ({ bytes, error, offset, found }) => {
    const input = bytes();
    const e = catchError(() => PlimmixMap.parse(new ByteView(input), 0));
    expect(e).toBeInstanceOf(error);
    expect((e as { offset: number }).offset).toBe(offset);
    if (found !== undefined) expect((e as { found: unknown }).found).toBe(found);
    expect((e as Error).message).toMatch(/at offset 0x[0-9a-f]+: found .*, (expected|supported) /);
    // The same offsets, shifted, when the blob sits inside a larger input.
    const shifted = new Uint8Array(input.length + 16);
    shifted.set(input, 16);
    const e2 = catchError(() => PlimmixMap.parse(new ByteView(shifted, 0x1000), 16));
    expect((e2 as { offset: number }).offset).toBe(0x1000 + 16 + offset);
  });

  it("every count error the length walk can see, it reports at the same offset as parse", () => {
    for (const c of ERROR_CASES) {
      const input = c.bytes();
      const parseError = catchError(() => PlimmixMap.parse(new ByteView(input), 0)) as { offset: number };
      const memory = memoryHolding(input, 0x1000);
      let walkError: unknown;
      try {
        plimmixMapLength((a) => memory.readWordBigInt(a), BASE, input.length);
      } catch (e) {
        walkError = e;
      }
      // Root types and offsets are not read by the walk: those blobs have a valid length.
      if (walkError === undefined) {
        expect(c.what).toMatch(/root/);
        continue;
      }
      expect(walkError, c.what).toBeInstanceOf(c.error);
      expect((walkError as { offset: number }).offset, c.what).toBe(parseError.offset);
    }
  });

  it("a label that is not 8-aligned", () => {
    const bytes = new Uint8Array(4 + SIZE);
    bytes.set(encodePlimmix(SPEC), 4);
    const e = catchError(() => PlimmixMap.parse(new ByteView(bytes), 4));
    expect(e).toBeInstanceOf(MalformedInputError);
    expect(e).toMatchObject({ offset: 4, expected: "an offset that is a multiple of 8" });
  });

  it("a failed parse leaves nothing behind: the next blob parses", () => {
    expect(() => parse({ ...SPEC, version: 9 })).toThrow(UnsupportedInputError);
    expect(parse(SPEC).numFunctions).toBe(3);
  });
});

const BASE = 0x7f00_0000_0000;

function memoryHolding(bytes: Uint8Array, sizeBytes: number): SimulatedMemory {
  const memory = new SimulatedMemory(BASE, sizeBytes, { poison: true });
  memory.bytes.set(bytes.subarray(0, sizeBytes));
  return memory;
}

describe("_GC_MAP_ v1: the length of a live blob", () => {
  it("walks only the count words, never past the bound, and gives parse's length", () => {
    const bytes = encodePlimmix(SPEC);
    const memory = memoryHolding(bytes, 0x1000); // poisoned after the blob
    const reads: number[] = [];
    const read = (a: number): bigint => {
      reads.push(a - BASE);
      return memory.readWordBigInt(a);
    };
    expect(plimmixMapLength(read, BASE, 0x1000)).toBe(SIZE);
    // Header words 0 and 8; per function the words at +8 and +16; the global count word.
    expect(reads).toEqual([0, 8, F0 + 8, F0 + 16, F1 + 8, F1 + 16, F2 + 8, F2 + 16, GLOBALS]);
    expect(PlimmixMap.parse(new ByteView(memory.bytes.subarray(0, SIZE)), 0).sizeBytes).toBe(SIZE);
  });

  it("a bound shorter than the blob is a TruncatedInputError, and no read reaches the bound", () => {
    const bytes = encodePlimmix(SPEC);
    const memory = memoryHolding(bytes, 0x1000);
    for (let bound = 0; bound < SIZE; bound++) {
      let highest = -1;
      const read = (a: number): bigint => {
        highest = Math.max(highest, a - BASE + 8);
        return memory.readWordBigInt(a);
      };
      expect(catchError(() => plimmixMapLength(read, BASE, bound))).toBeInstanceOf(TruncatedInputError);
      expect(highest).toBeLessThanOrEqual(bound);
    }
    expect(plimmixMapLength((a) => memory.readWordBigInt(a), BASE, SIZE)).toBe(SIZE);
  });

  it("the reader's own errors pass through (a blob running off mapped memory)", () => {
    const bytes = encodePlimmix(SPEC);
    const memory = memoryHolding(bytes, 64); // only the first 64 bytes are mapped
    const e = catchError(() => plimmixMapLength((a) => memory.readWordBigInt(a), BASE, 4096));
    expect(e).toBeInstanceOf(MemoryAccessError);
  });

  it("rejects a misaligned or null address and a negative bound", () => {
    const read = (): bigint => 0n;
    expect(catchError(() => plimmixMapLength(read, BASE + 4, 64))).toBeInstanceOf(InvalidArgumentError);
    expect(catchError(() => plimmixMapLength(read, 0, 64))).toBeInstanceOf(InvalidArgumentError);
    expect(catchError(() => plimmixMapLength(read, BASE, -1))).toBeInstanceOf(InvalidArgumentError);
  });
});

/** Valid specs: roots inside their frames, safepoints after their function's start. */
const validSpec: fc.Arbitrary<PlimmixSpec> = fc
  .record({
    functions: fc.array(
      fc.record({
        frameWords: fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: 64 })),
        stackArgs: fc.integer({ min: 0, max: 20 }),
        safepointDeltas: fc.array(fc.integer({ min: 1, max: 0xfff }), { maxLength: 6 }),
        roots: fc.array(fc.record({ slot: fc.nat(), type: fc.integer({ min: 0, max: 3 }) }), { maxLength: 6 }),
      }),
      { maxLength: 6 },
    ),
    globals: fc.array(
      fc.integer({ min: 0x60_0000, max: 0x7f_ffff }).map((a) => a * 8),
      { maxLength: 4 },
    ),
  })
  .map(({ functions, globals }) => ({
    functions: functions.map((f, i) => {
      const address = 0x40_0000 + i * 0x1000;
      const roots =
        f.frameWords === -1
          ? f.roots.map((r) => ({ offset: -8 * ((r.slot % 32) + 1), type: r.type }))
          : f.frameWords === 0
            ? []
            : f.roots.map((r) => ({ offset: 8 * (r.slot % f.frameWords), type: r.type }));
      return { address, frameWords: f.frameWords, stackArgs: f.stackArgs, safepoints: f.safepointDeltas.map((d) => address + d), roots };
    }),
    globals,
  }));

describe("_GC_MAP_ v1: properties", () => {
  it("encode then parse gives back every field; the live walk agrees on the length", () => {
    fc.assert(
      fc.property(validSpec, (spec) => {
        const bytes = encodePlimmix(spec);
        const map = PlimmixMap.parse(new ByteView(bytes), 0);
        expect(map.sizeBytes).toBe(bytes.length);
        expect(map.numFunctions).toBe(spec.functions.length);
        spec.functions.forEach((f, i) => {
          expect(map.functionAddress(i)).toBe(f.address);
          expect(map.frameWords(i)).toBe(f.frameWords);
          expect(map.stackArgCount(i)).toBe(f.stackArgs);
          expect(Array.from({ length: map.numSafepointsOf(i) }, (_, s) => map.safepointAddress(i, s))).toEqual(f.safepoints);
          expect(Array.from({ length: map.numRootsOf(i) }, (_, r) => ({ offset: map.rootOffsetBytes(i, r), type: map.rootType(i, r) }))).toEqual(f.roots);
        });
        expect(Array.from({ length: map.numGlobals }, (_, g) => map.globalAddress(g))).toEqual(spec.globals);
        const memory = memoryHolding(bytes, Math.ceil((bytes.length + 64) / 8) * 8);
        expect(plimmixMapLength((a) => memory.readWordBigInt(a), BASE, bytes.length + 64)).toBe(bytes.length);
      }),
      { numRuns: 300 },
    );
  });

  it("every truncation of a valid blob is a TruncatedInputError", () => {
    fc.assert(
      fc.property(validSpec, fc.nat(), (spec, cut) => {
        const bytes = encodePlimmix(spec);
        const length = cut % bytes.length;
        expect(catchError(() => PlimmixMap.parse(new ByteView(bytes.subarray(0, length)), 0))).toBeInstanceOf(TruncatedInputError);
      }),
      { numRuns: 300 },
    );
  });
});
