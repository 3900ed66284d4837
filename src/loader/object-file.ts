import { createHash } from "node:crypto";
import { ElfFile } from "../elf/elf-file.js";
import type { Architecture } from "../arch/architecture.js";
import { architectureOfMachine } from "../arch/elf-architecture.js";
import { absolute64RelocationName } from "../elf/elf-constants.js";
import { relocatedSection } from "../elf/relocate.js";
import type { ElfSection } from "../elf/elf-section.js";
import { MalformedInputError, RootwalkError, withContext } from "../errors.js";
import type { FrameDescriptors } from "../safepoints/frame-descriptors.js";
import { parseStackMapSection, type StackMapBlob } from "../stackmap/llvm-stackmap.js";
import type { EhFrame } from "../unwind/eh-frame.js";
import { loadElfUnwind } from "./elf-unwind.js";
import { type ObjectKind, elfObjectKind } from "./object-kind.js";
import { buildLlvmDescriptors, type ResolvedFunction } from "./llvm-map-loader.js";
import type { StatepointRecognition } from "../stackmap/statepoint.js";
import { elfSoname } from "../elf/dynamic.js";

export const STACKMAP_SECTION = ".llvm_stackmaps";

/** The LLVM stack maps of one ELF file, decoded, relocated and joined with its unwind info. */
export interface ObjectStackMaps {
  path: string;
  elf: ElfFile;
  /** From e_machine: whose registers the maps and unwind info name. */
  architecture: Architecture;
  kind: ObjectKind;
  soname: string | undefined;
  section: ElfSection;
  /** Blobs over the bytes as stored in the file (what llvm-readobj prints). */
  rawBlobs: StackMapBlob[];
  /** The section with relocations applied: what a loaded program's memory holds (at bias 0). */
  relocatedBytes: Uint8Array;
  /** The same blobs over the relocated bytes. */
  blobs: StackMapBlob[];
  /** Per blob, per function: where it is and its name. */
  functions: ResolvedFunction[][];
  unwind: EhFrame | undefined;
  descriptors: FrameDescriptors;
  /** sha256 of the relocated stack maps and the unwind info: the registry's "same map" key. */
  contentKey: string;
}

/**
 * Reads the `.llvm_stackmaps` of an ELF object, shared library or executable. Returns undefined
 * when the file has no such section. Errors carry the path.
 */
export function loadObjectStackMaps(bytes: Uint8Array, path: string, options: { recognition?: StatepointRecognition } = {}): ObjectStackMaps | undefined {
  try {
    const elf = ElfFile.parse(bytes);
    const architecture = architectureOfMachine(elf.machine);
    const kind = elfObjectKind(elf);
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
        const address = blob.functionAddressRaw(f);
        if (kind === "relocatable" && target === undefined) {
          throw new MalformedInputError(
            `function #${f} address relocation`,
            section.offset + fieldOffset,
            "no relocation",
            `an ${absolute64RelocationName(elf.machine)} relocation against the function (.rela.llvm_stackmaps)`,
          );
        }
        list.push({
          address,
          name: target?.symbolName,
          sectionIndex: kind === "relocatable" ? target?.sectionIndex : undefined,
        });
      }
      return list;
    });
    if (kind !== "relocatable") nameLinkedFunctions(elf, functions);

    const { unwind, unwindRowAt } = loadElfUnwind(elf, kind);
    const descriptors = buildLlvmDescriptors(blobs, {
      resolveFunction: (b, f) => functions[b]![f]!,
      unwindRowAt,
      architecture,
      ...(options.recognition ? { recognition: options.recognition } : {}),
    });
    const hash = createHash("sha256").update(relocated.bytes);
    const ehFrame = elf.section(".eh_frame");
    if (ehFrame?.hasFileBytes) hash.update(ehFrame.bytes());
    return {
      path,
      elf,
      architecture,
      kind,
      soname: elfSoname(elf),
      section,
      rawBlobs,
      relocatedBytes: relocated.bytes,
      blobs,
      functions,
      unwind,
      descriptors,
      contentKey: hash.digest("hex"),
    };
  } catch (e) {
    if (e instanceof RootwalkError) throw withContext(e, path);
    throw e;
  }
}

/** In a linked file, names come from the symbol tables (functions starting at the address). */
function nameLinkedFunctions(elf: ElfFile, functions: ResolvedFunction[][]): void {
  const byAddress = new Map<number, string>();
  for (const table of [elf.dynamicSymbols(), elf.symbols()]) {
    for (const s of table) {
      if (s.type === 2 /* STT_FUNC */ && s.definedSectionIndex !== undefined && s.name !== "") byAddress.set(s.value, s.name);
    }
  }
  for (const list of functions) for (const fn of list) fn.name ??= byAddress.get(fn.address);
}
