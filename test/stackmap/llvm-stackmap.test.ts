import { describe, expect, it } from "vitest";
import { MalformedInputError, RootwalkError, TruncatedInputError } from "../../src/errors.js";
import { buildLlvmDescriptors } from "../../src/loader/llvm-map-loader.js";
import { FLAG_NO_UNWIND_INFO, FLAG_STATEPOINT } from "../../src/safepoints/frame-descriptors.js";
import { LocationView, parseStackMapSection } from "../../src/stackmap/llvm-stackmap.js";
import { LOCATION_KIND_NAMES, LocationKind } from "../../src/location/location-word.js";
import * as V3 from "../../src/stackmap/stackmap-v3-layout.js";
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
