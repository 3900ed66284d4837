import { MalformedInputError } from "../errors.js";
import { SHT_DYNAMIC } from "./elf-constants.js";
import type { ElfFile } from "./elf-file.js";

/*
 * The dynamic section (SHT_DYNAMIC), as far as rootwalk needs it:
 *   Elf64_Dyn (16 bytes): +0 i64 d_tag, +8 u64 d_val / d_ptr; the array ends at DT_NULL (0).
 *   DT_SONAME (14): d_val is an offset into the string table named by the section's sh_link.
 */
const DYN_ENTRY_SIZE_BYTES = 16;
const DT_NULL = 0;
const DT_SONAME = 14;

/** DT_SONAME of a shared object, or undefined (no dynamic section or no SONAME entry). */
export function elfSoname(elf: ElfFile): string | undefined {
  const dynamic = elf.sections.find((s) => s.type === SHT_DYNAMIC);
  if (dynamic === undefined || !dynamic.hasFileBytes) return undefined;
  const view = dynamic.view();
  for (let at = 0; at + DYN_ENTRY_SIZE_BYTES <= view.lengthBytes; at += DYN_ENTRY_SIZE_BYTES) {
    const tagLo = view.u32(at);
    const tagHi = view.u32(at + 4);
    if (tagHi !== 0) continue;
    if (tagLo === DT_NULL) return undefined;
    if (tagLo !== DT_SONAME) continue;
    const strtab = elf.sections[dynamic.link];
    if (strtab === undefined || !strtab.hasFileBytes) {
      throw new MalformedInputError("sh_link of the dynamic section", dynamic.headerOffset + 40, dynamic.link, "the index of its string table");
    }
    const offset = view.u64Number(at + 8, "DT_SONAME value");
    return strtab.view().cString(offset, "DT_SONAME string");
  }
  return undefined;
}
