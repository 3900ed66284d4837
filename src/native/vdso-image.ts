import koffi from "koffi";
import type { Mapping } from "../unwind/module-map.js";

/**
 * The image of this process's vDSO, for the module map's pseudo mappings: the kernel maps it
 * readable ("r-xp ... [vdso]") and it has no file, so its ELF headers, symbols and .eh_frame are
 * copied from memory (a few pages, once per module map). Other pseudo mappings ([vvar], [stack],
 * [heap]) hold no code: undefined.
 */
export function vdsoImageOfThisProcess(mapping: Mapping): Uint8Array | undefined {
  if (mapping.path !== "[vdso]" || mapping.end <= mapping.start) return undefined;
  return new Uint8Array(koffi.view(BigInt(mapping.start), mapping.end - mapping.start)).slice();
}
