/**
 * relocatedSection and symbolAt on real files (sources in elf-fixtures.ts):
 *   - .o: every 64-bit field equals readelf's S + A, names come from the C source, values from nm
 *     (in a .o, nm prints offsets within the section); internal functions are `.text`+addend.
 *   - .so: every field equals nm's link-time address (+ addend); RELATIVE, RELR and dynamic
 *     R_X86_64_64 / GLOB_DAT are told apart by `kind`.
 *   - LLVM stack maps: the Function Address fields of a .o (x86-64 and AArch64) and of a .so.
 *   - What is not supported or has no value in the file fails with a typed error.
 */
import { describe, expect, it } from "vitest";
import { ElfFile } from "../../src/elf/elf-file.js";
import { R_AARCH64_ABS64, R_AARCH64_GLOB_DAT, R_AARCH64_RELATIVE, SHT_RELA } from "../../src/elf/elf-constants.js";
import { relocatedSection, symbolAt, type RelocatedSection } from "../../src/elf/relocate.js";
import { MalformedInputError, UnsupportedInputError } from "../../src/errors.js";
import {
  FN_PTRS_TARGETS,
  fixtures,
  HAVE_TOOLS,
  LIB_FN_PTRS_TARGETS,
  nmAddress,
  nmSymbols,
  readelfRelocations,
  readelfSections,
  readelfSymbols,
  STACKMAP_FUNCTIONS,
} from "./elf-fixtures.js";

function u64At(bytes: Uint8Array, offset: number): number {
  return Number(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigUint64(offset, true));
}

function relocated(elf: ElfFile, name: string): RelocatedSection {
  const result = relocatedSection(elf, name);
  if (result === undefined) throw new Error(`no section ${name}`);
  return result;
}

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error("expected an error, nothing was thrown");
}

describe.skipIf(!HAVE_TOOLS)("relocatedSection in a .o (ET_REL)", () => {
  const fx = HAVE_TOOLS ? fixtures() : undefined!;

  // object.o keeps all functions in .text; object-fs.o (-ffunction-sections) gives each its own
  // section, so static functions become `.text.static_h`+0 and nm's values are all 0.
  it.each(["object.o", "object-fs.o"])("%s: fn_ptrs fields equal readelf's S + A and name the C source's targets", (file) => {
    const elf = ElfFile.parse(fx.bytes(file));
    const original = elf.section("fn_ptrs")!.bytes().slice();
    const result = relocated(elf, "fn_ptrs");
    const readelf = readelfRelocations(fx.path(file)).rela.get(".relafn_ptrs")!;
    const sections = readelfSections(fx.path(file));
    const symbols = readelfSymbols(fx.path(file), ".symtab");
    const nm = nmSymbols(fx.path(file));

    expect(result.targets.size).toBe(FN_PTRS_TARGETS.length);
    FN_PTRS_TARGETS.forEach((expected, i) => {
      const offset = 8 * i;
      const entry = readelf.find((r) => r.offset === offset)!;
      const value = entry.symbolValue! + entry.addend;
      const target = result.targets.get(offset)!;
      expect(u64At(result.bytes, offset)).toBe(value);
      expect(target.value).toBe(value);
      expect(target.kind).toBe("absolute");
      expect(target.symbolName).toBe(expected.name);
      if (expected.name === "ext_fn") {
        expect(target.sectionIndex).toBeUndefined(); // undefined in this object: S = 0
        expect(value).toBe(0);
      } else {
        const ndx = Number(symbols.find((s) => s.name === expected.name)!.ndx);
        expect(target.sectionIndex).toBe(ndx);
        expect(target.sectionName).toBe(sections[ndx]!.name);
        expect(value).toBe(nmAddress(nm, expected.name) + expected.addend);
      }
    });
    // A copy: the file's bytes are untouched, and nothing but the relocated fields changed.
    expect(elf.section("fn_ptrs")!.bytes()).toEqual(original);
    expect(result.bytes.buffer).not.toBe(fx.bytes(file).buffer);
  });

  it("internal functions are referenced as .text+addend and named by the function starting there", () => {
    const elf = ElfFile.parse(fx.bytes("object.o"));
    const readelf = readelfRelocations(fx.path("object.o")).rela.get(".relafn_ptrs")!;
    expect(readelf[2]).toMatchObject({ symbolName: ".text", addend: nmAddress(nmSymbols(fx.path("object.o")), "static_h") });
    expect(relocated(elf, "fn_ptrs").targets.get(16)).toEqual({
      symbolName: "static_h",
      sectionIndex: elf.section(".text")!.index,
      sectionName: ".text",
      value: readelf[2]!.addend,
      kind: "absolute",
    });
  });

  it("relocates .data.rel.local (where gcc puts a plain initialised pointer array)", () => {
    const elf = ElfFile.parse(fx.bytes("object.o"));
    const table = elf.symbols().find((s) => s.name === "data_table")!;
    const section = elf.sections[table.sectionIndex]!;
    const result = relocated(elf, section.name);
    const nm = nmSymbols(fx.path("object.o"));
    expect([...result.targets.entries()].map(([offset, t]) => [offset, t.symbolName, t.value])).toEqual([
      [table.value, "static_i", nmAddress(nm, "static_i")],
      [table.value + 8, "global_g", nmAddress(nm, "global_g")],
    ]);
  });

  it("a section without relocations is returned as a plain copy; a missing one as undefined", () => {
    const elf = ElfFile.parse(fx.bytes("object.o"));
    const text = relocated(elf, ".text");
    expect(text.targets.size).toBe(0);
    expect(text.bytes).toEqual(elf.section(".text")!.bytes());
    expect(relocatedSection(elf, "no_such_section")).toBeUndefined();
  });

  it("a 32-bit relocation in the section is unsupported, naming its type and offset", () => {
    const elf = ElfFile.parse(fx.bytes("object.o"));
    const rela = elf.section(".relanarrow_ptrs")!;
    const err = caught(() => relocatedSection(elf, "narrow_ptrs"));
    expect(err).toBeInstanceOf(UnsupportedInputError);
    const e = err as UnsupportedInputError;
    expect([e.offset, e.found, e.supported]).toEqual([rela.offset, "R_X86_64_32 (10)", "R_X86_64_64"]);
    expect(e.message).toContain("narrow_ptrs offset 0x0");
    const eh = caught(() => relocatedSection(elf, ".eh_frame")) as UnsupportedInputError;
    expect(eh).toBeInstanceOf(UnsupportedInputError);
    expect(eh.found).toBe("R_X86_64_PC32 (2)");
  });

  it("an unknown machine or file type is unsupported, naming the header field", () => {
    const patch = (offset: number, value: number): ElfFile => {
      const bytes = fx.bytes("object.o").slice();
      new DataView(bytes.buffer).setUint16(offset, value, true);
      return ElfFile.parse(bytes);
    };
    const machine = caught(() => relocatedSection(patch(18, 40), "fn_ptrs")) as UnsupportedInputError; // EM_ARM
    expect(machine).toBeInstanceOf(UnsupportedInputError);
    expect([machine.offset, machine.found]).toEqual([18, "40"]);
    const type = caught(() => relocatedSection(patch(16, 4), "fn_ptrs")) as UnsupportedInputError; // ET_CORE
    expect(type).toBeInstanceOf(UnsupportedInputError);
    expect([type.offset, type.found]).toEqual([16, 4]);
  });

  it.each([
    ["stackmaps.o", "x86-64"],
    ["stackmaps-aarch64.o", "AArch64 (R_AARCH64_ABS64)"],
  ])("%s (%s): .llvm_stackmaps Function Addresses become offsets in .text, named", (file) => {
    const elf = ElfFile.parse(fx.bytes(file));
    const nm = nmSymbols(fx.path(file));
    const result = relocated(elf, ".llvm_stackmaps");
    const text = elf.section(".text")!;
    expect(result.targets.size).toBe(STACKMAP_FUNCTIONS.length);
    for (const { offset, name } of STACKMAP_FUNCTIONS) {
      expect(result.targets.get(offset)).toEqual({
        symbolName: name,
        sectionIndex: text.index,
        sectionName: ".text",
        value: nmAddress(nm, name),
        kind: "absolute",
      });
      expect(u64At(result.bytes, offset)).toBe(nmAddress(nm, name));
    }
    const rela = readelfRelocations(fx.path(file)).rela.get(".rela.llvm_stackmaps")!;
    if (file.includes("aarch64")) expect(rela.map((r) => r.typeNumber)).toEqual([R_AARCH64_ABS64, R_AARCH64_ABS64]);
    expect(rela.map((r) => r.symbolName)).toEqual(["pub_fn", ".text"]); // internal_fn: .text + addend
  });
});

describe.skipIf(!HAVE_TOOLS)("relocatedSection in a .so and an executable (ET_DYN, ET_EXEC)", () => {
  const fx = HAVE_TOOLS ? fixtures() : undefined!;

  // lib.so uses R_X86_64_RELATIVE in .rela.dyn; lib-relr.so packs them into .relr.dyn.
  it.each(["lib.so", "lib-relr.so"])("%s: fn_ptrs fields equal nm's addresses, RELATIVE vs symbol relocations told apart", (file) => {
    const elf = ElfFile.parse(fx.bytes(file));
    const nm = nmSymbols(fx.path(file));
    const result = relocated(elf, "fn_ptrs");
    const text = elf.section(".text")!;
    expect(result.targets.size).toBe(LIB_FN_PTRS_TARGETS.length);
    LIB_FN_PTRS_TARGETS.forEach((expected, i) => {
      const value = nmAddress(nm, expected.name) + expected.addend;
      expect(result.targets.get(8 * i)).toEqual({
        symbolName: expected.addend === 0 || expected.kind === "symbol" ? expected.name : undefined,
        sectionIndex: text.index,
        sectionName: ".text",
        value,
        kind: expected.kind,
      });
      expect(u64At(result.bytes, 8 * i)).toBe(value);
    });
    // The dynamic R_X86_64_64 fields hold 0 in the file; the RELATIVE ones hold the address already.
    const inFile = elf.section("fn_ptrs")!.bytes();
    expect(u64At(inFile, 0)).toBe(0);
  });

  it("lib.so: agrees with readelf -r on every .rela.dyn entry inside fn_ptrs", () => {
    const elf = ElfFile.parse(fx.bytes("lib.so"));
    const section = elf.section("fn_ptrs")!;
    const result = relocated(elf, "fn_ptrs");
    const entries = readelfRelocations(fx.path("lib.so"))
      .rela.get(".rela.dyn")!
      .filter((r) => r.offset >= section.addr && r.offset < section.addr + section.size);
    expect(entries.length).toBe(LIB_FN_PTRS_TARGETS.length);
    for (const r of entries) {
      const expected = r.type === "R_X86_64_RELATIVE" ? r.addend : r.symbolValue! + r.addend;
      expect(result.targets.get(r.offset - section.addr)?.value).toBe(expected);
    }
  });

  it("lib-relr.so: .relr.dyn holds the RELATIVE fields readelf lists", () => {
    const elf = ElfFile.parse(fx.bytes("lib-relr.so"));
    const section = elf.section("fn_ptrs")!;
    const relr = readelfRelocations(fx.path("lib-relr.so")).relr.get(".relr.dyn")!;
    const result = relocated(elf, "fn_ptrs");
    const relative = [...result.targets.entries()].filter(([, t]) => t.kind === "relative").map(([offset]) => offset + section.addr);
    expect(relative.sort((a, b) => a - b)).toEqual(relr.filter((a) => section.containsAddress(a)).sort((a, b) => a - b));
  });

  it("lib.so: R_X86_64_GLOB_DAT in .got is applied", () => {
    const elf = ElfFile.parse(fx.bytes("lib.so"));
    const got = relocated(elf, ".got");
    expect(got.targets.get(0)).toMatchObject({ symbolName: "exported_fn", value: nmAddress(nmSymbols(fx.path("lib.so")), "exported_fn"), kind: "symbol" });
  });

  it("lib.so: a pointer to an undefined function is a MalformedInputError naming the symbol", () => {
    const elf = ElfFile.parse(fx.bytes("lib.so"));
    const err = caught(() => relocatedSection(elf, "ext_ptrs"));
    expect(err).toBeInstanceOf(MalformedInputError);
    const e = err as MalformedInputError;
    const rela = elf.section(".rela.dyn")!;
    const index = elf.relocations(rela).findIndex((r) => r.offset === elf.section("ext_ptrs")!.addr);
    expect([e.offset, e.found]).toEqual([rela.offset + 24 * index, 'undefined symbol "missing_fn"']);
    expect(e.message).toContain("R_X86_64_64 (1) at ext_ptrs offset 0x0");
  });

  it("stackmaps.so: .llvm_stackmaps Function Addresses equal nm (pub_fn preemptible, internal_fn RELATIVE)", () => {
    const elf = ElfFile.parse(fx.bytes("stackmaps.so"));
    const nm = nmSymbols(fx.path("stackmaps.so"));
    const result = relocated(elf, ".llvm_stackmaps");
    expect(result.targets.get(16)).toMatchObject({ symbolName: "pub_fn", value: nmAddress(nm, "pub_fn"), kind: "symbol", sectionName: ".text" });
    expect(result.targets.get(40)).toMatchObject({ symbolName: "internal_fn", value: nmAddress(nm, "internal_fn"), kind: "relative", sectionName: ".text" });
    // The linker already wrote internal_fn's link-time address (RELATIVE); pub_fn's field is 0.
    const inFile = elf.section(".llvm_stackmaps")!.bytes();
    expect([u64At(inFile, 16), u64At(inFile, 40)]).toEqual([0, nmAddress(nm, "internal_fn")]);
  });

  it("an AArch64 .so (lib.so with e_machine and .rela.dyn types rewritten) relocates the same way", () => {
    const bytes = fx.bytes("lib.so").slice();
    const view = new DataView(bytes.buffer);
    view.setUint16(18, 183, true);
    const x86 = ElfFile.parse(fx.bytes("lib.so"));
    const rela = x86.section(".rela.dyn")!;
    const toAarch64 = new Map([
      [8, R_AARCH64_RELATIVE],
      [1, R_AARCH64_ABS64],
      [6, R_AARCH64_GLOB_DAT],
    ]);
    for (let at = rela.offset; at < rela.offset + rela.size; at += 24) view.setUint32(at + 8, toAarch64.get(view.getUint32(at + 8, true))!, true);
    const elf = ElfFile.parse(bytes);
    const ours = relocated(elf, "fn_ptrs");
    const reference = relocated(x86, "fn_ptrs");
    expect(ours.bytes).toEqual(reference.bytes);
    expect(ours.targets).toEqual(reference.targets);
    expect(relocated(elf, ".got").targets).toEqual(relocated(x86, ".got").targets);
    // x86-64's RELATIVE number means nothing on AArch64: unsupported, named.
    view.setUint32(rela.offset + 8, 8, true);
    const err = caught(() => relocatedSection(ElfFile.parse(bytes), "fn_ptrs")) as UnsupportedInputError;
    expect(err).toBeInstanceOf(UnsupportedInputError);
    expect(err.offset).toBe(rela.offset);
    expect(err.found).toBe("8");
  });

  it("exe (ET_EXEC, no PIE): fn_ptrs already holds final addresses; .got's undefined libc symbols are named", () => {
    const elf = ElfFile.parse(fx.bytes("exe"));
    const nm = nmSymbols(fx.path("exe"));
    const result = relocated(elf, "fn_ptrs");
    expect(result.targets.size).toBe(0);
    expect([u64At(result.bytes, 0), u64At(result.bytes, 8)]).toEqual([nmAddress(nm, "exe_f1"), nmAddress(nm, "exe_f2")]);
    const err = caught(() => relocatedSection(elf, ".got")) as MalformedInputError;
    expect(err).toBeInstanceOf(MalformedInputError);
    expect(String(err.found)).toMatch(/^undefined symbol "(__libc_start_main@GLIBC_2\.34|__libc_start_main|__gmon_start__)"$/);
  });

  it("non-allocated sections get no dynamic relocations", () => {
    const elf = ElfFile.parse(fx.bytes("lib.so"));
    expect(relocated(elf, ".comment").targets.size).toBe(0);
    expect(elf.sections.some((s) => s.type === SHT_RELA && !s.isAlloc)).toBe(false);
  });
});

describe.skipIf(!HAVE_TOOLS)("symbolAt", () => {
  const fx = HAVE_TOOLS ? fixtures() : undefined!;

  it("in a .so: a function starting at or containing the address, by link-time address", () => {
    const elf = ElfFile.parse(fx.bytes("lib.so"));
    const nm = nmSymbols(fx.path("lib.so"));
    for (const name of ["exported_fn", "hidden_fn", "local_fn", "b_fn", "b_hidden", "get_exported"]) {
      const address = nmAddress(nm, name);
      expect(symbolAt(elf, undefined, address)?.name).toBe(name);
      expect(symbolAt(elf, undefined, address + 1)?.name).toBe(name);
    }
    expect(symbolAt(elf, undefined, 0)).toBeUndefined();
    expect(symbolAt(elf, undefined, elf.section("fn_ptrs")!.addr)).toBeUndefined(); // data, not a function
  });

  it("in a .o: offsets within one section; the global name wins over a weak alias", () => {
    const elf = ElfFile.parse(fx.bytes("object.o"));
    const nm = nmSymbols(fx.path("object.o"));
    const text = elf.section(".text")!.index;
    expect(nmAddress(nm, "weak_g")).toBe(nmAddress(nm, "global_g"));
    expect(symbolAt(elf, text, nmAddress(nm, "global_g"))?.name).toBe("global_g");
    expect(symbolAt(elf, text, nmAddress(nm, "static_i") + 2)?.name).toBe("static_i");
    expect(symbolAt(elf, text, 0x10000)).toBeUndefined();
    expect(symbolAt(elf, elf.section("fn_ptrs")!.index, 0)).toBeUndefined();
  });

  it("falls back to .dynsym when .symtab is gone (strip)", () => {
    const elf = ElfFile.parse(fx.bytes("lib.so"));
    const symtab = elf.section(".symtab")!;
    const bytes = fx.bytes("lib.so").slice();
    new DataView(bytes.buffer).setUint32(symtab.headerOffset + 4, 1, true); // SHT_PROGBITS: no .symtab
    const stripped = ElfFile.parse(bytes);
    expect(stripped.symbols()).toEqual([]);
    const nm = nmSymbols(fx.path("lib.so"));
    expect(symbolAt(stripped, undefined, nmAddress(nm, "exported_fn"))?.name).toBe("exported_fn");
    expect(symbolAt(stripped, undefined, nmAddress(nm, "local_fn"))).toBeUndefined(); // local: only in .symtab
  });
});
