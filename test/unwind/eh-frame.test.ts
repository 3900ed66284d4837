import { catchError } from "../support/catch-error.js";
/**
 * `.eh_frame` record parsing on hand-assembled sections: one case per rule of the layout in
 * src/unwind/eh-frame.ts, and one per way it can be broken. (Real compiler output is compared
 * with llvm-dwarfdump in cfi-corpus.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { InvalidArgumentError, MalformedInputError, TruncatedInputError, UnsupportedInputError } from "../../src/errors.js";
import { parseEhFrame } from "../../src/unwind/eh-frame.js";
import { EhFrameBuilder, i64, sleb, u16, u32, u64, uleb } from "./support/eh-frame-builder.js";

const SECTION_ADDRESS = 0x40_0000;

describe("records", () => {
  it("parses a CIE and its FDEs, stops at the zero terminator and ignores what follows", () => {
    const b = new EhFrameBuilder();
    const cie = b.cie();
    const fde1 = b.pcrelFde(cie, SECTION_ADDRESS, 0x1000, 0x20, [0x41, 0x0e, 0x10]);
    const fde2 = b.pcrelFde(cie, SECTION_ADDRESS, 0x1020, 0x10);
    const terminator = b.offset;
    b.terminator().raw([0xde, 0xad]); // garbage after the terminator is never read
    const frame = parseEhFrame(b.build(), { sectionAddress: SECTION_ADDRESS });

    expect(frame.cies).toHaveLength(1);
    expect(frame.cies[0]).toMatchObject({
      offset: cie,
      version: 1,
      augmentation: "zR",
      codeAlignmentFactor: 1,
      dataAlignmentFactor: -8,
      returnAddressRegister: 16,
      fdePointerEncoding: 0x1b,
      lsdaEncoding: 0xff,
      personality: undefined,
      isSignalFrame: false,
    });
    expect(frame.fdes.map((f) => [f.offset, f.pcBegin, f.pcRange, f.cie.offset])).toEqual([
      [fde1, 0x1000, 0x20, cie],
      [fde2, 0x1020, 0x10, cie],
    ]);
    expect(frame.terminatorOffset).toBe(terminator);
  });

  it("keeps instructions as zero-copy windows that know their section offset", () => {
    const b = new EhFrameBuilder();
    const cie = b.cie();
    const fde = b.pcrelFde(cie, 0, 0x10, 4, [0x41, 0x0e, 0x10]);
    const bytes = b.build();
    const parsed = parseEhFrame(bytes, { sectionAddress: 0 }).fdes[0]!;
    expect(parsed.instructions.bytes.buffer).toBe(bytes.buffer);
    expect(parsed.instructions.baseOffset).toBe(fde + 4 + 4 + 4 + 4 + 1); // length, CIE ptr, pc_begin, pc_range, aug len
    expect([...parsed.instructions.bytes]).toEqual([0x41, 0x0e, 0x10]);
    expect([...parsed.cie.initialInstructions.bytes]).toEqual([0x0c, 0x07, 0x08, 0x90, 0x01]);
  });

  it("accepts a section without a terminator (relocatable objects)", () => {
    const b = new EhFrameBuilder();
    b.pcrelFde(b.cie(), 0, 0, 1);
    expect(parseEhFrame(b.build(), { sectionAddress: 0 }).terminatorOffset).toBeUndefined();
  });

  it("resolves pc_begin through the caller's callback for relocatable objects", () => {
    const b = new EhFrameBuilder();
    const cie = b.cie();
    const fde = b.fde(cie, [...u32(0), ...u32(0x30), 0]); // unrelocated: 0
    const calls: [number, number][] = [];
    const frame = parseEhFrame(b.build(), {
      sectionAddress: 0,
      resolvePcBegin: (fieldOffset, decoded) => {
        calls.push([fieldOffset, decoded]);
        return 0x140;
      },
    });
    // pcrel: the decoded value is the field's own address (0 + its offset) + 0.
    expect(calls).toEqual([[fde + 8, fde + 8]]);
    expect(frame.fdes[0]!.pcBegin).toBe(0x140);
  });

  it("reads version 3 CIEs (uleb return address register)", () => {
    const b = new EhFrameBuilder();
    b.cie({ version: 3, returnAddressRegister: 130 });
    expect(parseEhFrame(b.build(), { sectionAddress: 0 }).cies[0]!.returnAddressRegister).toBe(130);
  });

  it("reads an AArch64-style CIE (code alignment 4, return address x30)", () => {
    const b = new EhFrameBuilder();
    b.cie({ codeAlignmentFactor: 4, dataAlignmentFactor: -8, returnAddressRegister: 30, instructions: [0x0c, 31, 0] });
    expect(parseEhFrame(b.build(), { sectionAddress: 0 }).cies[0]).toMatchObject({ codeAlignmentFactor: 4, returnAddressRegister: 30 });
  });
});

describe("augmentations", () => {
  it('"" : absptr pc_begin, no augmentation data in FDEs', () => {
    const b = new EhFrameBuilder();
    const cie = b.cie({ augmentation: "" });
    b.fde(cie, [...u64(0x401000), ...u64(0x20)], [0x41]);
    const fde = parseEhFrame(b.build(), { sectionAddress: 0 }).fdes[0]!;
    expect([fde.pcBegin, fde.pcRange, fde.cie.fdePointerEncoding, fde.cie.hasAugmentationData]).toEqual([0x401000, 0x20, 0, false]);
    expect([...fde.instructions.bytes]).toEqual([0x41]);
  });

  it('"z": augmentation data present but empty; FDE data skipped by its length', () => {
    const b = new EhFrameBuilder();
    const cie = b.cie({ augmentation: "z", augmentationData: [] });
    b.fde(cie, [...u64(0x2000), ...u64(8), 3, 0xaa, 0xbb, 0xcc], [0x41]);
    const fde = parseEhFrame(b.build(), { sectionAddress: 0 }).fdes[0]!;
    expect([fde.pcBegin, fde.pcRange, fde.lsda]).toEqual([0x2000, 8, undefined]);
    expect([...fde.instructions.bytes]).toEqual([0x41]);
  });

  it('"zPLR": indirect pcrel personality, pcrel LSDA', () => {
    const b = new EhFrameBuilder();
    // P: 0x9b (indirect|pcrel|sdata4) + value; L: 0x1b; R: 0x1b. Personality field at CIE+4+4+1+5+1+1+1+1+1.
    const cie = b.cie({ augmentation: "zPLR", augmentationData: [0x9b, ...u32(0x100), 0x1b, 0x1b] });
    const personalityField = cie + 4 + 4 + 1 + 5 + 1 + 1 + 1 + 1 + 1;
    const fdeStart = b.offset;
    const lsdaField = fdeStart + 4 + 4 + 4 + 4 + 1;
    b.fde(cie, [...u32(0x10), ...u32(0x20), 4, ...u32(0x40)]);
    const frame = parseEhFrame(b.build(), { sectionAddress: SECTION_ADDRESS });
    expect(frame.cies[0]!.personality).toEqual({ encoding: 0x9b, address: SECTION_ADDRESS + personalityField + 0x100, indirect: true });
    expect(frame.fdes[0]!.lsda).toEqual({ encoding: 0x1b, address: SECTION_ADDRESS + lsdaField + 0x40, indirect: false });
    expect(frame.fdes[0]!.pcBegin).toBe(SECTION_ADDRESS + fdeStart + 8 + 0x10);
  });

  it('"zPR" and "zLR" with an omitted LSDA encoding', () => {
    const b = new EhFrameBuilder();
    const zpr = b.cie({ augmentation: "zPR", augmentationData: [0x00, ...u64(0x1234), 0x1b] });
    const zlr = b.cie({ augmentation: "zLR", augmentationData: [0xff, 0x1b] });
    b.pcrelFde(zpr, 0, 0x100, 1);
    b.pcrelFde(zlr, 0, 0x200, 1);
    const frame = parseEhFrame(b.build(), { sectionAddress: 0 });
    expect(frame.cies[0]!.personality).toEqual({ encoding: 0, address: 0x1234, indirect: false });
    expect(frame.cies[1]!.lsdaEncoding).toBe(0xff);
    expect(frame.fdes.map((f) => [f.pcBegin, f.lsda])).toEqual([
      [0x100, undefined],
      [0x200, undefined],
    ]);
  });

  it('"zRS" marks signal frames', () => {
    const b = new EhFrameBuilder();
    b.cie({ augmentation: "zRS" });
    expect(parseEhFrame(b.build(), { sectionAddress: 0 }).cies[0]!.isSignalFrame).toBe(true);
  });

  it.each([
    ["eh", "the pre-'z' GCC form"],
    ["zX", "an unknown letter"],
    ["zRR", "a repeated letter"],
    ["R", "letters without 'z'"],
  ])("rejects %j (%s) as unsupported, naming the string's offset", (augmentation) => {
    const b = new EhFrameBuilder();
    b.cie({ augmentation });
    const error = catchError(() => parseEhFrame(b.build(), { sectionAddress: 0 }));
    expect(error).toBeInstanceOf(UnsupportedInputError);
    expect(error).toMatchObject({ what: "CIE augmentation", offset: 9, found: JSON.stringify(augmentation) });
  });
});

describe("pointer encodings of pc_begin / pc_range", () => {
  // [encoding, pc_begin bytes, pc_range bytes, expected pc_begin given the field's address]
  const cases: [string, number, number[], number[], (fieldAddress: number) => number][] = [
    ["absptr", 0x00, u64(0x401000), u64(0x10), () => 0x401000],
    ["udata2", 0x02, u16(0x1234), u16(0x10), () => 0x1234],
    ["udata4", 0x03, u32(0x401000), u32(0x10), () => 0x401000],
    ["udata8", 0x04, u64(0x7fff_0000_1000), u64(0x10), () => 0x7fff_0000_1000],
    ["uleb128", 0x01, uleb(0x401000), uleb(0x10), () => 0x401000],
    ["sleb128", 0x09, sleb(0x401000), sleb(0x10), () => 0x401000],
    ["sdata2", 0x0a, u16(0x7ff0), u16(0x10), () => 0x7ff0],
    ["sdata4", 0x0b, u32(0x401000), u32(0x10), () => 0x401000],
    ["sdata8", 0x0c, i64(0x401000), i64(0x10), () => 0x401000],
    ["pcrel|sdata4 (negative)", 0x1b, u32(-0x100 >>> 0), u32(0x10), (f) => f - 0x100],
    ["pcrel|sdata2", 0x1a, u16(0xfff0), u16(0x10), (f) => f - 0x10],
    ["pcrel|sdata8", 0x1c, i64(-0x20), i64(0x10), (f) => f - 0x20],
    ["pcrel|udata4", 0x13, u32(0x30), u32(0x10), (f) => f + 0x30],
    ["pcrel|sleb128", 0x19, sleb(-0x40), sleb(0x10), (f) => f - 0x40],
  ];
  it.each(cases)("%s", (_name, encoding, pcBegin, pcRange, expected) => {
    const b = new EhFrameBuilder();
    const cie = b.cie({ augmentationData: [encoding] });
    const fieldAddress = SECTION_ADDRESS + b.offset + 8;
    b.fde(cie, [...pcBegin, ...pcRange, 0]);
    const fde = parseEhFrame(b.build(), { sectionAddress: SECTION_ADDRESS }).fdes[0]!;
    expect([fde.pcBegin, fde.pcRange]).toEqual([expected(fieldAddress), 0x10]);
  });

  it.each([
    [0x3b, "datarel", UnsupportedInputError],
    [0x2b, "textrel", UnsupportedInputError],
    [0x4b, "funcrel", UnsupportedInputError],
    [0x5b, "aligned", UnsupportedInputError],
    [0x05, "value format 5", MalformedInputError],
    [0x9b, "indirect pc_begin", MalformedInputError],
    [0xff, "omitted pc_begin", MalformedInputError],
  ])("rejects FDE encoding %i (%s) at the CIE's 'R' byte", (encoding, _name, errorClass) => {
    const b = new EhFrameBuilder();
    const cie = b.cie({ augmentationData: [encoding] });
    b.fde(cie, [...u32(0), ...u32(1), 0]);
    const error = catchError(() => parseEhFrame(b.build(), { sectionAddress: 0 }));
    expect(error).toBeInstanceOf(errorClass);
    expect((error as MalformedInputError).offset).toBe(cie + 4 + 4 + 1 + 3 + 1 + 1 + 1 + 1); // the 'R' byte
  });

  it("rejects a pc_begin that resolves below address 0", () => {
    const b = new EhFrameBuilder();
    const cie = b.cie();
    const fde = b.fde(cie, [...u32(-0x1000 >>> 0), ...u32(1), 0]);
    expect(catchError(() => parseEhFrame(b.build(), { sectionAddress: 0 }))).toMatchObject({
      constructor: MalformedInputError,
      what: "FDE pc_begin",
      offset: fde + 8,
    });
  });
});

describe("malformed and unsupported sections", () => {
  it("64-bit DWARF length (0xffffffff) is unsupported", () => {
    const b = new EhFrameBuilder();
    b.cie();
    const at = b.offset;
    b.raw([...u32(0xffffffff), ...u64(12), ...u64(0)]);
    expect(catchError(() => parseEhFrame(b.build(), { sectionAddress: 0 }))).toMatchObject({
      constructor: UnsupportedInputError,
      what: "eh_frame record length",
      offset: at,
      found: "0xffffffff",
    });
  });

  it("a record longer than the section is truncated input", () => {
    const b = new EhFrameBuilder();
    b.raw([...u32(0x100), ...u32(0)]);
    expect(catchError(() => parseEhFrame(b.build(), { sectionAddress: 0 }))).toMatchObject({
      constructor: TruncatedInputError,
      offset: 4,
      neededBytes: 0x100,
      availableBytes: 4,
    });
  });

  it("one to three trailing bytes are a truncated length", () => {
    const b = new EhFrameBuilder();
    b.cie();
    const at = b.offset;
    b.raw([1, 2]);
    expect(catchError(() => parseEhFrame(b.build(), { sectionAddress: 0 }))).toMatchObject({
      constructor: TruncatedInputError,
      offset: at,
      neededBytes: 4,
      availableBytes: 2,
    });
  });

  it("a CIE pointer that does not lead back to a CIE is malformed", () => {
    const b = new EhFrameBuilder();
    b.cie();
    const fde = b.offset;
    b.fde(fde + 4 - 0x1000 /* points before the section */, [...u32(0), ...u32(1), 0]);
    expect(catchError(() => parseEhFrame(b.build(), { sectionAddress: 0 }))).toMatchObject({
      constructor: MalformedInputError,
      what: "FDE CIE pointer",
      offset: fde + 4,
    });
  });

  it("an FDE may not point at another FDE", () => {
    const b = new EhFrameBuilder();
    const cie = b.cie();
    const first = b.pcrelFde(cie, 0, 0, 1);
    b.fde(first, [...u32(0), ...u32(1), 0]);
    expect(catchError(() => parseEhFrame(b.build(), { sectionAddress: 0 }))).toBeInstanceOf(MalformedInputError);
  });

  it.each([0, 2, 4])("CIE version %i is unsupported", (version) => {
    const b = new EhFrameBuilder();
    b.cie({ version });
    expect(catchError(() => parseEhFrame(b.build(), { sectionAddress: 0 }))).toMatchObject({
      constructor: UnsupportedInputError,
      what: "CIE version",
      offset: 8,
      found: version,
    });
  });

  it("an augmentation string without NUL is truncated", () => {
    const b = new EhFrameBuilder();
    b.raw([...u32(7), ...u32(0), 1, 0x7a, 0x52]);
    expect(catchError(() => parseEhFrame(b.build(), { sectionAddress: 0 }))).toBeInstanceOf(TruncatedInputError);
  });

  it("CIE augmentation data shorter than its entries is malformed", () => {
    const b = new EhFrameBuilder();
    b.cie({ augmentation: "zPR", augmentationData: [0x00, ...u64(0), 0x1b], augmentationDataLength: 2 });
    expect(catchError(() => parseEhFrame(b.build(), { sectionAddress: 0 }))).toMatchObject({
      constructor: MalformedInputError,
      what: "CIE augmentation data length",
    });
  });

  it("FDE augmentation data shorter than the LSDA pointer is malformed", () => {
    const b = new EhFrameBuilder();
    const cie = b.cie({ augmentation: "zLR", augmentationData: [0x1b, 0x1b] });
    b.fde(cie, [...u32(0), ...u32(1), 2, ...u32(0)]);
    expect(catchError(() => parseEhFrame(b.build(), { sectionAddress: 0 }))).toMatchObject({
      constructor: MalformedInputError,
      what: "FDE augmentation data length",
    });
  });

  it("a LEB128 value above 2^53 is malformed; padded LEB128 is fine", () => {
    const b = new EhFrameBuilder();
    b.raw([...u32(21), ...u32(0), 1, 0x7a, 0x52, 0, ...[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f], 0x78, 0x10, 1, 0x1b]);
    expect(catchError(() => parseEhFrame(b.build(), { sectionAddress: 0 }))).toMatchObject({ constructor: MalformedInputError, offset: 12 });
    const padded = new EhFrameBuilder();
    // caf = 1 in 10 bytes, daf = -8 in 9 bytes (the BigInt path of the LEB128 reader).
    padded.raw([
      ...u32(30),
      ...u32(0),
      1,
      0x7a,
      0x52,
      0,
      ...[0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00],
      ...[0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],
      0x10,
      1,
      0x1b,
    ]);
    expect(parseEhFrame(padded.build(), { sectionAddress: 0 }).cies[0]).toMatchObject({ codeAlignmentFactor: 1, dataAlignmentFactor: -8 });
  });

  it("rejects a sectionAddress that is not a non-negative safe integer", () => {
    expect(() => parseEhFrame(new Uint8Array(0), { sectionAddress: -1 })).toThrow(InvalidArgumentError);
    expect(() => parseEhFrame(new Uint8Array(0), { sectionAddress: 0.5 })).toThrow(InvalidArgumentError);
  });

  it("rejects a resolvePcBegin result that is not an address", () => {
    const b = new EhFrameBuilder();
    b.pcrelFde(b.cie(), 0, 0, 1);
    expect(() => parseEhFrame(b.build(), { sectionAddress: 0, resolvePcBegin: () => Number.NaN })).toThrow(InvalidArgumentError);
  });
});

describe("findFde", () => {
  function frameWith(ranges: [number, number][]) {
    const b = new EhFrameBuilder();
    const cie = b.cie();
    for (const [begin, range] of ranges) b.pcrelFde(cie, SECTION_ADDRESS, begin, range);
    return parseEhFrame(b.build(), { sectionAddress: SECTION_ADDRESS });
  }

  it("finds by binary search over unsorted FDEs, with gaps", () => {
    const frame = frameWith([
      [0x3000, 0x100],
      [0x1000, 0x100],
      [0x2000, 0x80],
    ]);
    const find = (a: number) => frame.findFde(a)?.pcBegin;
    expect([find(0xfff), find(0x1000), find(0x10ff), find(0x1100), find(0x2000), find(0x207f), find(0x2080), find(0x30ff), find(0x3100)]).toEqual([
      undefined,
      0x1000,
      0x1000,
      undefined,
      0x2000,
      0x2000,
      undefined,
      0x3000,
      undefined,
    ]);
  });

  it("with overlapping ranges prefers the greatest pc_begin that covers the address", () => {
    const frame = frameWith([
      [0x1000, 0x1000], // outer
      [0x1100, 0x10], // nested
      [0x1200, 0x10],
      [0x2000, 0], // empty ranges are never found
    ]);
    const find = (a: number) => frame.findFde(a)?.pcBegin;
    expect([find(0x1105), find(0x1110), find(0x1205), find(0x1fff), find(0x2000)]).toEqual([0x1100, 0x1000, 0x1200, 0x1000, undefined]);
  });

  it("an empty section has no FDEs", () => {
    expect(parseEhFrame(new Uint8Array(0), { sectionAddress: 0 }).findFde(0)).toBeUndefined();
  });
});
