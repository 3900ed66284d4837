import { X86_64 } from "../../src/arch/x86-64.js";
import { locationDwarfReg, LocationKind, locationKind, locationRootType, ROOT_TYPE_POINTER } from "../../src/location/location-word.js";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ByteView } from "../../src/bytes/byte-view.js";
import { MalformedInputError, UnsupportedInputError } from "../../src/errors.js";
import type { UnwindRow } from "../../src/loader/llvm-map-loader.js";
import { buildOcamlDescriptors, loadOcamlFromElf } from "../../src/loader/ocaml-loader.js";
import { registerOcamlFile } from "../../src/loader/register-maps.js";
import { DWARF_CFA } from "../../src/loader/plimmix-loader.js";
import { SimulatedMemory } from "../../src/memory/memory.js";
import { FLAG_FRAME_POINTER_CFA, FLAG_FRAME_SIZE_DIFFERS, FLAG_NO_UNWIND_INFO, type FrameDescriptors } from "../../src/safepoints/frame-descriptors.js";
import { SafepointRegistry } from "../../src/safepoints/registry.js";
import { OcamlFrametable } from "../../src/stackmap/ocaml-frametable.js";
import { RegisterContext } from "../../walker/register-context.js";
import { walkStack } from "../../walker/walk-stack.js";
import { catchError } from "../support/catch-error.js";
import { type ObjdumpFunction, objdumpCallSites } from "../support/objdump-frames.js";
import { linkFormatsShared } from "../support/compile-formats.js";
import { OCAML_SOURCES, encodeOcaml, ocamlFixture } from "../support/ocaml-fixtures.js";

/*
 * OCaml frame tables into frame descriptors: root offsets made CFA-relative after deciding, per
 * safepoint, whether they are SP- or RBP-relative (CFI row, else the offsets themselves), frame
 * sizes from the CFI. Checked against llvm-objdump's view of every call site of ll/ocaml-*.ll.
 */

function cfaOffsets(d: FrameDescriptors, i: number): number[] {
  const out: number[] = [];
  for (let p = 0; p < d.pairCount[i]!; p++) {
    const loc = d.pairs[(d.pairStart[i]! + p) * 2 + 1]!;
    expect(d.pairs[(d.pairStart[i]! + p) * 2]).toBe(loc);
    const w0 = d.locations[loc * 2]!;
    expect([locationKind(w0), locationRootType(w0), locationDwarfReg(w0)]).toEqual([LocationKind.Indirect, ROOT_TYPE_POINTER, DWARF_CFA]);
    out.push(d.locations[loc * 2 + 1]!);
  }
  return out;
}

describe.each(OCAML_SOURCES)("descriptors of ll/%s", (source) => {
  const fixture = ocamlFixture(source);
  const loaded = loadOcamlFromElf(fixture.bytes, fixture.path)!;
  const d = loaded.descriptors;
  const table = loaded.tables[0]!;
  const functions = [...objdumpCallSites(fixture.path).values()];
  const callAt = (ra: number): { fn: ObjdumpFunction; frameSizeBytes: number; pushedArgBytes: number } => {
    const fn = functions.find((f) => ra > f.startOffset && ra <= f.startOffset + f.sizeBytes)!;
    const call = fn.callSites.find((c) => fn.startOffset + c.returnOffset === ra)!;
    return { fn, frameSizeBytes: call.frameSizeBytes!, pushedArgBytes: call.pushedArgBytes };
  };

  it("frame sizes: objdump's SP distance at the call (pushed arguments included), or the frame-pointer rule", () => {
    expect(d.count).toBe(table.numDescriptors);
    for (let i = 0; i < d.count; i++) {
      const { fn, frameSizeBytes, pushedArgBytes } = callAt(d.returnAddress[i]!);
      expect(d.stackSizeBytes[i]).toBe(table.frameSizeBytes(i));
      if (fn.framePointer) {
        expect([d.frameSizeBytes[i], d.cfaRegister[i], d.cfaOffsetBytes[i]]).toEqual([-1, 6, 16]);
        expect(d.flags[i]).toBe(FLAG_FRAME_POINTER_CFA);
      } else {
        expect(d.frameSizeBytes[i], `${fn.name} at ${d.returnAddress[i]}`).toBe(frameSizeBytes);
        expect(d.flags[i]).toBe(pushedArgBytes > 0 ? FLAG_FRAME_SIZE_DIFFERS : 0);
      }
    }
  });

  it("roots: CFA + offset is the slot the function addresses, whatever was pushed at the call", () => {
    for (let i = 0; i < d.count; i++) {
      const { fn, frameSizeBytes, pushedArgBytes } = callAt(d.returnAddress[i]!);
      const sp = 0x7000_0000; // SP at the safepoint
      const cfa = fn.framePointer ? Number.NaN : sp + frameSizeBytes + 8;
      const rbp = fn.framePointer ? 0x7000_1000 : Number.NaN;
      const slots = cfaOffsets(d, i).map((off) => (fn.framePointer ? rbp + 16 + off : cfa + off));
      const expected = Array.from({ length: table.numLive(i) }, (_, k) =>
        fn.framePointer ? rbp + table.liveOffsetI16(i, k) : sp + pushedArgBytes + table.liveOffsetU16(i, k),
      );
      expect(slots).toEqual(expected);
    }
  });

  it("functions are named from the symbol table; the safepoints of one function share their roots", () => {
    const names = new Set(loaded.functions.map((f) => f.name));
    for (const fn of functions) if (fn.callSites.length > 0 && fn.name !== "not_managed") expect(names.has(fn.name) || fn.name.startsWith("caml")).toBe(true);
    for (const f of loaded.functions) expect(f.name?.startsWith("caml")).toBe(false);
    for (let i = 1; i < d.count; i++) {
      if (d.functionIndex[i] === d.functionIndex[i - 1]) expect(d.pairStart[i]).toBe(d.pairStart[i - 1]);
    }
    for (let i = 0; i < d.count; i++) {
      const fn = d.functions[d.functionIndex[i]!]!;
      expect(callAt(d.returnAddress[i]!).fn.startOffset).toBe(fn.address);
      expect(fn.stackSizeBytes).toBe(table.frameSizeBytes(i));
    }
  });

  it("without unwind info the offsets alone give the same roots (and the recorded frame sizes)", () => {
    const bare = buildOcamlDescriptors(loaded.tables, { resolveReturnAddress: (t, i) => loaded.returnAddresses[t]![i]! });
    for (let i = 0; i < d.count; i++) {
      expect(cfaOffsets(bare, i)).toEqual(cfaOffsets(d, i));
      expect(bare.frameSizeBytes[i]).toBe(table.frameSizeBytes(i));
      expect(bare.flags[i]).toBe(FLAG_NO_UNWIND_INFO);
    }
  });
});

describe("OCaml frame tables in a shared library", () => {
  it("four modules, link-time return addresses (R_X86_64_RELATIVE), the same descriptors as in the objects", () => {
    const fixtures = OCAML_SOURCES.map(ocamlFixture);
    const libraryPath = linkFormatsShared(fixtures.map((f) => f.path));
    const library = loadOcamlFromElf(readFileSync(libraryPath), libraryPath)!;
    expect(library.kind).toBe("shared");
    expect(library.modules.map((m) => m.name).sort()).toEqual(fixtures.map((f) => f.module).sort());
    const symbols = new Map(
      library.elf
        .symbols()
        .filter((s) => s.type === 2)
        .map((s) => [s.name, s.value]),
    );
    // Every safepoint of every object, as (function, offset in it, frame size, roots).
    const describe = (d: FrameDescriptors, i: number) => {
      const fn = d.functions[d.functionIndex[i]!]!;
      return `${fn.name}+${d.returnAddress[i]! - fn.address} ${d.frameSizeBytes[i]} ${d.flags[i]} ${cfaOffsets(d, i).join(",")}`;
    };
    const fromObjects = fixtures.flatMap((f) => {
      const d = loadOcamlFromElf(f.bytes, f.path)!.descriptors;
      return Array.from({ length: d.count }, (_, i) => describe(d, i));
    });
    const d = library.descriptors;
    const fromLibrary = Array.from({ length: d.count }, (_, i) => describe(d, i));
    expect(fromLibrary.sort()).toEqual(fromObjects.sort());
    for (let i = 0; i < d.count; i++) {
      const fn = d.functions[d.functionIndex[i]!]!;
      expect(symbols.get(fn.name!)).toBe(fn.address);
    }
  });
});

const BASE = 0x7ff0_0000_0000;
const BOUNDARY = 0x9999;
const BIAS = 0x40_0000;

describe("a walk through OCaml-table frames", () => {
  it("an SP frame at a call with pushed arguments, then a frame-pointer frame at one: every root", () => {
    const fixture = ocamlFixture("ocaml-frame-pointer.ll");
    const loaded = loadOcamlFromElf(fixture.bytes, fixture.path)!;
    const registry = new SafepointRegistry();
    registerOcamlFile(registry, fixture.bytes, { path: fixture.path, loadBias: BIAS });
    const d = loaded.descriptors;
    const fnOf = (i: number) => d.functions[d.functionIndex[i]!]!.name;
    // The safepoints after the 9-argument calls (the ones whose effective frame differs or that climb by rbp).
    const calls = objdumpCallSites(fixture.path);
    const spCall = calls.get("sp_neighbour")!.callSites.find((c) => c.pushedArgBytes > 0)!;
    const fpCall = calls.get("fp_roots")!.callSites.find((c) => c.pushedArgBytes > 0)!;
    const spRa = calls.get("sp_neighbour")!.startOffset + spCall.returnOffset;
    const fpRa = calls.get("fp_roots")!.startOffset + fpCall.returnOffset;
    const spIndex = Array.from(d.returnAddress).indexOf(spRa);
    const fpIndex = Array.from(d.returnAddress).indexOf(fpRa);
    expect([fnOf(spIndex), fnOf(fpIndex)]).toEqual(["sp_neighbour", "fp_roots"]);

    const memory = new SimulatedMemory(BASE, 0x1000);
    const table = loaded.tables[0]!;
    // Frame 0: sp_neighbour; its slots are SP-relative above the pushed arguments.
    const sp0 = BASE + 0x100;
    const expected: number[] = [];
    for (let k = 0; k < table.numLive(spIndex); k++) {
      const slot = sp0 + spCall.pushedArgBytes + table.liveOffsetU16(spIndex, k);
      memory.writeWord(slot, 0x5000_0000 + 0x100 * k);
      expected.push(slot);
    }
    memory.writeWord(sp0 + spCall.frameSizeBytes!, BIAS + fpRa);
    // Frame 1: fp_roots; rbp-relative slots, its caller's return address at rbp + 8.
    const sp1 = sp0 + spCall.frameSizeBytes! + 8;
    const rbp = sp1 + fpCall.frameSizeBytes! - 8;
    for (let k = 0; k < table.numLive(fpIndex); k++) {
      const slot = rbp + table.liveOffsetI16(fpIndex, k);
      memory.writeWord(slot, 0x6000_0000 + 0x100 * k);
      expected.push(slot);
    }
    memory.writeWord(rbp + 8, BOUNDARY);
    const result = walkStack(
      registry.snapshot(),
      memory,
      { sp: sp0, ra: BIAS + spRa, registers: RegisterContext.from({ rbp }, X86_64) },
      { mode: "strict", boundaries: new Set([BOUNDARY]) },
    );
    expect(result.stopReason).toBe("boundary");
    expect(result.frames.map((f) => f.functionName)).toEqual(["sp_neighbour", "fp_roots"]);
    expect(result.roots.map((r) => r.slot)).toEqual(expected);
    expect(result.roots.map((r) => r.value)).toEqual([0x5000_0000, 0x5000_0100, 0x6000_0000, 0x6000_0100, 0x6000_0200]);
  });
});

describe("choosing SP- or RBP-relative offsets", () => {
  const tableOf = (frameSize: number, live: number[]) =>
    OcamlFrametable.parse(new ByteView(encodeOcaml([{ returnAddress: 0x1000, frameSize, live }]), 0x80), 0);
  const rowWith = (cfaRegister: number, cfaOffset: number): UnwindRow => ({ cfaRegister, cfaOffset, savedRegisters: new Map(), argsSizeBytes: 0 });

  it("without unwind info: negative offsets mean a frame pointer, small positive ones SP", () => {
    expect(cfaOffsets(buildOcamlDescriptors(tableOf(40, [-24, -8])), 0)).toEqual([-40, -24]);
    expect(cfaOffsets(buildOcamlDescriptors(tableOf(40, [0, 32])), 0)).toEqual([-48, -16]);
  });

  it("without unwind info, a frame above 32 KiB whose offsets read both ways is refused", () => {
    const e = catchError(() => buildOcamlDescriptors(tableOf(0xa000, [0x9ff0])));
    expect(e).toBeInstanceOf(UnsupportedInputError);
    expect(e).toMatchObject({ offset: 0x80 + 8 + 12 });
    // With the CFI row it is decided: CFA = rsp + N says SP-relative.
    const d = buildOcamlDescriptors(tableOf(0xa000, [0x9ff0]), { unwindRowAt: () => rowWith(7, 0xa008) });
    expect(cfaOffsets(d, 0)).toEqual([0x9ff0 - 0xa000 - 8]);
  });

  it("an offset that is a slot under neither reading, or not under the CFI's, is malformed at its field", () => {
    expect(catchError(() => buildOcamlDescriptors(tableOf(40, [8, 48])))).toMatchObject({ offset: 0x80 + 8 + 14 });
    const e = catchError(() => buildOcamlDescriptors(tableOf(40, [8, 48]), { unwindRowAt: () => rowWith(7, 48) }));
    expect(e).toBeInstanceOf(MalformedInputError);
    expect(e).toMatchObject({ offset: 0x80 + 8 + 14, found: 48 });
    expect(catchError(() => buildOcamlDescriptors(tableOf(40, [-8]), { unwindRowAt: () => rowWith(7, 48) }))).toBeInstanceOf(MalformedInputError);
    expect(catchError(() => buildOcamlDescriptors(tableOf(40, [4]), { unwindRowAt: () => rowWith(7, 48) }))).toBeInstanceOf(MalformedInputError);
  });

  it("a CFA rule on another register is unsupported; a zero return address is malformed", () => {
    expect(catchError(() => buildOcamlDescriptors(tableOf(40, [0]), { unwindRowAt: () => rowWith(3, 16) }))).toBeInstanceOf(UnsupportedInputError);
    const zero = OcamlFrametable.parse(new ByteView(encodeOcaml([{ returnAddress: 0, frameSize: 8, live: [] }])), 0);
    expect(catchError(() => buildOcamlDescriptors(zero))).toMatchObject({ offset: 8 });
  });

  it("without symbols, runs of identical descriptors form one unnamed function", () => {
    const table = OcamlFrametable.parse(
      new ByteView(
        encodeOcaml([
          { returnAddress: 0x1013, frameSize: 8, live: [0] },
          { returnAddress: 0x1021, frameSize: 8, live: [0] },
          { returnAddress: 0x1066, frameSize: 40, live: [16, 8] },
        ]),
      ),
      0,
    );
    const d = buildOcamlDescriptors(table);
    expect(d.functions).toEqual([
      { name: undefined, address: 0x1013, stackSizeBytes: 8 },
      { name: undefined, address: 0x1066, stackSizeBytes: 40 },
    ]);
    expect(Array.from(d.functionIndex)).toEqual([0, 0, 1]);
    expect(d.pairStart[1]).toBe(d.pairStart[0]);
  });
});
