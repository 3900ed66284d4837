import { X86_64 } from "../../src/arch/x86-64.js";
import {
  locationDwarfReg,
  LocationKind,
  locationKind,
  locationRootType,
  locationSizeBytes,
  ROOT_TYPE_ATOMIC,
  ROOT_TYPE_COMPLEX,
  ROOT_TYPE_POINTER,
  ROOT_TYPE_TRAIT,
} from "../../src/location/location-word.js";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ByteView } from "../../src/bytes/byte-view.js";
import { ElfFile } from "../../src/elf/elf-file.js";
import { InvalidArgumentError, MalformedInputError, UnsupportedInputError } from "../../src/errors.js";
import type { UnwindRow } from "../../src/loader/llvm-map-loader.js";
import { DWARF_CFA, buildPlimmixDescriptors, loadPlimmixFromElf, registerPlimmixBytes } from "../../src/loader/plimmix-loader.js";
import { registerPlimmixFile } from "../../src/loader/register-maps.js";
import { SimulatedMemory } from "../../src/memory/memory.js";
import {
  DWARF_CFA as DWARF_CFA_OF_DESCRIPTORS,
  FLAG_DYNAMIC_FRAME,
  FLAG_FRAME_POINTER_CFA,
  FLAG_FRAME_SIZE_DIFFERS,
  FLAG_NO_UNWIND_INFO,
  type FrameDescriptors,
  NO_CFA_RULE,
} from "../../src/safepoints/frame-descriptors.js";
import { SafepointRegistry } from "../../src/safepoints/registry.js";
import { PlimmixMap } from "../../src/stackmap/plimmix-map.js";
import { RegisterContext } from "../../walker/register-context.js";
import { walkStack } from "../../walker/walk-stack.js";
import { catchError } from "../support/catch-error.js";
import { objdumpCallSites } from "../support/objdump-frames.js";
import { assembleFormatsAsm, compileFormatsLl, linkFormatsShared } from "../support/compile-formats.js";
import { encodePlimmix, type PlimmixSpec, THREE_FUNCTIONS } from "../stackmap/plimmix-encoder.js";

/*
 * `_GC_MAP_` maps into frame descriptors: roots CFA-relative (so pushed outgoing arguments do not
 * move them), frame sizes from the CFI row when there is one, and the ELF side (relocations of a
 * .o, .rela.dyn of a .so, .eh_frame) on a hand-written module (ll/plimmix-handwritten.s).
 */

const SPEC: PlimmixSpec = {
  functions: [...THREE_FUNCTIONS],
  globals: [0x40_4000],
};

/** Each safepoint's roots as [CFA offset, root type]; checks the location shape on the way. */
function roots(d: FrameDescriptors, i: number): [number, number][] {
  const out: [number, number][] = [];
  for (let p = 0; p < d.pairCount[i]!; p++) {
    const base = d.pairs[(d.pairStart[i]! + p) * 2]!;
    const derived = d.pairs[(d.pairStart[i]! + p) * 2 + 1]!;
    expect(base).toBe(derived);
    const w0 = d.locations[derived * 2]!;
    expect([locationKind(w0), locationDwarfReg(w0), locationSizeBytes(w0)]).toEqual([LocationKind.Indirect, DWARF_CFA, 8]);
    out.push([d.locations[derived * 2 + 1]!, locationRootType(w0)]);
  }
  return out;
}

function row(cfaRegister: number, cfaOffset: number, saved: [number, number][] = []): UnwindRow {
  return { cfaRegister, cfaOffset, savedRegisters: new Map(saved), argsSizeBytes: 0 };
}

/** CFI rows for SPEC: f0 has 24 bytes pushed at its second safepoint; f1 has a frame pointer. */
const ROWS = new Map<number, UnwindRow>([
  [0x40_100f, row(7, 32)],
  [0x40_101f, row(7, 56)],
  [
    0x40_112f,
    row(6, 16, [
      [6, -16],
      [3, -24],
    ]),
  ],
]);

describe("buildPlimmixDescriptors", () => {
  it("DWARF_CFA is the descriptors' pseudo register 254", () => {
    expect(DWARF_CFA).toBe(254);
    expect(DWARF_CFA).toBe(DWARF_CFA_OF_DESCRIPTORS);
  });

  it("without unwind info: recorded frame sizes; roots CFA-relative with their types", () => {
    const map = PlimmixMap.parse(new ByteView(encodePlimmix(SPEC)), 0);
    const d = buildPlimmixDescriptors([map]);
    expect(d.count).toBe(3);
    expect(Array.from(d.returnAddress)).toEqual([0x40_1010, 0x40_1020, 0x40_1130]);
    expect(Array.from(d.stackSizeBytes)).toEqual([24, 24, -1]);
    // Static: the recorded size. Dynamic: the rule the format implies, CFA = rbp + 16.
    expect(Array.from(d.frameSizeBytes)).toEqual([24, 24, -1]);
    expect(Array.from(d.flags)).toEqual([FLAG_NO_UNWIND_INFO, FLAG_NO_UNWIND_INFO, FLAG_DYNAMIC_FRAME | FLAG_NO_UNWIND_INFO | FLAG_FRAME_POINTER_CFA]);
    expect(Array.from(d.cfaRegister)).toEqual([NO_CFA_RULE, NO_CFA_RULE, 6]);
    expect(d.cfaOffsetBytes[2]).toBe(16);
    expect(Array.from(d.savedRegOffsets.subarray(12, 18))).toEqual([0, -16, 0, 0, 0, 0]); // rbp at CFA - 16
    // sp+0 in a 24-byte frame is CFA - 32; sp+8 is CFA - 24. rbp-24 is CFA - 40; rbp-32 CFA - 48.
    expect(roots(d, 0)).toEqual([
      [-32, ROOT_TYPE_POINTER],
      [-24, ROOT_TYPE_TRAIT],
    ]);
    expect(roots(d, 1)).toEqual(roots(d, 0));
    expect(roots(d, 2)).toEqual([
      [-40, ROOT_TYPE_COMPLEX],
      [-48, ROOT_TYPE_ATOMIC],
    ]);
    // One list of roots per function, shared by its safepoints.
    expect(d.pairStart[1]).toBe(d.pairStart[0]);
    expect(d.locations.length).toBe(4 * 2);
    expect(d.functions).toEqual([
      { name: undefined, address: 0x40_1000, stackSizeBytes: 24 },
      { name: undefined, address: 0x40_1100, stackSizeBytes: -1 },
      { name: undefined, address: 0x40_1200, stackSizeBytes: 8 },
    ]);
    expect(Array.from(d.functionIndex)).toEqual([0, 0, 1]);
    expect(Array.from(d.recordIndex)).toEqual([0, 1, 2]);
  });

  it("with unwind info: the effective frame size counts pushed arguments; rbp rules climb by rbp", () => {
    const map = PlimmixMap.parse(new ByteView(encodePlimmix(SPEC)), 0);
    const lookups: number[] = [];
    const d = buildPlimmixDescriptors([map], {
      unwindRowAt: (address) => {
        lookups.push(address);
        return ROWS.get(address);
      },
    });
    expect(lookups).toEqual([0x40_100f, 0x40_101f, 0x40_112f]); // RA - 1, as unwinders look up
    expect(Array.from(d.frameSizeBytes)).toEqual([24, 48, -1]);
    expect(Array.from(d.flags)).toEqual([0, FLAG_FRAME_SIZE_DIFFERS, FLAG_DYNAMIC_FRAME | FLAG_FRAME_POINTER_CFA]);
    expect(Array.from(d.cfaRegister)).toEqual([7, 7, 6]);
    expect(Array.from(d.cfaOffsetBytes)).toEqual([32, 56, 16]);
    expect(Array.from(d.savedRegOffsets.subarray(12, 18))).toEqual([-24, -16, 0, 0, 0, 0]);
    // The roots do not depend on the call site.
    expect(roots(d, 1)).toEqual([
      [-32, ROOT_TYPE_POINTER],
      [-24, ROOT_TYPE_TRAIT],
    ]);
  });

  it("a safepoint at or before its function's address is malformed (offset of the field)", () => {
    const bad = { ...SPEC, functions: [{ ...SPEC.functions[0]!, safepoints: [0x40_1010, 0x40_1000] }] };
    const map = PlimmixMap.parse(new ByteView(encodePlimmix(bad), 0x500), 0);
    const e = catchError(() => buildPlimmixDescriptors([map]));
    expect(e).toBeInstanceOf(MalformedInputError);
    expect(e).toMatchObject({ offset: 0x500 + 16 + 24 + 8, found: "0x401000" });
  });

  it("a function address above 2^53 is malformed", () => {
    const map = PlimmixMap.parse(new ByteView(encodePlimmix({ functions: [{ address: 1n << 60n, frameWords: 1, safepoints: [], roots: [] }] })), 0);
    expect(catchError(() => buildPlimmixDescriptors([map]))).toMatchObject({ offset: 16, found: (1n << 60n).toString() });
  });
});

const BASE = 0x7ff0_0000_0000;
const BOUNDARY = 0x9999;

describe("registerPlimmixBytes and a walk", () => {
  it("the walker finds every typed root through the CFA, across pushed arguments and a dynamic frame", () => {
    const registry = new SafepointRegistry();
    const bytes = encodePlimmix(SPEC);
    const handle = registerPlimmixBytes(registry, bytes, { name: "gc_init@0x404000", unwindRowAt: (a) => ROWS.get(a) });
    expect(registerPlimmixBytes(registry, bytes, { name: "again", unwindRowAt: (a) => ROWS.get(a) })).toBe(handle);
    expect(registry.snapshot().lookup(0x40_1020)?.module.format).toBe("plimmix-v1");

    const memory = new SimulatedMemory(BASE, 0x1000);
    // Frame 0: f0 at its second safepoint, 24 bytes of arguments pushed below its 24-byte frame.
    const sp0 = BASE + 0x100;
    const pointer = 0x5000_0000;
    const trait = BASE + 0x800; // a two-word object: [vtable, heap slot]
    memory.writeWord(trait, 0x40_3000);
    memory.writeWord(trait + 8, 0x5000_1000);
    memory.writeWord(sp0 + 24 + 0, pointer); // sp+0 of the unpushed frame
    memory.writeWord(sp0 + 24 + 8, trait); // sp+8
    memory.writeWord(sp0 + 48, 0x40_1130); // return address into f1
    // Frame 1: f1, dynamic, rbp = CFA - 16; its caller's return address at rbp + 8.
    const sp1 = sp0 + 56;
    const rbp = sp1 + 0x60;
    const complex = BASE + 0x900; // a structure whose first word is its visitor
    memory.writeWord(complex, 0x40_2000);
    memory.writeWord(rbp - 24, complex); // COMPLEX root
    memory.writeWord(rbp - 32, 0x1234); // ATOMIC: never looked at
    memory.writeWord(rbp + 8, BOUNDARY);
    const result = walkStack(
      registry.snapshot(),
      memory,
      { sp: sp0, ra: 0x40_1020, registers: RegisterContext.from({ rbp }, X86_64) },
      { mode: "strict", boundaries: new Set([BOUNDARY]) },
    );
    expect(result.stopReason).toBe("boundary");
    expect(result.frames.map((f) => f.sp)).toEqual([sp0, sp1]);
    expect(result.roots).toEqual([
      { slot: sp0 + 24, value: pointer, baseSlot: sp0 + 24, frame: 0 },
      { slot: trait + 8, value: 0x5000_1000, baseSlot: trait + 8, frame: 0 },
    ]);
    expect(result.pairs.complexRoots).toEqual([{ slot: rbp - 24, visitor: 0x40_2000, frame: 1 }]);
  });

  it("rejects empty input and bytes after the blob", () => {
    const registry = new SafepointRegistry();
    expect(catchError(() => registerPlimmixBytes(registry, new Uint8Array(0), { name: "x" }))).toBeInstanceOf(InvalidArgumentError);
    const bytes = encodePlimmix(SPEC);
    const longer = new Uint8Array(bytes.length + 8);
    longer.set(bytes);
    expect(catchError(() => registerPlimmixBytes(registry, longer, { name: "x" }))).toBeInstanceOf(MalformedInputError);
    expect(registry.snapshot().safepointCount).toBe(0);
  });
});

describe("loadPlimmixFromElf: a hand-written module (ll/plimmix-handwritten.s)", () => {
  const objectPath = assembleFormatsAsm("plimmix-handwritten.s");
  const objectBytes = readFileSync(objectPath);
  const calls = objdumpCallSites(objectPath);

  it("a .o: symbols, relocations against functions, .text+offset and data, .eh_frame rows", () => {
    const loaded = loadPlimmixFromElf(objectBytes, objectPath)!;
    expect(loaded.kind).toBe("relocatable");
    const text = loaded.elf.section(".text")!.index;
    const data = loaded.elf.section(".data")!;
    expect(loaded.modules).toEqual([{ symbol: "_GC_MAP_handwritten.c", sourceName: "handwritten.c", sectionIndex: data.index, offsetInSection: 8 }]);
    const map = loaded.maps[0]!;
    expect(map.sectionOffset).toBe(data.offset + 8);
    // The raw bytes hold zeros where the relocations apply.
    expect(loaded.rawMaps[0]!.functionAddress(1)).toBe(0);
    expect(loaded.functions).toEqual([
      [
        { address: 0, name: "static_fn", sectionIndex: text },
        { address: calls.get("dynamic_fn")!.startOffset, name: "dynamic_fn", sectionIndex: text },
      ],
    ]);
    expect(loaded.globals).toEqual([[{ address: 0, name: "gc_global", sectionIndex: data.index }]]);

    // Safepoints are the return addresses of the calls, as objdump sees them.
    const d = loaded.descriptors;
    const staticCalls = calls.get("static_fn")!.callSites;
    const dynamic = calls.get("dynamic_fn")!;
    expect(Array.from(d.returnAddress)).toEqual([...staticCalls.map((c) => c.returnOffset), dynamic.startOffset + dynamic.callSites[0]!.returnOffset]);
    // Frame sizes: the CFI's, which objdump's own count of pushes confirms.
    expect(Array.from(d.frameSizeBytes.subarray(0, 3))).toEqual(staticCalls.map((c) => c.frameSizeBytes));
    expect(Array.from(d.frameSizeBytes)).toEqual([24, 48, 24, -1]);
    expect(staticCalls.map((c) => c.pushedArgBytes)).toEqual([0, 24, 0]);
    expect(Array.from(d.flags)).toEqual([0, FLAG_FRAME_SIZE_DIFFERS, 0, FLAG_DYNAMIC_FRAME | FLAG_FRAME_POINTER_CFA]);
    expect(dynamic.dynamic && dynamic.framePointer).toBe(true);
    expect(roots(d, 1)).toEqual([
      [-32, ROOT_TYPE_POINTER],
      [-24, ROOT_TYPE_TRAIT],
    ]);
    expect(roots(d, 3)).toEqual([[-24, ROOT_TYPE_POINTER]]);
  });

  it("a .so: link-time addresses from .rela.dyn (RELATIVE and symbol relocations), names from the symbol tables", () => {
    const libraryPath = linkFormatsShared([objectPath]);
    const loaded = loadPlimmixFromElf(readFileSync(libraryPath), libraryPath)!;
    const object = loadPlimmixFromElf(objectBytes, objectPath)!;
    expect(loaded.kind).toBe("shared");
    const symbols = new Map(loaded.elf.symbols().map((s) => [s.name, s.value]));
    const staticFn = symbols.get("static_fn")!;
    const dynamicFn = symbols.get("dynamic_fn")!;
    expect(loaded.functions[0]!.map((f) => [f.name, f.address])).toEqual([
      ["static_fn", staticFn],
      ["dynamic_fn", dynamicFn],
    ]);
    expect(loaded.globals[0]).toEqual([{ address: symbols.get("gc_global"), name: "gc_global", sectionIndex: undefined }]);
    // Same safepoints as in the object, moved to where the linker put .text.
    const moved = Array.from(object.descriptors.returnAddress).map((ra, i) => ra + (i < 3 ? staticFn : dynamicFn - object.functions[0]![1]!.address));
    expect(Array.from(loaded.descriptors.returnAddress)).toEqual(moved);
    expect(Array.from(loaded.descriptors.frameSizeBytes)).toEqual([24, 48, 24, -1]);
    expect(loaded.contentKey).not.toBe(object.contentKey);
    const registry = new SafepointRegistry();
    const handle = registerPlimmixFile(registry, readFileSync(libraryPath), { path: libraryPath, loadBias: 0x7f00_0000_0000 });
    expect(registry.snapshot().lookup(0x7f00_0000_0000 + moved[1]!)?.module.handle).toBe(handle);
  });

  it("errors name the file and the file offset", () => {
    const elf = ElfFile.parse(objectBytes);
    const data = elf.section(".data")!;
    const patched = new Uint8Array(objectBytes);
    patched[data.offset + 8] = 2; // version 2
    const e = catchError(() => loadPlimmixFromElf(patched, "patched.o"));
    expect(e).toBeInstanceOf(UnsupportedInputError);
    expect(e).toMatchObject({ offset: data.offset + 8 });
    expect((e as Error).message).toMatch(/^patched\.o: _GC_MAP_ version at offset/);
  });

  it("a .o address field without its relocation is malformed", () => {
    const elf = ElfFile.parse(objectBytes);
    const data = elf.section(".data")!;
    const [rela] = elf.relocationSectionsFor(data.index);
    const first = elf.relocations(rela!).find((r) => r.offset === 8 + 16)!; // static_fn's address field
    const patched = new Uint8Array(objectBytes);
    patched[first.fileOffset + 8] = 0; // r_info type := R_X86_64_NONE
    const e = catchError(() => loadPlimmixFromElf(patched, "norel.o"));
    expect(e).toBeInstanceOf(MalformedInputError);
    expect(e).toMatchObject({ offset: data.offset + 8 + 16, found: "no relocation" });
  });

  it("a file without _GC_MAP_ symbols has no plimmix maps", () => {
    const ocamlObject = compileFormatsLl("ocaml-basic.ll");
    expect(loadPlimmixFromElf(readFileSync(ocamlObject), ocamlObject)).toBeUndefined();
  });
});
