import { describe, expect, it } from "vitest";
import { ByteView } from "../../src/bytes/byte-view.js";
import { ElfFile } from "../../src/elf/elf-file.js";
import { MalformedInputError, TruncatedInputError } from "../../src/errors.js";
import { loadOcamlFromElf } from "../../src/loader/ocaml-loader.js";
import { OcamlFrametable, ocamlDescriptorSizeBytes, ocamlModuleName } from "../../src/stackmap/ocaml-frametable.js";
import { catchError } from "../support/catch-error.js";
import { readobjRelocations } from "../support/llvm-tools.js";
import { objdumpCallSites } from "../support/objdump-frames.js";
import {
  NOT_MANAGED,
  OCAML_SOURCES,
  type OcamlDescriptorSpec,
  encodeOcaml,
  nmSymbols,
  nullInitialisedSlots,
  objdumpSectionBytes,
  ocamlFixture,
} from "../support/ocaml-fixtures.js";

/*
 * LLVM 14's OCaml frame table (src/stackmap/ocaml-frametable.ts): the decoder on hand-built
 * tables (layout, one typed error per rule), then on what `llc -O2` really emits for the gcroot
 * programs of ll/ocaml-*.ll, checked against llvm-objdump (-s, -d), llvm-readobj -r and llvm-nm.
 */

const TABLE: OcamlDescriptorSpec[] = [
  { returnAddress: 0x13, frameSize: 8, live: [0] },
  { returnAddress: 0x62, frameSize: 40, live: [-24, -16, -8] },
  { returnAddress: 0x90, frameSize: 24, live: [] },
];

describe("OCaml frametable: layout", () => {
  it("a descriptor is 8 + 8 * ceil((4 + 2L) / 8) bytes", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7].map(ocamlDescriptorSizeBytes)).toEqual([16, 16, 16, 24, 24, 24, 24, 32]);
  });

  it("decodes count, return addresses, frame sizes and offsets read both ways", () => {
    const table = OcamlFrametable.parse(new ByteView(encodeOcaml(TABLE)), 0);
    expect(table.numDescriptors).toBe(3);
    expect(table.sizeBytes).toBe(8 + 16 + 24 + 16);
    expect([0, 1, 2].map((d) => table.descriptorOffset(d))).toEqual([8, 24, 48]);
    expect([0, 1, 2].map((d) => table.returnAddress(d))).toEqual([0x13, 0x62, 0x90]);
    expect(table.returnAddressLong(1).toNumber()).toBe(0x62);
    expect([0, 1, 2].map((d) => table.frameSizeBytes(d))).toEqual([8, 40, 24]);
    expect([0, 1, 2].map((d) => table.numLive(d))).toEqual([1, 3, 0]);
    expect([0, 1, 2].map((k) => table.liveOffsetI16(1, k))).toEqual([-24, -16, -8]);
    expect([0, 1, 2].map((k) => table.liveOffsetU16(1, k))).toEqual([0xffe8, 0xfff0, 0xfff8]);
    expect(table.liveOffsetFieldOffset(1, 2)).toBe(24 + 12 + 4);
  });

  it("an empty table is its 8-byte header; data after a table is not read", () => {
    expect(OcamlFrametable.parse(new ByteView(new Uint8Array(8)), 0).sizeBytes).toBe(8);
    const bytes = new Uint8Array(64 + 8);
    bytes.set(encodeOcaml(TABLE), 0);
    bytes.fill(0xee, 64);
    expect(OcamlFrametable.parse(new ByteView(bytes, 0x400), 0)).toMatchObject({ numDescriptors: 3, sectionOffset: 0x400 });
  });

  it("module names", () => {
    expect(ocamlModuleName("camlFoo__frametable")).toBe("Foo");
    expect(ocamlModuleName("caml/tmp/x__frametable")).toBe("/tmp/x");
    expect(ocamlModuleName("caml__frametable")).toBeUndefined();
    expect(ocamlModuleName("camlFoo__code_begin")).toBeUndefined();
  });
});

describe("OCaml frametable: one typed error per rule, at its exact offset", () => {
  const cases: { what: string; bytes: () => Uint8Array; offset?: number; error: new (...args: never[]) => Error; parseAt?: number }[] = [
    { what: "header shorter than 8 bytes", bytes: () => encodeOcaml(TABLE).subarray(0, 4), error: TruncatedInputError, offset: 0 },
    { what: "non-zero padding after the count", bytes: () => patch(encodeOcaml(TABLE), 5, 1), error: MalformedInputError, offset: 5 },
    { what: "count beyond the bytes", bytes: () => encodeOcaml(TABLE, 200), error: TruncatedInputError, offset: 8 },
    { what: "live count beyond the bytes", bytes: () => patch(encodeOcaml(TABLE), 48 + 10, 9), error: TruncatedInputError, offset: 48 + 12 },
    {
      what: "non-zero padding after the live offsets",
      bytes: () => patch(encodeOcaml(TABLE), 24 + 12 + 6 + 1, 0x80),
      error: MalformedInputError,
      offset: 24 + 19,
    },
    {
      what: "table shorter than its count's minimum (16 bytes a descriptor)",
      bytes: () => encodeOcaml(TABLE).subarray(0, 30),
      error: TruncatedInputError,
      offset: 8,
    },
    { what: "table cut in the last descriptor's padding", bytes: () => encodeOcaml(TABLE).subarray(0, 60), error: TruncatedInputError, offset: 48 + 12 },
    { what: "label not 8-aligned", bytes: () => new Uint8Array(64), error: MalformedInputError, offset: 4, parseAt: 4 },
  ];
  it.each(cases)("$what", ({ bytes, error, offset, parseAt }) => {
    const e = catchError(() => OcamlFrametable.parse(new ByteView(bytes(), 0x100), parseAt ?? 0));
    expect(e).toBeInstanceOf(error);
    expect((e as { offset: number }).offset).toBe(0x100 + offset!);
  });
});

function patch(bytes: Uint8Array, at: number, value: number): Uint8Array {
  bytes[at] = value;
  return bytes;
}

describe.each(OCAML_SOURCES)("what llc -O2 emits for ll/%s", (source) => {
  const fixture = ocamlFixture(source);
  const loaded = loadOcamlFromElf(fixture.bytes, fixture.path)!;
  const elf = ElfFile.parse(fixture.bytes);
  const table = loaded.tables[0]!;
  const module = loaded.modules[0]!;

  it("symbols: caml<M>__code_begin/_end in .text, __data_begin/_end and __frametable in .data, one zero word between", () => {
    const nm = nmSymbols(fixture.path);
    const m = `caml${fixture.module}`;
    expect(module.name).toBe(fixture.module);
    expect(module.frametableSymbol).toBe(`${m}__frametable`);
    expect(module.offsetInSection).toBe(nm.get(`${m}__frametable`));
    expect(module.offsetInSection).toBe(nm.get(`${m}__data_end`)! + 8);
    expect([module.codeBegin, module.codeEnd, module.dataBegin, module.dataEnd]).toEqual([
      nm.get(`${m}__code_begin`),
      nm.get(`${m}__code_end`),
      nm.get(`${m}__data_begin`),
      nm.get(`${m}__data_end`),
    ]);
    expect(module.codeEnd).toBe(elf.section(".text")!.size);
    expect(elf.sections[module.sectionIndex]!.name).toBe(".data");
    expect(module.offsetInSection % 8).toBe(0);
  });

  it("the bytes: what llvm-objdump -s shows, the table running to the end of .data", () => {
    const data = objdumpSectionBytes(fixture.path, ".data");
    expect(Array.from(data)).toEqual(Array.from(elf.section(".data")!.bytes()));
    expect(Array.from(data.subarray(module.offsetInSection - 8, module.offsetInSection))).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(module.offsetInSection + table.sizeBytes).toBe(data.length);
    expect(new DataView(data.buffer).getBigUint64(module.offsetInSection, true)).toBe(BigInt(table.numDescriptors));
  });

  it("every return address is an R_X86_64_64 against .text + offset (llvm-readobj -r)", () => {
    const relocations = readobjRelocations(fixture.path).get(".rela.data")!;
    expect(relocations.length).toBe(table.numDescriptors);
    relocations.forEach((r, d) => {
      expect(r).toMatchObject({ offset: module.offsetInSection + table.returnAddressFieldOffset(d), type: "R_X86_64_64", symbol: ".text" });
      expect(Number(r.addend)).toBe(loaded.returnAddresses[0]![d]!.address);
      expect(loaded.rawTables[0]!.returnAddress(d)).toBe(0); // RELA: the field itself holds 0
    });
  });

  it("safepoints are the return addresses of every non-tail call of a gc function, in order (llvm-objdump -d)", () => {
    const functions = [...objdumpCallSites(fixture.path).values()].filter((f) => !NOT_MANAGED.has(f.name));
    const expected = functions.flatMap((f) => f.callSites.map((c) => f.startOffset + c.returnOffset));
    expect(loaded.returnAddresses[0]!.map((ra) => ra.address)).toEqual(expected);
  });

  it("FrameSize is the fixed frame in bytes: prologue pushes and sub, not the return address, not pushed arguments", () => {
    const functions = [...objdumpCallSites(fixture.path).values()];
    for (let d = 0; d < table.numDescriptors; d++) {
      const ra = loaded.returnAddresses[0]![d]!.address;
      const fn = functions.find((f) => ra > f.startOffset && ra <= f.startOffset + f.sizeBytes)!;
      const call = fn.callSites.find((c) => fn.startOffset + c.returnOffset === ra)!;
      expect(table.frameSizeBytes(d), `descriptor #${d} in ${fn.name}`).toBe(call.baseBytes);
      expect(table.frameSizeBytes(d) % 8).toBe(0);
    }
  });

  it("live offsets are the slots the prologue null-initialises: SP-relative, or RBP-relative (negative) with a frame pointer", () => {
    const slots = nullInitialisedSlots(fixture.path);
    const functions = [...objdumpCallSites(fixture.path).values()];
    for (let d = 0; d < table.numDescriptors; d++) {
      const ra = loaded.returnAddresses[0]![d]!.address;
      const fn = functions.find((f) => ra > f.startOffset && ra <= f.startOffset + f.sizeBytes)!;
      const init = slots.get(fn.startOffset)!;
      const offsets = Array.from({ length: table.numLive(d) }, (_, k) => (fn.framePointer ? table.liveOffsetI16(d, k) : table.liveOffsetU16(d, k)));
      expect(init.base).toBe(fn.framePointer && offsets.length > 0 ? "rbp" : "rsp");
      expect(
        [...offsets].sort((a, b) => a - b),
        `descriptor #${d} in ${fn.name}`,
      ).toEqual([...init.offsets].sort((a, b) => a - b));
      if (fn.framePointer) for (const off of offsets) expect(off).toBeLessThan(0);
    }
  });
});
