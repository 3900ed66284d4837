/**
 * Robustness on real `.eh_frame` sections (the shared library and two objects of the corpus):
 * truncated or byte-flipped input makes the parser and the CFI evaluator either succeed or throw
 * a RootwalkError subclass (never RangeError/TypeError), and every run ends quickly. Also LEB128
 * round trips, including padded encodings that take the BigInt path.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { ByteView } from "../../src/bytes/byte-view.js";
import { RootwalkError } from "../../src/errors.js";
import { cfiRowAt, cfiTable } from "../../src/unwind/cfi.js";
import { DwarfCursor } from "../../src/unwind/dwarf-cursor.js";
import { parseEhFrame } from "../../src/unwind/eh-frame.js";
import { corpus, loadEhFrame } from "./support/corpus.js";
import { sleb, uleb } from "./support/eh-frame-builder.js";

/** Runs `fn`; a RootwalkError is an expected outcome, anything else fails the property. */
function expectOnlyRootwalkErrors(fn: () => void): void {
  try {
    fn();
  } catch (error) {
    if (!(error instanceof RootwalkError)) throw error;
  }
}

/** Parses and exercises everything reachable from `bytes`; returns how long it took. */
function exercise(bytes: Uint8Array, sectionAddress: number): number {
  const start = performance.now();
  expectOnlyRootwalkErrors(() => {
    const frame = parseEhFrame(bytes, { sectionAddress });
    for (const fde of frame.fdes) {
      expectOnlyRootwalkErrors(() => cfiTable(fde));
      expectOnlyRootwalkErrors(() => cfiRowAt(fde, fde.pcBegin + Math.floor(fde.pcRange / 2)));
      expectOnlyRootwalkErrors(() => frame.findFde(fde.pcBegin));
    }
  });
  return performance.now() - start;
}

const INPUTS = [
  { name: "shared library", build: corpus.sharedLibrary },
  { name: "g++ object", build: corpus.cxxObject },
  { name: "llc object", build: corpus.llvmObject },
];

describe.each(INPUTS)("fuzzed .eh_frame of the $name", ({ build }) => {
  let bytes: Uint8Array;
  let sectionAddress: number;
  beforeAll(() => {
    const loaded = loadEhFrame(build());
    bytes = loaded.ehFrameBytes.slice();
    sectionAddress = loaded.sectionAddress;
  });

  it("the unmodified section parses and evaluates without error", () => {
    // (Some FDEs use DWARF expressions, e.g. the PLT's; those rows are UnsupportedInputError.)
    expect(exercise(bytes, sectionAddress)).toBeLessThan(1000);
  });

  it("any truncation: only RootwalkErrors, always terminates", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: bytes.length }), (length) => {
        expect(exercise(bytes.subarray(0, length), sectionAddress)).toBeLessThan(1000);
      }),
      { numRuns: 300 },
    );
  });

  it("any byte flips: only RootwalkErrors, always terminates", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ index: fc.nat(bytes.length - 1), value: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 8 }),
        (flips) => {
          const mutated = bytes.slice();
          for (const { index, value } of flips) mutated[index] = value;
          expect(exercise(mutated, sectionAddress)).toBeLessThan(1000);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("flips in the CFI of one FDE: only RootwalkErrors", () => {
    const frame = parseEhFrame(bytes, { sectionAddress });
    const windows = frame.fdes.map((f) => f.instructions).filter((w) => w.lengthBytes > 0);
    fc.assert(
      fc.property(
        fc.nat(windows.length - 1),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }),
        (which, flips) => {
          const window = windows[which]!;
          const mutated = bytes.slice();
          for (const [at, value] of flips) mutated[window.baseOffset + (at % window.lengthBytes)] = value;
          expect(exercise(mutated, sectionAddress)).toBeLessThan(1000);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("LEB128", () => {
  const padded = (encoded: number[], extra: number, signExtension: number): number[] => [
    ...encoded.slice(0, -1),
    encoded[encoded.length - 1]! | 0x80,
    ...Array<number>(extra).fill(signExtension | 0x80),
    signExtension,
  ];

  it("round-trips unsigned values, minimal and padded", () => {
    fc.assert(
      fc.property(fc.maxSafeNat(), fc.integer({ min: 0, max: 12 }), (value, extra) => {
        for (const bytes of [uleb(value), padded(uleb(value), extra, 0)]) {
          const cursor = new DwarfCursor(new ByteView(Uint8Array.from(bytes)));
          expect(cursor.uleb128("v")).toBe(value);
          expect(cursor.atEnd).toBe(true);
        }
      }),
    );
  });

  it("round-trips signed values, minimal and padded", () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), fc.integer({ min: 0, max: 12 }), (value, extra) => {
        for (const bytes of [sleb(value), padded(sleb(value), extra, value < 0 ? 0x7f : 0)]) {
          const cursor = new DwarfCursor(new ByteView(Uint8Array.from(bytes)));
          expect(cursor.sleb128("v")).toBe(value);
          expect(cursor.atEnd).toBe(true);
        }
      }),
    );
  });
});
