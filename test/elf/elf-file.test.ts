/**
 * ElfFile against binutils: for real files built by gcc / llc (see elf-fixtures.ts) the
 * sections, symbols, relocations and PT_LOAD segments must be exactly what readelf prints.
 * Then one case per validation rule: a real file patched in one field must fail with the typed
 * error that names the field's offset, the value found and the value expected.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ElfFile } from "../../src/elf/elf-file.js";
import { EM_AARCH64, EM_X86_64, ET_DYN, ET_EXEC, ET_REL, SHN_ABS, SHN_COMMON, SHN_UNDEF, SHT_REL, SHT_RELA, SHT_SYMTAB } from "../../src/elf/elf-constants.js";
import { relocatedSection } from "../../src/elf/relocate.js";
import { MalformedInputError, RootwalkError, TruncatedInputError, UnsupportedInputError } from "../../src/errors.js";
import { fixtures, HAVE_TOOLS, readelfRelocations, readelfSections, readelfSymbols } from "./elf-fixtures.js";

const ALL_FILES = ["object.o", "object-fs.o", "lib.so", "lib-relr.so", "stackmaps.o", "stackmaps-aarch64.o", "stackmaps.so", "exe"];

const SECTION_TYPES: Record<string, number> = {
  NULL: 0,
  PROGBITS: 1,
  SYMTAB: 2,
  STRTAB: 3,
  RELA: 4,
  HASH: 5,
  DYNAMIC: 6,
  NOTE: 7,
  NOBITS: 8,
  REL: 9,
  DYNSYM: 11,
  INIT_ARRAY: 14,
  FINI_ARRAY: 15,
  GROUP: 17,
  RELR: 19,
  GNU_HASH: 0x6ffffff6,
  VERSYM: 0x6fffffff,
  VERNEED: 0x6ffffffe,
  X86_64_UNWIND: 0x70000001,
  LLVM_ADDRSIG: 0x6fff4c03,
};
const SYMBOL_TYPES: Record<string, number> = { NOTYPE: 0, OBJECT: 1, FUNC: 2, SECTION: 3, FILE: 4, COMMON: 5, TLS: 6, IFUNC: 10 };
const SYMBOL_BINDS: Record<string, number> = { LOCAL: 0, GLOBAL: 1, WEAK: 2, UNIQUE: 10 };
const VISIBILITIES: Record<string, number> = { DEFAULT: 0, INTERNAL: 1, HIDDEN: 2, PROTECTED: 3 };
const SPECIAL_NDX: Record<string, number> = { UND: SHN_UNDEF, ABS: SHN_ABS, COM: SHN_COMMON };

/** A copy of `bytes` with `edit` applied through a little-endian DataView. */
function patched(bytes: Uint8Array, edit: (view: DataView) => void): Uint8Array {
  const copy = bytes.slice();
  edit(new DataView(copy.buffer));
  return copy;
}

/** Runs `fn`, expecting a `type` error; returns it for field checks. */
function expectError<T extends RootwalkError>(type: new (...args: never[]) => T, fn: () => unknown): T {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(type);
    return err as T;
  }
  throw new Error(`expected ${type.name}, nothing was thrown`);
}

describe.skipIf(!HAVE_TOOLS)("ElfFile on files built by gcc and llc, compared with readelf", () => {
  const fx = HAVE_TOOLS ? fixtures() : undefined!;

  it("reads the header: type and machine", () => {
    const kinds: [string, number, number][] = [
      ["object.o", ET_REL, EM_X86_64],
      ["stackmaps-aarch64.o", ET_REL, EM_AARCH64],
      ["lib.so", ET_DYN, EM_X86_64],
      ["exe", ET_EXEC, EM_X86_64],
    ];
    for (const [name, type, machine] of kinds) {
      const elf = ElfFile.parse(fx.bytes(name));
      expect([name, elf.type, elf.machine]).toEqual([name, type, machine]);
    }
  });

  it.each(ALL_FILES)("%s: sections equal readelf -SW", (name) => {
    const elf = ElfFile.parse(fx.bytes(name));
    const expected = readelfSections(fx.path(name));
    expect(expected.length).toBeGreaterThan(5);
    expect(elf.sections.length).toBe(expected.length);
    for (const row of expected) {
      const s = elf.sections[row.index]!;
      expect({ name: s.name, addr: s.addr, offset: s.offset, size: s.size, entsize: s.entsize, link: s.link, info: s.info, align: s.addrAlign }).toEqual({
        name: row.name,
        addr: row.addr,
        offset: row.offset,
        size: row.size,
        entsize: row.entsize,
        link: row.link,
        info: row.info,
        align: row.align,
      });
      const type = SECTION_TYPES[row.type];
      if (type !== undefined) expect([s.name, s.type]).toEqual([row.name, type]);
      expect(s.isAlloc).toBe(row.flags.includes("A"));
      if (s.hasFileBytes) {
        // Zero-copy: the section's bytes are a window onto the file.
        expect(s.bytes().buffer).toBe(fx.bytes(name).buffer);
        expect(s.bytes().byteLength).toBe(row.size);
        expect(s.view().baseOffset).toBe(row.offset);
      }
    }
    expect(elf.section(".text")?.name).toBe(".text");
    expect(elf.section("no such section")).toBeUndefined();
  });

  it.each(ALL_FILES)("%s: .symtab and .dynsym equal readelf -sW", (name) => {
    const elf = ElfFile.parse(fx.bytes(name));
    for (const [table, ours] of [
      [".symtab", elf.symbols()],
      [".dynsym", elf.dynamicSymbols()],
    ] as const) {
      const expected = readelfSymbols(fx.path(name), table);
      expect(ours.length).toBe(expected.length);
      for (const row of expected) {
        const sym = ours[row.index]!;
        const ndx = SPECIAL_NDX[row.ndx] ?? Number(row.ndx);
        expect({ value: sym.value, size: sym.size, type: sym.type, bind: sym.bind, visibility: sym.visibility, sectionIndex: sym.sectionIndex }).toEqual({
          value: row.value,
          size: row.size,
          type: SYMBOL_TYPES[row.type],
          bind: SYMBOL_BINDS[row.bind],
          visibility: VISIBILITIES[row.vis],
          sectionIndex: ndx,
        });
        // readelf names section symbols after their section (their st_name is usually empty)
        // and appends .dynsym versions from .gnu.version ("@GLIBC_2.34 (2)"); .symtab names
        // written by ld carry "@GLIBC_2.34" themselves.
        const readelfName = table === ".dynsym" ? row.name.replace(/@.*$/, "") : row.name;
        if (row.type === "SECTION") expect(["", readelfName]).toContain(sym.name);
        else expect(sym.name).toBe(readelfName);
        expect(sym.definedSectionIndex).toBe(ndx === SHN_UNDEF || ndx >= 0xff00 ? undefined : ndx);
      }
    }
    // Lazy and cached: the same array every time.
    expect(elf.symbols()).toBe(elf.symbols());
    expect(elf.dynamicSymbols()).toBe(elf.dynamicSymbols());
  });

  it.each(ALL_FILES)("%s: every relocation section equals readelf -rW", (name) => {
    const elf = ElfFile.parse(fx.bytes(name));
    const { rela } = readelfRelocations(fx.path(name));
    const ourRela = elf.sections.filter((s) => s.type === SHT_RELA);
    expect(ourRela.map((s) => s.name).sort()).toEqual([...rela.keys()].sort());
    for (const section of ourRela) {
      const ours = elf.relocations(section).map((r) => ({ offset: r.offset, type: r.type, symbolIndex: r.symbolIndex, addend: r.addend }));
      const expected = rela.get(section.name)!.map((r) => ({ offset: r.offset, type: r.typeNumber, symbolIndex: r.symbolIndex, addend: r.addend }));
      expect(ours).toEqual(expected);
      if (elf.type === ET_REL) expect(elf.relocationSectionsFor(section.info)).toContain(section);
    }
  });

  it("finds .rela.<name> by the target's index", () => {
    const elf = ElfFile.parse(fx.bytes("stackmaps.o"));
    const stackmaps = elf.section(".llvm_stackmaps")!;
    expect(elf.relocationSectionsFor(stackmaps.index).map((s) => s.name)).toEqual([".rela.llvm_stackmaps"]);
    expect(elf.relocationSectionsFor(elf.section(".strtab")!.index)).toEqual([]);
  });

  it.each(["lib.so", "exe"])("%s: PT_LOAD segments equal readelf -lW", (name) => {
    const elf = ElfFile.parse(fx.bytes(name));
    const rows = execFileSync("readelf", ["-lW", fx.path(name)], { encoding: "utf8" })
      .split("\n")
      .map((line) => /^\s*LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)/.exec(line))
      .filter((m) => m !== null)
      .map((m) => ({ offset: parseInt(m[1]!, 16), vaddr: parseInt(m[2]!, 16), fileSize: parseInt(m[3]!, 16), memSize: parseInt(m[4]!, 16) }));
    expect(rows.length).toBeGreaterThan(1);
    expect(elf.loadSegments().map((p) => ({ offset: p.offset, vaddr: p.vaddr, fileSize: p.fileSize, memSize: p.memSize }))).toEqual(rows);
    expect(ElfFile.parse(fx.bytes("object.o")).programHeaders).toEqual([]);
  });
});

describe.skipIf(!HAVE_TOOLS)("ElfFile rejects bad input with typed errors naming offset, found and expected", () => {
  const fx = HAVE_TOOLS ? fixtures() : undefined!;
  const object = (): Uint8Array => fx.bytes("object.o");
  const shoff = (bytes: Uint8Array): number => Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(40, true));
  /** File offset of the section header of `name` in object.o. */
  const headerOf = (name: string): number => ElfFile.parse(object()).section(name)!.headerOffset;

  it("input shorter than the ELF header: TruncatedInputError at 0", () => {
    const err = expectError(TruncatedInputError, () => ElfFile.parse(object().subarray(0, 40)));
    expect([err.offset, err.neededBytes, err.availableBytes]).toEqual([0, 64, 40]);
  });

  it("bad magic: MalformedInputError at 0", () => {
    const err = expectError(MalformedInputError, () => ElfFile.parse(patched(object(), (v) => v.setUint8(1, 0x46))));
    expect([err.offset, err.found, err.expected]).toEqual([0, "7f 46 4c 46", "7f 45 4c 46"]);
  });

  it("ELFCLASS32: UnsupportedInputError at 4", () => {
    const err = expectError(UnsupportedInputError, () => ElfFile.parse(patched(object(), (v) => v.setUint8(4, 1))));
    expect([err.offset, err.found]).toEqual([4, "ELFCLASS32 (1)"]);
  });

  it("class 3: MalformedInputError at 4", () => {
    const err = expectError(MalformedInputError, () => ElfFile.parse(patched(object(), (v) => v.setUint8(4, 3))));
    expect([err.offset, err.found]).toEqual([4, 3]);
  });

  it("big-endian: UnsupportedInputError at 5", () => {
    const err = expectError(UnsupportedInputError, () => ElfFile.parse(patched(object(), (v) => v.setUint8(5, 2))));
    expect(err.offset).toBe(5);
    expect(err.message).toMatch(/big-endian/);
  });

  it("e_version 2: MalformedInputError at 20", () => {
    const err = expectError(MalformedInputError, () => ElfFile.parse(patched(object(), (v) => v.setUint32(20, 2, true))));
    expect([err.offset, err.found, err.expected]).toEqual([20, 2, "1"]);
  });

  it("e_shentsize 40: MalformedInputError at 58", () => {
    const err = expectError(MalformedInputError, () => ElfFile.parse(patched(object(), (v) => v.setUint16(58, 40, true))));
    expect([err.offset, err.found, err.expected]).toEqual([58, 40, "64"]);
  });

  it("e_shstrndx past the table: MalformedInputError at 62", () => {
    const count = ElfFile.parse(object()).sections.length;
    const err = expectError(MalformedInputError, () => ElfFile.parse(patched(object(), (v) => v.setUint16(62, count, true))));
    expect([err.offset, err.found]).toEqual([62, count]);
  });

  it("e_shstrndx naming a non-string table: MalformedInputError at that header's sh_type", () => {
    const text = ElfFile.parse(object()).section(".text")!;
    const err = expectError(MalformedInputError, () => ElfFile.parse(patched(object(), (v) => v.setUint16(62, text.index, true))));
    expect([err.offset, err.found]).toEqual([text.headerOffset + 4, 1]);
  });

  it("section header table past the end: TruncatedInputError at e_shoff", () => {
    const bytes = object();
    const err = expectError(TruncatedInputError, () => ElfFile.parse(bytes.subarray(0, bytes.length - 10)));
    expect(err.offset).toBe(shoff(bytes));
  });

  it("section contents past the end: TruncatedInputError at sh_offset", () => {
    const text = ElfFile.parse(object()).section(".text")!;
    const err = expectError(TruncatedInputError, () =>
      ElfFile.parse(patched(object(), (v) => v.setBigUint64(text.headerOffset + 32, BigInt(object().length), true))),
    );
    expect([err.offset, err.neededBytes]).toEqual([text.offset, object().length]);
  });

  it("sh_offset beyond the file: MalformedInputError at the sh_offset field", () => {
    const at = headerOf(".text") + 24;
    const err = expectError(MalformedInputError, () => ElfFile.parse(patched(object(), (v) => v.setBigUint64(at, 0x100000n, true))));
    expect([err.offset, err.found]).toEqual([at, "0x100000"]);
  });

  it("an address at or above 2^53: MalformedInputError at sh_addr", () => {
    const at = headerOf(".text") + 16;
    const err = expectError(MalformedInputError, () => ElfFile.parse(patched(object(), (v) => v.setBigUint64(at, 1n << 60n, true))));
    expect([err.offset, err.found, err.expected]).toEqual([at, "0x1000000000000000", "a value below 2^53"]);
  });

  it("a section name offset past .shstrtab: MalformedInputError at sh_name", () => {
    const at = headerOf(".text");
    const err = expectError(MalformedInputError, () => ElfFile.parse(patched(object(), (v) => v.setUint32(at, 0xffff, true))));
    expect([err.offset, err.found]).toEqual([at, "0xffff"]);
  });

  it("a symbol value at or above 2^53: MalformedInputError from symbols() at st_value", () => {
    const symtab = ElfFile.parse(object()).section(".symtab")!;
    const at = symtab.offset + 3 * 24 + 8;
    const elf = ElfFile.parse(patched(object(), (v) => v.setBigUint64(at, 0xffffffffffffffffn, true)));
    const err = expectError(MalformedInputError, () => elf.symbols());
    expect([err.offset, err.found]).toEqual([at, "0xffffffffffffffff"]);
  });

  it(".symtab sh_link not naming a string table: MalformedInputError at sh_link", () => {
    const symtab = ElfFile.parse(object()).section(".symtab")!;
    const elf = ElfFile.parse(patched(object(), (v) => v.setUint32(symtab.headerOffset + 40, symtab.index, true)));
    const err = expectError(MalformedInputError, () => elf.symbols());
    expect([err.offset, err.found]).toEqual([symtab.headerOffset + 40, `${symtab.index} (sh_type ${SHT_SYMTAB})`]);
  });

  it("a symbol table with a wrong sh_entsize: MalformedInputError at sh_entsize", () => {
    const symtab = ElfFile.parse(object()).section(".symtab")!;
    const elf = ElfFile.parse(patched(object(), (v) => v.setBigUint64(symtab.headerOffset + 56, 16n, true)));
    const err = expectError(MalformedInputError, () => elf.symbols());
    expect([err.offset, err.found, err.expected]).toEqual([symtab.headerOffset + 56, 16, "24"]);
  });

  it("SHT_REL: UnsupportedInputError from relocations() and relocatedSection()", () => {
    const rela = ElfFile.parse(object()).section(".relafn_ptrs")!;
    const elf = ElfFile.parse(patched(object(), (v) => v.setUint32(rela.headerOffset + 4, SHT_REL, true)));
    const err = expectError(UnsupportedInputError, () => elf.relocations(elf.section(".relafn_ptrs")!));
    expect([err.offset, err.found, err.supported]).toEqual([rela.headerOffset + 4, "SHT_REL (9)", "SHT_RELA (4)"]);
    expectError(UnsupportedInputError, () => relocatedSection(elf, "fn_ptrs"));
  });

  it("a symbol index past the symbol table: MalformedInputError at r_info", () => {
    const rela = ElfFile.parse(object()).section(".relafn_ptrs")!;
    const elf = ElfFile.parse(patched(object(), (v) => v.setUint32(rela.offset + 12, 5000, true)));
    const err = expectError(MalformedInputError, () => relocatedSection(elf, "fn_ptrs"));
    expect([err.offset, err.found]).toEqual([rela.offset + 12, 5000]);
  });

  it("a relocation past the end of its section: MalformedInputError at the entry", () => {
    const rela = ElfFile.parse(object()).section(".relafn_ptrs")!;
    const elf = ElfFile.parse(patched(object(), (v) => v.setBigUint64(rela.offset + 24, 0x34n, true)));
    const err = expectError(MalformedInputError, () => relocatedSection(elf, "fn_ptrs"));
    expect([err.offset, err.found]).toEqual([rela.offset + 24, "0x34"]);
  });
});
