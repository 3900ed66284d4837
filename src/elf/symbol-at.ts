import { STB_GLOBAL, STB_WEAK, STT_FUNC } from "./elf-constants.js";
import type { ElfFile } from "./elf-file.js";
import type { ElfSymbol } from "./elf-symbol.js";

/**
 * The best function symbol (STT_FUNC) that starts at `address` or contains it
 * (`value <= address < value + size`), for printing names.
 *
 * `sectionIndex` restricts the search to symbols defined in that section: pass it for a .o,
 * where addresses are offsets within a section; pass undefined for an executable or .so, where
 * they are link-time addresses. `.symtab` is searched first, then `.dynsym` (a stripped .so
 * keeps only the latter).
 *
 * Preference, in order: a symbol starting exactly at the address; the innermost containing one
 * (greatest start); STB_GLOBAL over STB_WEAK over STB_LOCAL (aliases); the lowest table index.
 * Undefined, absolute and common symbols never match.
 */
export function symbolAt(elf: ElfFile, sectionIndex: number | undefined, address: number): ElfSymbol | undefined {
  return functionIndex(elf.symbols(), sectionIndex).find(address) ?? functionIndex(elf.dynamicSymbols(), sectionIndex).find(address);
}

/** A function symbol that starts exactly at `address` (the preferred one among aliases). */
export function functionStartingAt(elf: ElfFile, sectionIndex: number | undefined, address: number): ElfSymbol | undefined {
  for (const symbols of [elf.symbols(), elf.dynamicSymbols()]) {
    const found = functionIndex(symbols, sectionIndex).find(address);
    if (found !== undefined && found.value === address) return found;
  }
  return undefined;
}

const ALL_SECTIONS = -1;

/**
 * Function symbols sorted by start (ties: best binding first, then table index), with the
 * running maximum of their end addresses so that a backward scan can stop as soon as nothing
 * earlier can contain the address. Built once per (symbol table, section) and cached.
 */
class FunctionIndex {
  private readonly maxEnd: number[] = [];

  constructor(private readonly sorted: readonly ElfSymbol[]) {
    let max = 0;
    for (const symbol of sorted) {
      max = Math.max(max, symbol.value + symbol.size);
      this.maxEnd.push(max);
    }
  }

  find(address: number): ElfSymbol | undefined {
    const sorted = this.sorted;
    // First index whose start is >= address.
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid]!.value < address) lo = mid + 1;
      else hi = mid;
    }
    const exact = sorted[lo];
    if (exact !== undefined && exact.value === address) return exact;
    // Walk back over earlier starts; within a group of equal starts the best-ranked comes first,
    // so keep the last containing symbol seen in the group.
    let best: ElfSymbol | undefined;
    for (let i = lo - 1; i >= 0 && this.maxEnd[i]! > address; i--) {
      const symbol = sorted[i]!;
      if (best !== undefined && symbol.value !== best.value) break;
      if (symbol.value + symbol.size > address) best = symbol;
    }
    return best;
  }
}

const cache = new WeakMap<readonly ElfSymbol[], Map<number, FunctionIndex>>();

function functionIndex(symbols: readonly ElfSymbol[], sectionIndex: number | undefined): FunctionIndex {
  let perSection = cache.get(symbols);
  if (perSection === undefined) {
    perSection = new Map();
    cache.set(symbols, perSection);
  }
  const key = sectionIndex ?? ALL_SECTIONS;
  let index = perSection.get(key);
  if (index === undefined) {
    const functions = symbols.filter(
      (s) => s.type === STT_FUNC && s.definedSectionIndex !== undefined && (sectionIndex === undefined || s.definedSectionIndex === sectionIndex),
    );
    functions.sort((a, b) => a.value - b.value || bindRank(a) - bindRank(b) || a.index - b.index);
    index = new FunctionIndex(functions);
    perSection.set(key, index);
  }
  return index;
}

function bindRank(symbol: ElfSymbol): number {
  return symbol.bind === STB_GLOBAL ? 0 : symbol.bind === STB_WEAK ? 1 : 2;
}
