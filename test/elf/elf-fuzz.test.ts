/**
 * Bad input never escapes as anything but a RootwalkError: real files (elf-fixtures.ts) cut
 * short at every length, and with bytes overwritten in the structures the reader decodes (ELF
 * header, program and section header tables, symbol, string and relocation tables). Every
 * public operation is run on whatever parses, each one on its own so that an early failure does
 * not hide a later one; results that come back must be self-consistent.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ElfFile } from "../../src/elf/elf-file.js";
import { SHT_DYNSYM, SHT_REL, SHT_RELA, SHT_RELR, SHT_STRTAB, SHT_SYMTAB } from "../../src/elf/elf-constants.js";
import { relocatedSection, symbolAt } from "../../src/elf/relocate.js";
import { RootwalkError } from "../../src/errors.js";
import { fixtures, HAVE_TOOLS } from "./elf-fixtures.js";

const FILES = ["object.o", "object-fs.o", "lib.so", "lib-relr.so", "stackmaps.o", "stackmaps-aarch64.o", "stackmaps.so", "exe"];

/** Runs `step`; a RootwalkError is an accepted outcome, anything else fails the test. */
function attempt(step: () => void): void {
  try {
    step();
  } catch (err) {
    if (!(err instanceof RootwalkError)) throw err;
  }
}

/** Parses `bytes` and runs every public operation, checking what comes back. */
function exercise(bytes: Uint8Array): void {
  let elf: ElfFile;
  try {
    elf = ElfFile.parse(bytes);
  } catch (err) {
    if (err instanceof RootwalkError) return;
    throw err;
  }
  for (const section of elf.sections) {
    const contents = section.bytes();
    if (section.hasFileBytes && contents.byteLength !== section.size) throw new Error(`${section.describe()}: short contents`);
    section.view();
  }
  attempt(() => elf.symbols());
  attempt(() => elf.dynamicSymbols());
  elf.loadSegments();
  for (const section of elf.sections) {
    if (section.type === SHT_RELA || section.type === SHT_REL) attempt(() => elf.relocations(section));
    elf.relocationSectionsFor(section.index);
  }
  for (const section of elf.sections) {
    attempt(() => {
      const result = relocatedSection(elf, section.name);
      if (result === undefined) throw new Error(`section ${section.name} not found by name`);
      for (const offset of result.targets.keys()) {
        if (offset < 0 || offset + 8 > result.bytes.byteLength) throw new Error(`target at ${offset} outside ${section.name}`);
      }
    });
  }
  attempt(() => {
    for (const address of [0, 0x1000, 0x1004, 0x401106]) symbolAt(elf, undefined, address);
    const text = elf.section(".text");
    if (text !== undefined) symbolAt(elf, text.index, 0);
  });
}

/** [start, end) byte ranges of the structures the reader decodes. */
function structureRanges(bytes: Uint8Array): [number, number][] {
  const elf = ElfFile.parse(bytes);
  const ranges: [number, number][] = [[0, 64]];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const shoff = Number(view.getBigUint64(40, true));
  ranges.push([shoff, shoff + 64 * elf.sections.length]);
  const phoff = Number(view.getBigUint64(32, true));
  if (elf.programHeaders.length > 0) ranges.push([phoff, phoff + 56 * elf.programHeaders.length]);
  const tables = new Set([SHT_SYMTAB, SHT_DYNSYM, SHT_STRTAB, SHT_RELA, SHT_RELR]);
  for (const s of elf.sections) if (tables.has(s.type) && s.size > 0) ranges.push([s.offset, s.offset + s.size]);
  for (const name of [".llvm_stackmaps", "fn_ptrs"]) {
    const s = elf.section(name);
    if (s !== undefined) ranges.push([s.offset, s.offset + s.size]);
  }
  return ranges;
}

describe.skipIf(!HAVE_TOOLS)("ElfFile and relocatedSection on damaged files throw only RootwalkErrors", () => {
  const fx = HAVE_TOOLS ? fixtures() : undefined!;

  it.each(FILES)("%s: the unharmed file passes every operation", (file) => {
    expect(() => exercise(fx.bytes(file))).not.toThrow();
  });

  it.each(FILES)("%s: truncated at every length", (file) => {
    const bytes = fx.bytes(file);
    for (let length = 0; length < bytes.length; length++) exercise(bytes.subarray(0, length));
  });

  it.each(FILES)("%s: each byte of the ELF header and section header table set to 0x00, 0x7f, 0x80, 0xff", (file) => {
    const bytes = fx.bytes(file);
    const [header, sectionHeaders] = structureRanges(bytes);
    const copy = bytes.slice();
    for (const [start, end] of [header!, sectionHeaders!]) {
      for (let at = start; at < end; at++) {
        for (const value of [0x00, 0x7f, 0x80, 0xff]) {
          copy[at] = value;
          exercise(copy);
        }
        copy[at] = bytes[at]!;
      }
    }
  });

  it("random overwrites in headers and tables (fast-check)", () => {
    const inputs = FILES.map((file) => ({ bytes: fx.bytes(file), ranges: structureRanges(fx.bytes(file)) }));
    const edit = fc.record({ range: fc.nat(), position: fc.nat(), value: fc.integer({ min: 0, max: 255 }) });
    fc.assert(
      fc.property(
        fc.nat({ max: inputs.length - 1 }),
        fc.array(edit, { minLength: 1, maxLength: 6 }),
        fc.option(fc.nat(), { nil: undefined }),
        (fileIndex, edits, cut) => {
          const { bytes, ranges } = inputs[fileIndex]!;
          const copy = bytes.slice();
          for (const { range, position, value } of edits) {
            const [start, end] = ranges[range % ranges.length]!;
            copy[start + (position % (end - start))] = value;
          }
          exercise(cut === undefined ? copy : copy.subarray(0, cut % copy.length));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("random files that start with a valid ELF64 header (fast-check)", () => {
    const header = fx.bytes("object.o").subarray(0, 16);
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 2048 }), (tail) => {
        const bytes = new Uint8Array(16 + tail.length);
        bytes.set(header);
        bytes.set(tail, 16);
        exercise(bytes);
      }),
      { numRuns: 2000 },
    );
  });
});
