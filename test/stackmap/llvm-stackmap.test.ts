import { describe, expect, it } from "vitest";
import { InvalidArgumentError, MalformedInputError, RootwalkError, TruncatedInputError } from "../../src/errors.js";
import { buildLlvmDescriptors } from "../../src/loader/llvm-map-loader.js";
import { FLAG_NO_UNWIND_INFO, FLAG_STATEPOINT } from "../../src/safepoints/frame-descriptors.js";
import { LocationView, StackMapBlob, indexStackMapSection, parseStackMapSection } from "../../src/stackmap/llvm-stackmap.js";
import { LOCATION_KIND_NAMES, LocationKind } from "../../src/location/location-word.js";
import * as V3 from "../../src/stackmap/stackmap-v3-layout.js";
import { ByteView } from "../../src/bytes/byte-view.js";
import { catchError } from "../support/catch-error.js";
import { formatBlobLikeReadobj } from "../../src/stackmap/readobj-format.js";
import { decodeStatepoint } from "../../src/stackmap/statepoint.js";
import { concatBytes, encodeBlob, statepointRecord } from "./stackmap-encoder.js";

const indirect = (offset: number) => ({ kind: 3 as const, reg: 7, offset });

describe("StackMap v3 decoder", () => {
  it("reads every field of a blob, with the padding rules for odd and even location counts", () => {
    const bytes = encodeBlob({
      functions: [
        { address: 0x1000n, stackSize: 24n, records: [{ id: 1n, instructionOffset: 5, locations: [indirect(8)], liveOuts: [{ reg: 17, size: 32 }] }] },
        {
          address: 0x2000n,
          stackSize: 0xffffffffffffffffn,
          records: [{ id: 0xffffffffffffffffn, instructionOffset: 9, locations: [indirect(8), { kind: 5, offset: 0 }] }],
        },
      ],
      constants: [0x8000000000000000n],
    });
    const [blob] = parseStackMapSection(bytes);
    expect(blob!.numFunctions).toBe(2);
    expect(blob!.hasDynamicFrame(1)).toBe(true);
    expect(blob!.stackSizeLong(1).toString()).toBe("18446744073709551615");
    expect(blob!.recordIdLong(1).toString()).toBe("18446744073709551615");
    expect(blob!.numLiveOuts(0)).toBe(1);
    expect(blob!.liveOutSizeBytes(0, 0)).toBe(32);
    expect(blob!.location(1, 1, new LocationView()).constantIndex).toBe(0);
    expect(blob!.constantLong(0).toString()).toBe("9223372036854775808");
    expect(formatBlobLikeReadobj(blob!)).toContain("ConstantIndex #0 (9223372036854775808), size: 8");
    expect(formatBlobLikeReadobj(blob!)).toContain("1 live-outs: [ R#17 (32-bytes) ]");
  });

  it("finds every blob of a section where linking concatenated several", () => {
    const a = encodeBlob({ functions: [{ address: 0x10n, stackSize: 8n, records: [{ id: 1n, instructionOffset: 1, locations: [] }] }] });
    const b = encodeBlob({ functions: [{ address: 0x20n, stackSize: 8n, records: [{ id: 2n, instructionOffset: 2, locations: [indirect(0)] }] }] });
    const c = encodeBlob({ functions: [] });
    const blobs = parseStackMapSection(concatBytes(a, b, c));
    expect(blobs.map((x) => x.sectionOffset)).toEqual([0, a.length, a.length + b.length]);
    expect(blobs[1]!.instructionOffset(0)).toBe(2);
  });

  it("names the offset, the value found and the value expected", () => {
    const good = encodeBlob({ functions: [{ address: 0x10n, stackSize: 8n, records: [{ id: 1n, instructionOffset: 1, locations: [indirect(0)] }] }] });
    const badKind = good.slice();
    badKind[16 + 24 + 16] = 9; // the first location's kind
    expect(() => parseStackMapSection(badKind, 0x400)).toThrow(
      new MalformedInputError("kind of location #1 of record #0", 0x400 + 56, 9, "1..5 (Register, Direct, Indirect, Constant, ConstantIndex)"),
    );
    expect(() => parseStackMapSection(good.subarray(0, good.length - 4))).toThrow(TruncatedInputError);
    const trailing = concatBytes(good, new Uint8Array(8));
    expect(() => parseStackMapSection(trailing)).toThrow(
      /data after stack map blob #0 at offset 0x50: found 8 bytes starting with 0x0, expected the end of the section/,
    );
    const badCount = good.slice();
    badCount[16 + 16] = 2; // RecordCount of function 0 = 2 > NumRecords
    expect(() => parseStackMapSection(badCount)).toThrow(/record count of function #0 at offset 0x20: found 2/);
  });

  it("rejects a record count too large for the bytes before allocating for it", () => {
    const bytes = encodeBlob({ functions: [] });
    new DataView(bytes.buffer).setUint32(12, 0xffffffff, true);
    expect(() => parseStackMapSection(bytes)).toThrow(TruncatedInputError);
  });
});

describe("statepoints", () => {
  it("splits deopt values, pairs and trailing allocas by shape", () => {
    const rec = statepointRecord(
      0x20,
      [{ kind: 4, offset: 1 }, indirect(40)],
      [
        [indirect(8), indirect(8)],
        [indirect(8), indirect(16)],
      ],
      [{ kind: 2, reg: 7, offset: 24 }],
      77n, // not a default ID: recognised by shape
    );
    const [blob] = parseStackMapSection(encodeBlob({ functions: [{ address: 0x1000n, stackSize: 48n, records: [rec] }] }));
    expect(decodeStatepoint(blob!, 0)).toEqual({
      callingConvention: 0,
      flags: 0,
      deoptStart: 3,
      deoptCount: 2,
      pairsStart: 5,
      pairCount: 2,
      allocasStart: 9,
      allocaCount: 1,
    });
    const d = buildLlvmDescriptors([blob!]);
    expect(d.returnAddress[0]).toBe(0x1020);
    expect(d.flags[0]! & FLAG_STATEPOINT).toBe(FLAG_STATEPOINT);
    expect(d.flags[0]! & FLAG_NO_UNWIND_INFO).toBe(FLAG_NO_UNWIND_INFO);
    expect(d.frameSizeBytes[0]).toBe(48);
    expect(d.pairCount[0]).toBe(2);
    expect(d.deoptCount[0]).toBe(2);
    expect(d.allocaCount[0]).toBe(1);
  });

  it("a record with a default statepoint ID but not the shape is malformed", () => {
    const rec = { id: 0xabcdef00n, instructionOffset: 4, locations: [indirect(0), { kind: 4 as const }, { kind: 4 as const }] };
    const [blob] = parseStackMapSection(encodeBlob({ functions: [{ address: 0n, stackSize: 8n, records: [rec] }] }));
    expect(() => decodeStatepoint(blob!, 0)).toThrow(MalformedInputError);
    expect(() => buildLlvmDescriptors([blob!])).toThrow(RootwalkError);
  });

  it("a plain stackmap record is not a statepoint: each location is its own root", () => {
    const rec = { id: 5n, instructionOffset: 4, locations: [indirect(0), { kind: 1 as const, reg: 3 }] };
    const [blob] = parseStackMapSection(encodeBlob({ functions: [{ address: 0n, stackSize: 8n, records: [rec] }] }));
    expect(decodeStatepoint(blob!, 0)).toBeUndefined();
    const d = buildLlvmDescriptors([blob!]);
    expect(d.pairCount[0]).toBe(2);
    expect(Array.from(d.pairs)).toEqual([0, 0, 1, 1]);
  });
});

describe("the location vocabulary (src/location/location-word.ts)", () => {
  it("numbers its kinds as StackMap v3 does (the scan kernel reads stackmap-v3-layout.ts's numbers)", () => {
    expect([LocationKind.Register, LocationKind.Direct, LocationKind.Indirect, LocationKind.Constant, LocationKind.ConstantIndex]).toEqual([
      V3.LOCATION_KIND_REGISTER,
      V3.LOCATION_KIND_DIRECT,
      V3.LOCATION_KIND_INDIRECT,
      V3.LOCATION_KIND_CONSTANT,
      V3.LOCATION_KIND_CONSTANT_INDEX,
    ]);
    for (const [kind, name] of Object.entries(LOCATION_KIND_NAMES))
      expect(Number(kind)).toBe(V3[`LOCATION_KIND_${name.replace("ConstantIndex", "CONSTANT_INDEX").toUpperCase()}` as keyof typeof V3]);
  });
});

describe("a range of records (indexStackMapSection, StackMapBlob.parseRecords)", () => {
  // Two blobs; functions without records at the start, between and at the end; odd and even location counts.
  const record = (k: number, locations: number) => ({
    id: BigInt(k),
    instructionOffset: 4 * k + 1,
    locations: Array.from({ length: locations }, (_, i) => indirect(8 * i)),
  });
  const section = concatBytes(
    encodeBlob({
      functions: [
        { address: 0x100n, stackSize: 8n, records: [] },
        { address: 0x200n, stackSize: 32n, records: [record(1, 1), record(2, 2), record(3, 0)] },
        { address: 0x300n, stackSize: 16n, records: [] },
        { address: 0x400n, stackSize: 64n, records: [record(4, 3), record(5, 4)] },
        { address: 0x500n, stackSize: 8n, records: [] },
      ],
      constants: [7n],
    }),
    encodeBlob({ functions: [{ address: 0x600n, stackSize: 8n, records: [record(6, 2), record(7, 5), record(8, 1)] }] }),
  );
  const whole = parseStackMapSection(section);

  it("indexes every blob as parse does, and decodes every range [first, end) to parse's values", () => {
    const index = indexStackMapSection(section);
    expect(index.map((b) => [b.offset, b.sizeBytes, b.numFunctions, b.numRecords])).toEqual(
      whole.map((b) => [b.sectionOffset, b.sizeBytes, b.numFunctions, b.numRecords]),
    );
    index.forEach((blobIndex, b) => {
      const full = whole[b]!;
      for (let first = 0; first <= full.numRecords; first++) {
        for (let end = first; end <= full.numRecords; end++) {
          const part = StackMapBlob.parseRecords(new ByteView(section), blobIndex, first, end);
          expect([part.firstDecodedRecord, part.endDecodedRecord]).toEqual([first, end]);
          expectSameRecords(full, part, first, end);
          expectSameRows(whole, part, b, first, end);
        }
      }
    });
  });

  it("checks the records it decodes with parse's error, and only those", () => {
    const bad = section.slice();
    const at = whole[0]!.recordOffset(3) + V3.RECORD_RESERVED;
    bad[at] = 1;
    const expected = catchError(() => parseStackMapSection(bad)) as MalformedInputError;
    expect(expected).toBeInstanceOf(MalformedInputError);
    const [blobIndex] = indexStackMapSection(bad);
    expect((catchError(() => StackMapBlob.parseRecords(new ByteView(bad), blobIndex!, 2, 5)) as Error).message).toBe(expected.message);
    expect(StackMapBlob.parseRecords(new ByteView(bad), blobIndex!, 0, 3).endDecodedRecord).toBe(3);
    expect(catchError(() => StackMapBlob.parseRecords(new ByteView(bad), blobIndex!, 4, 6))).toBeInstanceOf(InvalidArgumentError);
    expect(catchError(() => indexStackMapSection(section.subarray(0, section.length - 8)))).toBeInstanceOf(TruncatedInputError);
  });
});

/** Records [first, end) of `part` read as `full` reads them: offsets, functions, locations. */
function expectSameRecords(full: StackMapBlob, part: StackMapBlob, first: number, end: number): void {
  const words = full.locationWords.subarray(2 * full.firstLocation(first), 2 * (end < full.numRecords ? full.firstLocation(end) : full.totalLocations));
  expect(Array.from(part.locationWords)).toEqual(Array.from(words));
  for (let r = first; r < end; r++) {
    expect([part.recordOffset(r), part.functionOfRecord(r), part.instructionOffset(r), part.numLocations(r)]).toEqual([
      full.recordOffset(r),
      full.functionOfRecord(r),
      full.instructionOffset(r),
      full.numLocations(r),
    ]);
  }
}

/** Lowered, records [first, end) of blob `b` are the whole section's rows (functions and blobs numbered as the section's when told them). */
function expectSameRows(whole: StackMapBlob[], part: StackMapBlob, b: number, first: number, end: number): void {
  const all = buildLlvmDescriptors(whole);
  const firstFunctionOfBlob = [0, whole[0]!.numFunctions];
  const d = buildLlvmDescriptors([part], { sectionFunctions: { functions: all.functions, firstFunctionOfBlob, firstBlob: b } });
  const offset = b === 0 ? 0 : whole[0]!.numRecords;
  expect(d.count).toBe(end - first);
  expect(d.functions).toBe(all.functions);
  for (let i = 0; i < d.count; i++) {
    const j = offset + first + i;
    expect([d.returnAddress[i], d.functionIndex[i], d.blobIndex[i], d.recordIndex[i], d.pairCount[i]]).toEqual([
      all.returnAddress[j],
      all.functionIndex[j],
      all.blobIndex[j],
      all.recordIndex[j],
      all.pairCount[j],
    ]);
  }
}
