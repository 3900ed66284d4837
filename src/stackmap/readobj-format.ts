import { LocationKind } from "../location/location-word.js";
import { requireArgument } from "../errors.js";
import { LocationView, StackMapBlob } from "./llvm-stackmap.js";

/**
 * The llvm-readobj major versions whose `--stackmap` output this file reproduces. From 14 to 19
 * neither tools/llvm-readobj/StackMapPrinter.h nor the ELF file header lines changed, so every
 * version prints the same text (the tests compare with readobj 14 and 19 byte for byte on the
 * whole corpus); a version that changes them gets a branch on `ReadobjVersion` here.
 */
export const READOBJ_VERSIONS = [14, 15, 16, 17, 18, 19] as const;
export type ReadobjVersion = (typeof READOBJ_VERSIONS)[number];

export function isReadobjVersion(major: number): major is ReadobjVersion {
  return (READOBJ_VERSIONS as readonly number[]).includes(major);
}

/**
 * Prints one blob exactly as `llvm-readobj --stackmap` (LLVM 14..19, StackMapPrinter.h) does, from the
 * raw section bytes: function addresses as stored (0 in a .o, before relocation), small constants
 * as unsigned 32-bit (-1 prints 4294967295), offsets signed (`R#6 + -24`), constant indices
 * 0-based inside `#` for ConstantIndex but 1-based in the list headings.
 */
export function formatBlobLikeReadobj(blob: StackMapBlob): string {
  requireArgument(blob instanceof StackMapBlob, "blob", blob, "a StackMapBlob (from parseStackMapSection)");
  const out: string[] = [];
  out.push(`LLVM StackMap Version: ${blob.version}`);
  out.push(`Num Functions: ${blob.numFunctions}`);
  for (let f = 0; f < blob.numFunctions; f++) {
    out.push(
      `  Function address: ${blob.functionAddressLong(f).toString()}, stack size: ${blob.stackSizeLong(f).toString()}, callsite record count: ${blob.recordCountLong(f).toString()}`,
    );
  }
  out.push(`Num Constants: ${blob.numConstants}`);
  for (let c = 0; c < blob.numConstants; c++) out.push(`  #${c + 1}: ${blob.constantLong(c).toString()}`);
  out.push(`Num Records: ${blob.numRecords}`);
  const loc = new LocationView();
  for (let r = 0; r < blob.numRecords; r++) {
    out.push(`  Record ID: ${blob.recordIdLong(r).toString()}, instruction offset: ${blob.instructionOffset(r)}`);
    const n = blob.numLocations(r);
    out.push(`    ${n} locations:`);
    for (let i = 0; i < n; i++) {
      blob.location(r, i, loc);
      out.push(`      #${i + 1}: ${formatLocation(blob, loc)}, size: ${loc.sizeBytes}`);
    }
    const parts: string[] = [];
    for (let i = 0; i < blob.numLiveOuts(r); i++) {
      parts.push(`R#${blob.liveOutDwarfReg(r, i)} (${blob.liveOutSizeBytes(r, i)}-bytes) `);
    }
    out.push(`    ${blob.numLiveOuts(r)} live-outs: [ ${parts.join("")}]`);
  }
  return out.join("\n") + "\n";
}

function formatLocation(blob: StackMapBlob, loc: LocationView): string {
  switch (loc.kind) {
    case LocationKind.Register:
      return `Register R#${loc.dwarfReg}`;
    case LocationKind.Direct:
      return `Direct R#${loc.dwarfReg} + ${loc.offsetBytes}`;
    case LocationKind.Indirect:
      return `Indirect [R#${loc.dwarfReg} + ${loc.offsetBytes}]`;
    case LocationKind.Constant:
      return `Constant ${loc.smallConstant >>> 0}`;
    case LocationKind.ConstantIndex:
      return `ConstantIndex #${loc.constantIndex} (${blob.constantLong(loc.constantIndex).toString()})`;
  }
}

export interface ReadobjFileHeader {
  /** The path as the user typed it (readobj prints it verbatim). */
  path: string;
  /** ELF machine: 62 x86-64, 183 AArch64. */
  machine: number;
  /** DT_SONAME of a shared object, if it has one. */
  soname: string | undefined;
}

const FORMAT_NAMES: Record<number, [format: string, arch: string]> = {
  62: ["elf64-x86-64", "x86_64"],
  183: ["elf64-littleaarch64", "aarch64"],
};

/** The lines readobj prints before any section dump of an ELF64 little-endian file. */
export function formatReadobjFileHeader(header: ReadobjFileHeader): string {
  const [format, arch] = FORMAT_NAMES[header.machine] ?? [`elf64-unknown`, "unknown"];
  return `\nFile: ${header.path}\nFormat: ${format}\nArch: ${arch}\nAddressSize: 64bit\nLoadName: ${header.soname ?? "<Not found>"}\n`;
}
