import type { ElfFile } from "../elf/elf-file.js";
import { pcRelative32RelocationType } from "../elf/elf-constants.js";
import { cfiRowAt } from "../unwind/cfi.js";
import { architectureOfMachine } from "../arch/elf-architecture.js";
import { parseEhFrame, type EhFrame } from "../unwind/eh-frame.js";
import type { UnwindRow } from "./unwind-row.js";
import type { ObjectKind } from "./object-kind.js";

/**
 * In a `.o`, addresses are offsets within their section. Text sections are told apart by giving
 * each a disjoint window of a synthetic address space for the unwind index only.
 */
export const SECTION_WINDOW = 2 ** 32;

/**
 * `.eh_frame` with pc_begin made comparable to the maps' addresses (link-time addresses in a
 * linked file; section window + offset in a `.o`, from `.rela.eh_frame`), and the row lookup.
 */
export function loadElfUnwind(
  elf: ElfFile,
  kind: ObjectKind,
): { unwind: EhFrame | undefined; unwindRowAt: (address: number, sectionIndex: number | undefined) => UnwindRow | undefined } {
  const unwind = parseElfEhFrame(elf, kind);
  const unwindRowAt = (address: number, sectionIndex: number | undefined): UnwindRow | undefined => {
    if (unwind === undefined) return undefined;
    const key = kind === "relocatable" ? (sectionIndex ?? 0) * SECTION_WINDOW + address : address;
    const fde = unwind.findFde(key);
    return fde === undefined ? undefined : cfiRowAt(fde, key);
  };
  return { unwind, unwindRowAt };
}

function parseElfEhFrame(elf: ElfFile, kind: ObjectKind): EhFrame | undefined {
  const section = elf.section(".eh_frame");
  if (section === undefined || !section.hasFileBytes) return undefined;
  const architecture = architectureOfMachine(elf.machine);
  if (kind !== "relocatable") return parseEhFrame(section.bytes(), { sectionAddress: section.addr, architecture });
  const pcBeginTargets = new Map<number, number>();
  const pcRelative32 = pcRelative32RelocationType(elf.machine);
  for (const rel of elf.relocationSectionsFor(section.index)) {
    const symbols = elf.symbols();
    for (const r of elf.relocations(rel)) {
      if (r.type !== pcRelative32) continue;
      const symbol = symbols[r.symbolIndex];
      if (symbol?.definedSectionIndex === undefined) continue;
      pcBeginTargets.set(r.offset, symbol.definedSectionIndex * SECTION_WINDOW + symbol.value + r.addend);
    }
  }
  return parseEhFrame(section.bytes(), {
    sectionAddress: 0,
    resolvePcBegin: (fieldOffset, decoded) => pcBeginTargets.get(fieldOffset) ?? decoded,
    architecture,
  });
}
