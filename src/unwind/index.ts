export { parseEhFrame, EhFrame, type Cie, type Fde, type ParseEhFrameOptions } from "./eh-frame.js";
export { cfiRowAt, cfiRowsAt, cfiTable, registerRule, MAX_REMEMBERED_STATES, type CfiRow, type RegisterRule, type FullRegisterRule } from "./cfi.js";
export {
  type EncodedPointer,
  DW_EH_PE_OMIT,
  DW_EH_PE_PCREL,
  DW_EH_PE_INDIRECT,
  DW_EH_PE_SDATA4,
  DW_EH_PE_UDATA4,
  DW_EH_PE_ABSPTR,
} from "./pointer-encoding.js";
export { X86_64_DWARF } from "../arch/x86-64.js";
