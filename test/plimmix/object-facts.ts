import { readFileSync } from "node:fs";
import { findLlvmTool, readobjRelocations, runTool, type Relocation } from "../support/llvm-tools.js";

/**
 * What the plimmix tests need to know about an ELF relocatable object, taken from the LLVM tools
 * (`llvm-readelf -S -s`, `llvm-readobj -r`) rather than from rootwalk's own ELF reader, so that
 * the plugin's output is checked against an independent decoder.
 *
 * In a `.o` every address is a (section, offset) pair: absolute u64 fields hold 0 and an
 * R_X86_64_64 relocation (RELA: the value is symbol + addend). `resolve` turns a relocation into
 * that pair; `u64Reference` reads a field and insists that it is relocated that way.
 */

export interface SectionFacts {
  index: number;
  name: string;
  type: string;
  fileOffset: number;
  sizeBytes: number;
  flags: string;
  alignBytes: number;
}

export interface SymbolFacts {
  name: string;
  value: number;
  sizeBytes: number;
  type: string;
  bind: string;
  /** Section index, or "UND" / "ABS" / "COM". */
  sectionIndex: number | string;
}

/** A location inside the object: a section and a byte offset in it. */
export interface Location {
  section: string;
  offset: number;
}

export class ObjectFacts {
  readonly bytes: Buffer;
  readonly sections: SectionFacts[];
  readonly symbols: SymbolFacts[];
  /** Relocation section name (".rela.data") -> relocations, by offset. */
  private readonly relocations: Map<string, Map<number, Relocation>>;

  constructor(readonly path: string) {
    this.bytes = readFileSync(path);
    const readelf = findLlvmTool("llvm-readelf");
    this.sections = parseSections(runTool(readelf, ["-S", "-W", path]));
    this.symbols = parseSymbols(runTool(readelf, ["-s", "-W", path]));
    this.relocations = new Map();
    for (const [name, list] of readobjRelocations(path)) {
      this.relocations.set(name, new Map(list.map((relocation) => [relocation.offset, relocation])));
    }
  }

  section(name: string): SectionFacts {
    const found = this.sections.find((section) => section.name === name);
    if (found === undefined) throw new Error(`${this.path}: no section ${name}`);
    return found;
  }

  sectionByIndex(index: number): SectionFacts {
    const found = this.sections.find((section) => section.index === index);
    if (found === undefined) throw new Error(`${this.path}: no section #${index}`);
    return found;
  }

  symbol(name: string): SymbolFacts {
    const found = this.symbols.filter((symbol) => symbol.name === name);
    if (found.length !== 1) throw new Error(`${this.path}: ${found.length} symbols named ${JSON.stringify(name)}`);
    return found[0] as SymbolFacts;
  }

  /** Where a defined symbol is. */
  locate(name: string): Location {
    const symbol = this.symbol(name);
    if (typeof symbol.sectionIndex !== "number") throw new Error(`${this.path}: ${name} is not defined in a section`);
    return { section: this.sectionByIndex(symbol.sectionIndex).name, offset: symbol.value };
  }

  /** The relocation at `offset` of section `section`, if any. */
  relocationAt(section: string, offset: number): Relocation | undefined {
    return this.relocations.get(`.rela${section}`)?.get(offset);
  }

  /** symbol + addend as a location (a section symbol names the section itself). */
  resolve(relocation: Relocation): Location {
    const addend = Number(relocation.addend);
    if (this.sections.some((section) => section.name === relocation.symbol)) {
      return { section: relocation.symbol, offset: addend };
    }
    const target = this.locate(relocation.symbol);
    return { section: target.section, offset: target.offset + addend };
  }

  /**
   * The u64 at `offset` of `section`: it must hold 0 in the file and carry an R_X86_64_64
   * relocation, whose target is returned with the symbol it names.
   */
  u64Reference(section: string, offset: number): Location & { symbol: string } {
    const facts = this.section(section);
    const stored = this.bytes.readBigUInt64LE(facts.fileOffset + offset);
    const relocation = this.relocationAt(section, offset);
    if (relocation === undefined) throw new Error(`${section}+0x${offset.toString(16)}: no relocation`);
    if (relocation.type !== "R_X86_64_64") throw new Error(`${section}+0x${offset.toString(16)}: ${relocation.type}`);
    if (stored !== 0n) throw new Error(`${section}+0x${offset.toString(16)}: stores ${stored}, expected 0 (RELA)`);
    return { ...this.resolve(relocation), symbol: relocation.symbol };
  }

  /** A view of a section's bytes in the file. */
  sectionBytes(name: string): Buffer {
    const section = this.section(name);
    return this.bytes.subarray(section.fileOffset, section.fileOffset + section.sizeBytes);
  }
}

function parseSections(text: string): SectionFacts[] {
  const sections: SectionFacts[] = [];
  // "  [ 5] .data   PROGBITS  0000000000000000 0000b0 000050 00  WA  0   0  8" (Flg may be empty)
  for (const line of text.split("\n")) {
    const match = /^\s*\[\s*(\d+)\]\s+(.*)$/.exec(line);
    if (match === null) continue;
    const index = Number(match[1]);
    if (index === 0) continue;
    const tokens = (match[2] as string).trim().split(/\s+/);
    if (tokens.length !== 9 && tokens.length !== 10) continue;
    const [name, type, , off, size] = tokens as [string, string, string, string, string];
    sections.push({
      index,
      name,
      type,
      fileOffset: Number.parseInt(off, 16),
      sizeBytes: Number.parseInt(size, 16),
      flags: tokens.length === 10 ? (tokens[6] as string) : "",
      alignBytes: Number(tokens[tokens.length - 1]),
    });
  }
  return sections;
}

function parseSymbols(text: string): SymbolFacts[] {
  const symbols: SymbolFacts[] = [];
  // "     7: 0000000000000000    80 OBJECT  GLOBAL DEFAULT     5 _GC_MAP_t1.c"
  for (const line of text.split("\n")) {
    const match = /^\s*\d+:\s+([0-9a-f]+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)$/.exec(line);
    if (match === null) continue;
    const index = match[6] as string;
    symbols.push({
      value: Number.parseInt(match[1] as string, 16),
      sizeBytes: Number(match[2]),
      type: match[3] as string,
      bind: match[4] as string,
      sectionIndex: /^\d+$/.test(index) ? Number(index) : index,
      name: match[7] as string,
    });
  }
  return symbols;
}
