import { ElfFile } from "../elf/elf-file.js";
import { describeGcrootMaps, describeLlvmMaps, type MapDescription } from "./describe-safepoints.js";
import type { ObjectStackMaps } from "./object-file.js";
import { loadStackMapFile } from "./stack-map-file.js";

/*
 * What `rootwalk dump` prints and `rootwalk check` compares, for one file: the description of
 * each of its stack maps (src/loader/describe-safepoints.ts), with functions labelled by address
 * (an executable or a library) or section + offset (a relocatable object).
 */

/**
 * Every stack map of an ELF file, whatever its format: LLVM's `.llvm_stackmaps` section, plimmix
 * `_GC_MAP_*` symbols, OCaml `caml*__frametable` symbols (a file can hold several).
 */
export function describeFile(bytes: Uint8Array, path: string): MapDescription[] {
  const maps: MapDescription[] = [];
  const { llvm, plimmix, ocaml } = loadStackMapFile(bytes, path);
  if (llvm !== undefined) maps.push(...describeObject(llvm));
  if (plimmix !== undefined) {
    const labels = plimmix.functions.flat();
    maps.push(
      ...describeGcrootMaps(
        path,
        "plimmix-v1",
        plimmix.maps.map((m) => ({ sectionOffset: m.sectionOffset, safepoints: m.numSafepoints })),
        plimmix.descriptors,
        (fi) => functionLabel(plimmix.elf, plimmix.kind, labels[fi] ?? plimmix.descriptors.functions[fi]!),
      ),
    );
  }
  if (ocaml !== undefined) {
    maps.push(
      ...describeGcrootMaps(
        path,
        "ocaml",
        ocaml.tables.map((t) => ({ sectionOffset: t.sectionOffset, safepoints: t.numDescriptors })),
        ocaml.descriptors,
        (fi) => functionLabel(ocaml.elf, ocaml.kind, ocaml.functions[fi]!),
      ),
    );
  }
  return maps;
}

function functionLabel(elf: ElfFile, kind: string, fn: { address: number; sectionIndex?: number | undefined }): string {
  if (kind === "relocatable") {
    const section = fn.sectionIndex === undefined ? "?" : (elf.sections[fn.sectionIndex]?.name ?? "?");
    return `${section}+0x${fn.address.toString(16)}`;
  }
  return `0x${fn.address.toString(16)}`;
}

export function describeObject(loaded: ObjectStackMaps): MapDescription[] {
  return describeLlvmMaps(loaded.path, loaded.blobs, loaded.descriptors, (b, f) => functionLabel(loaded.elf, loaded.kind, loaded.functions[b]![f]!));
}
