import type { ElfFile } from "../elf/elf-file.js";
import { absolute64RelocationName, STT_FUNC } from "../elf/elf-constants.js";
import { relocatedSection } from "../elf/relocate.js";
import type { ElfSection } from "../elf/elf-section.js";
import { MalformedInputError } from "../errors.js";
import { parseStackMapSection, type StackMapBlob } from "../stackmap/llvm-stackmap.js";
import { buildLlvmDescriptors, type ResolvedFunction } from "./llvm-map-loader.js";
import type { StatepointRecognition } from "../stackmap/statepoint.js";
import { type ElfMapFile, type ElfMapFormat, type ElfMaps, linkedSymbolNames, loadElfMaps } from "./elf-maps.js";

export const STACKMAP_SECTION = ".llvm_stackmaps";

/** The LLVM stack maps of one ELF file (their own parts). */
export interface LlvmStackMaps {
  section: ElfSection;
  /** Blobs over the bytes as stored in the file (what llvm-readobj prints). */
  rawBlobs: StackMapBlob[];
  /** The section with relocations applied: what a loaded program's memory holds (at bias 0). */
  relocatedBytes: Uint8Array;
  /** The same blobs over the relocated bytes. */
  blobs: StackMapBlob[];
  /** Per blob, per function: where it is and its name. */
  functions: ResolvedFunction[][];
}

/** The LLVM stack maps of one ELF file, decoded, relocated and joined with its unwind info (src/loader/elf-maps.ts). */
export type ObjectStackMaps = LlvmStackMaps & ElfMaps;

/**
 * Reads the `.llvm_stackmaps` of an ELF object, shared library or executable. Returns undefined
 * when the file has no such section. Errors carry the path.
 */
export function loadObjectStackMaps(bytes: Uint8Array, path: string, options: { recognition?: StatepointRecognition } = {}): ObjectStackMaps | undefined {
  return loadElfMaps(bytes, path, llvmElfFormat(options.recognition));
}

function llvmElfFormat(recognition: StatepointRecognition | undefined): ElfMapFormat<LlvmStackMaps> {
  return {
    read: readLlvmStackMaps,
    build: (parts, unwindRowAt, { architecture }) =>
      buildLlvmDescriptors(parts.blobs, {
        resolveFunction: (b, f) => parts.functions[b]![f]!,
        unwindRowAt,
        architecture,
        ...(recognition ? { recognition } : {}),
      }),
    keyPrefix: "",
    keyBytes: (parts) => [parts.relocatedBytes],
  };
}

/** The section over its stored and its relocated bytes, each function's address relocation checked (in a .o) and named. */
function readLlvmStackMaps({ elf, kind }: ElfMapFile): LlvmStackMaps | undefined {
  const relocated = relocatedSection(elf, STACKMAP_SECTION);
  if (relocated === undefined) return undefined;
  const section = relocated.section;
  const rawBlobs = parseStackMapSection(section.bytes(), section.offset);
  const blobs = parseStackMapSection(relocated.bytes, section.offset);
  const functions = blobs.map((blob) => {
    const list: ResolvedFunction[] = [];
    for (let f = 0; f < blob.numFunctions; f++) {
      const fieldOffset = blob.sectionOffset - section.offset + blob.functionAddressFieldOffset(f);
      const target = relocated.targets.get(fieldOffset);
      if (kind === "relocatable" && target === undefined) {
        throw new MalformedInputError(
          `function #${f} address relocation`,
          section.offset + fieldOffset,
          "no relocation",
          `an ${absolute64RelocationName(elf.machine)} relocation against the function (.rela.llvm_stackmaps)`,
        );
      }
      list.push({ address: blob.functionAddressRaw(f), name: target?.symbolName, sectionIndex: kind === "relocatable" ? target?.sectionIndex : undefined });
    }
    return list;
  });
  if (kind !== "relocatable") nameLinkedFunctions(elf, functions);
  return { section, rawBlobs, relocatedBytes: relocated.bytes, blobs, functions };
}

/** In a linked file, names come from the symbol tables (functions starting at the address). */
function nameLinkedFunctions(elf: ElfFile, functions: ResolvedFunction[][]): void {
  const byAddress = linkedSymbolNames(elf, STT_FUNC);
  for (const list of functions) for (const fn of list) fn.name ??= byAddress.get(fn.address);
}
