import { ByteView } from "../bytes/byte-view.js";
import { InvalidArgumentError, MalformedInputError, UnsupportedInputError, hex, requireArgument } from "../errors.js";
import { DwarfCursor } from "./dwarf-cursor.js";
import type { Cie, Fde } from "./eh-frame.js";
import { readEncodedPointer } from "./pointer-encoding.js";

/*
 * Call-frame instructions (DWARF 5 §6.4.2, plus the GNU extensions .eh_frame uses).
 *
 * One opcode byte; when its top two bits are non-zero they select a primary opcode and the low
 * six bits are its first operand:
 *
 *   0x40|delta  DW_CFA_advance_loc              loc += delta * code_alignment_factor
 *   0x80|reg    DW_CFA_offset           uleb    reg saved at CFA + uleb * data_alignment_factor
 *   0xc0|reg    DW_CFA_restore                  reg gets its rule after the CIE's instructions
 *
 * otherwise the whole byte is the opcode ("f" = factored by data_alignment_factor):
 *
 *   0x00 nop                                    0x0c def_cfa            reg uleb
 *   0x01 set_loc            address (FDE enc.)  0x0d def_cfa_register   reg
 *   0x02 advance_loc1       u8 delta            0x0e def_cfa_offset     uleb
 *   0x03 advance_loc2       u16 delta           0x0f def_cfa_expression block     -> unsupported
 *   0x04 advance_loc4       u32 delta           0x10 expression         reg block -> unsupported
 *   0x05 offset_extended    reg uleb(f)         0x11 offset_extended_sf reg sleb(f)
 *   0x06 restore_extended   reg                 0x12 def_cfa_sf         reg sleb(f)
 *   0x07 undefined          reg                 0x13 def_cfa_offset_sf  sleb(f)
 *   0x08 same_value         reg                 0x14 val_offset         reg uleb(f)
 *   0x09 register           reg reg             0x15 val_offset_sf      reg sleb(f)
 *   0x0a remember_state     push all rules+CFA  0x16 val_expression     reg block -> unsupported
 *   0x0b restore_state      pop them            0x2e GNU_args_size      uleb (bytes of pushed args)
 *                                               0x2f GNU_negative_offset_extended reg uleb(f), negated
 *
 * set_loc's operand is decoded like pc_begin (pcrel against the operand's own address) but is not
 * passed through `resolvePcBegin`, so in relocatable objects it is unrelocated; compilers do not
 * emit set_loc in .eh_frame. Register operands are uleb.
 *
 *   0x2d AARCH64_negate_ra_state  (no operand) toggles CfiRow.returnAddressSigned; only where the
 *        CIE's architecture says so (Architecture.cfiNegateRaState): elsewhere 0x2d is SPARC's
 *        GNU_window_save and, like every other value, unsupported. The sign state is a pseudo
 *        register (aadwarf64's RA_SIGN_STATE, column 34): remember_state saves it, restore_state
 *        brings it back, and a new FDE starts unsigned.
 *
 * Rows: the FDE describes a table whose rows start at pcBegin and at every location an advance
 * moves to. The row for `address` is the state after executing every instruction that comes
 * before the first advance whose new location is greater than `address`. remember_state saves
 * the CFA rule as well as the register rules (as libgcc, libunwind and GNU readelf do; LLVM 14's
 * llvm-dwarfdump restores only the register rules). GNU_args_size is not part of the saved state
 * (libgcc keeps it outside its register state too).
 *
 * The interpreter consumes at least one byte per instruction, so it ends within the length of
 * the instructions; the remember stack is capped at MAX_REMEMBERED_STATES.
 */

const PRIMARY_MASK = 0xc0;
const OPERAND_MASK = 0x3f;
const DW_CFA_advance_loc = 0x40;
const DW_CFA_offset = 0x80;

const DW_CFA_nop = 0x00;
const DW_CFA_set_loc = 0x01;
const DW_CFA_advance_loc1 = 0x02;
const DW_CFA_advance_loc2 = 0x03;
const DW_CFA_advance_loc4 = 0x04;
const DW_CFA_offset_extended = 0x05;
const DW_CFA_restore_extended = 0x06;
const DW_CFA_undefined = 0x07;
const DW_CFA_same_value = 0x08;
const DW_CFA_register = 0x09;
const DW_CFA_remember_state = 0x0a;
const DW_CFA_restore_state = 0x0b;
const DW_CFA_def_cfa = 0x0c;
const DW_CFA_def_cfa_register = 0x0d;
const DW_CFA_def_cfa_offset = 0x0e;
const DW_CFA_def_cfa_expression = 0x0f;
const DW_CFA_expression = 0x10;
const DW_CFA_offset_extended_sf = 0x11;
const DW_CFA_def_cfa_sf = 0x12;
const DW_CFA_def_cfa_offset_sf = 0x13;
const DW_CFA_val_offset = 0x14;
const DW_CFA_val_offset_sf = 0x15;
const DW_CFA_val_expression = 0x16;
const DW_CFA_AARCH64_negate_ra_state = 0x2d;
const DW_CFA_GNU_args_size = 0x2e;
const DW_CFA_GNU_negative_offset_extended = 0x2f;

/** Deeper nesting than this is not produced by any compiler; it bounds memory on hostile input. */
export const MAX_REMEMBERED_STATES = 64;

const EXPRESSION_OPCODES: ReadonlyMap<number, string> = new Map([
  [DW_CFA_def_cfa_expression, "DW_CFA_def_cfa_expression"],
  [DW_CFA_expression, "DW_CFA_expression"],
  [DW_CFA_val_expression, "DW_CFA_val_expression"],
]);
const SUPPORTED_OPCODES = "DW_CFA 0x00-0x0e, 0x11-0x15, 0x2e, 0x2f (0x2d on AArch64) and the primary advance_loc/offset/restore (no DWARF expressions)";

/** A register rule other than offset(N) (those are in `CfiRow.savedRegisters`). */
export type RegisterRule =
  | { readonly kind: "undefined" }
  | { readonly kind: "sameValue" }
  /** The caller's value is in register `register` of this frame. */
  | { readonly kind: "register"; readonly register: number }
  /** The caller's value is CFA + offset (not a memory slot). */
  | { readonly kind: "valOffset"; readonly offset: number };

export interface CfiRow {
  /** First address of this row (pcBegin or the location an advance moved to). */
  startAddress: number;
  /** First address after this row: the next advance's location or pcBegin + pcRange. */
  endAddress: number;
  /** DWARF register the CFA is computed from (x86-64: 7 = rsp, 6 = rbp). */
  cfaRegister: number;
  /** CFA = cfaRegister + cfaOffset. */
  cfaOffset: number;
  /** DWARF register -> offset from the CFA of its save slot (rule offset(N)). */
  savedRegisters: Map<number, number>;
  /** Registers with undefined / same_value / register / val_offset rules. */
  otherRules: Map<number, RegisterRule>;
  /** Bytes of outgoing arguments pushed at this point (DW_CFA_GNU_args_size), 0 if none. */
  argsSizeBytes: number;
  /** AArch64: the return address (x30, or where it was saved) is signed here (negate_ra_state). */
  returnAddressSigned: boolean;
}

/** A register's rule in a row, including offset(N) and "no rule at all". */
export type FullRegisterRule = RegisterRule | { readonly kind: "offset"; readonly offset: number } | { readonly kind: "unspecified" };

export function registerRule(row: CfiRow, register: number): FullRegisterRule {
  const offset = row.savedRegisters.get(register);
  if (offset !== undefined) return { kind: "offset", offset };
  return row.otherRules.get(register) ?? { kind: "unspecified" };
}

/** The row covering `address`, which must lie in [fde.pcBegin, fde.pcBegin + fde.pcRange). */
export function cfiRowAt(fde: Fde, address: number): CfiRow {
  checkAddress(fde, address);
  let row: CfiRow | undefined;
  runFde(fde, (state, startAddress, endAddress) => {
    if (address >= endAddress) return true;
    row = state.toRow(startAddress, endAddress, fde);
    return false;
  });
  return row!;
}

/** Rows covering each of `addresses` (any order, each inside the FDE), in one pass. */
export function cfiRowsAt(fde: Fde, addresses: readonly number[]): CfiRow[] {
  if (addresses.length === 0) return [];
  for (const address of addresses) checkAddress(fde, address);
  const order = addresses.map((_, i) => i).sort((a, b) => addresses[a]! - addresses[b]!);
  const rows: CfiRow[] = new Array<CfiRow>(addresses.length);
  let next = 0;
  runFde(fde, (state, startAddress, endAddress) => {
    let row: CfiRow | undefined;
    while (next < order.length && addresses[order[next]!]! < endAddress) {
      row ??= state.toRow(startAddress, endAddress, fde);
      rows[order[next]!] = row;
      next++;
    }
    return next < order.length;
  });
  return rows;
}

/** Every row of the FDE's table, in address order (like `llvm-dwarfdump --eh-frame`). */
export function cfiTable(fde: Fde): CfiRow[] {
  const rows: CfiRow[] = [];
  runFde(fde, (state, startAddress, endAddress) => {
    rows.push(state.toRow(startAddress, endAddress, fde));
    return true;
  });
  return rows;
}

function checkAddress(fde: Fde, address: number): void {
  requireArgument(typeof fde === "object" && fde !== null && typeof fde.pcBegin === "number", "fde", fde, "an Fde (EhFrame.findFde(address))");
  if (!(address >= fde.pcBegin && address < fde.pcBegin + fde.pcRange)) {
    throw new InvalidArgumentError(
      "address",
      hex(address),
      `an address in the FDE at ${hex(fde.offset)}: [${hex(fde.pcBegin)}, ${hex(fde.pcBegin + fde.pcRange)})`,
    );
  }
}

interface SavedState {
  cfaRegister: number;
  cfaOffset: number;
  offsets: Map<number, number>;
  others: Map<number, RegisterRule>;
  returnAddressSigned: boolean;
}

class CfiState {
  cfaRegister = -1;
  cfaOffset = 0;
  offsets = new Map<number, number>();
  others = new Map<number, RegisterRule>();
  argsSizeBytes = 0;
  returnAddressSigned = false;
  readonly remembered: SavedState[] = [];

  setOffset(register: number, offset: number): void {
    this.offsets.set(register, offset);
    this.others.delete(register);
  }

  setOther(register: number, rule: RegisterRule): void {
    this.others.set(register, rule);
    this.offsets.delete(register);
  }

  /** Gives `register` the rule it has in `initial` (none when `initial` is undefined). */
  restore(register: number, initial: CfiState | undefined): void {
    this.offsets.delete(register);
    this.others.delete(register);
    const offset = initial?.offsets.get(register);
    if (offset !== undefined) this.offsets.set(register, offset);
    const other = initial?.others.get(register);
    if (other !== undefined) this.others.set(register, other);
  }

  snapshot(): SavedState {
    return {
      cfaRegister: this.cfaRegister,
      cfaOffset: this.cfaOffset,
      offsets: new Map(this.offsets),
      others: new Map(this.others),
      returnAddressSigned: this.returnAddressSigned,
    };
  }

  load(saved: SavedState): void {
    this.cfaRegister = saved.cfaRegister;
    this.cfaOffset = saved.cfaOffset;
    this.offsets = saved.offsets;
    this.others = saved.others;
    this.returnAddressSigned = saved.returnAddressSigned;
  }

  copy(): CfiState {
    const copy = new CfiState();
    copy.load(this.snapshot());
    copy.argsSizeBytes = this.argsSizeBytes;
    return copy;
  }

  toRow(startAddress: number, endAddress: number, fde: Fde): CfiRow {
    if (this.cfaRegister < 0) {
      throw new MalformedInputError(
        "CFI row",
        fde.offset,
        `no CFA rule at ${hex(startAddress)}`,
        "a DW_CFA_def_cfa* in the CIE or the FDE before this address",
      );
    }
    return {
      startAddress,
      endAddress,
      cfaRegister: this.cfaRegister,
      cfaOffset: this.cfaOffset,
      savedRegisters: new Map(this.offsets),
      otherRules: new Map(this.others),
      argsSizeBytes: this.argsSizeBytes,
      returnAddressSigned: this.returnAddressSigned,
    };
  }
}

/**
 * Called once per row with the state that holds over [startAddress, endAddress); returns false
 * to stop. Rows are reported in address order and never empty.
 */
type RowVisitor = (state: CfiState, startAddress: number, endAddress: number) => boolean;

/** Runs the CIE's initial instructions, then the FDE's, reporting each row to `visit`. */
function runFde(fde: Fde, visit: RowVisitor): void {
  const state = new CfiState();
  const end = fde.pcBegin + fde.pcRange;
  // The CIE's instructions define the initial rules; their advances (none in practice) are ignored.
  execute(fde.cie.initialInstructions, fde, state, undefined, fde.pcBegin, () => true);
  const initial = state.copy();
  state.remembered.length = 0;
  let loc = fde.pcBegin;
  const finished = execute(fde.instructions, fde, state, initial, loc, (newLoc) => {
    if (newLoc > end) newLoc = end;
    if (newLoc > loc) {
      if (!visit(state, loc, newLoc)) return false;
      loc = newLoc;
    }
    return loc < end;
  });
  if (finished && loc < end) visit(state, loc, end);
}

/**
 * Executes `program` over `state`. `advance(newLoc)` is called before each location change and
 * returns false to stop; `execute` then returns false. `initial` is the post-CIE state for
 * DW_CFA_restore (undefined while running the CIE itself).
 */
function execute(program: ByteView, fde: Fde, state: CfiState, initial: CfiState | undefined, startLoc: number, advance: (newLoc: number) => boolean): boolean {
  const cie: Cie = fde.cie;
  const cursor = new DwarfCursor(program);
  let loc = startLoc;
  const moveTo = (newLoc: number): boolean => {
    if (!advance(newLoc)) return false;
    loc = newLoc;
    return true;
  };
  const caf = cie.codeAlignmentFactor;
  const daf = cie.dataAlignmentFactor;

  while (!cursor.atEnd) {
    const opOffset = cursor.absolutePos;
    const opcode = cursor.u8("call frame instruction");
    const primary = opcode & PRIMARY_MASK;
    if (primary !== 0) {
      const operand = opcode & OPERAND_MASK;
      if (primary === DW_CFA_advance_loc) {
        if (!moveTo(loc + operand * caf)) return false;
      } else if (primary === DW_CFA_offset) {
        state.setOffset(operand, cursor.uleb128("DW_CFA_offset offset") * daf);
      } else {
        // primary === DW_CFA_restore
        state.restore(operand, initial);
      }
      continue;
    }
    switch (opcode) {
      case DW_CFA_nop:
        break;
      case DW_CFA_set_loc: {
        const newLoc = readEncodedPointer(cursor, cie.fdePointerEncoding, fde.sectionAddress, "DW_CFA_set_loc address").address;
        if (newLoc < loc) throw new MalformedInputError("DW_CFA_set_loc", opOffset, hex(newLoc), `a location at or after the current one (${hex(loc)})`);
        if (!moveTo(newLoc)) return false;
        break;
      }
      case DW_CFA_advance_loc1:
        if (!moveTo(loc + cursor.u8("DW_CFA_advance_loc1 delta") * caf)) return false;
        break;
      case DW_CFA_advance_loc2:
        if (!moveTo(loc + cursor.u16("DW_CFA_advance_loc2 delta") * caf)) return false;
        break;
      case DW_CFA_advance_loc4:
        if (!moveTo(loc + cursor.u32("DW_CFA_advance_loc4 delta") * caf)) return false;
        break;
      case DW_CFA_offset_extended: {
        const register = cursor.uleb128("DW_CFA_offset_extended register");
        state.setOffset(register, cursor.uleb128("DW_CFA_offset_extended offset") * daf);
        break;
      }
      case DW_CFA_restore_extended:
        state.restore(cursor.uleb128("DW_CFA_restore_extended register"), initial);
        break;
      case DW_CFA_undefined:
        state.setOther(cursor.uleb128("DW_CFA_undefined register"), { kind: "undefined" });
        break;
      case DW_CFA_same_value:
        state.setOther(cursor.uleb128("DW_CFA_same_value register"), { kind: "sameValue" });
        break;
      case DW_CFA_register: {
        const register = cursor.uleb128("DW_CFA_register register");
        state.setOther(register, { kind: "register", register: cursor.uleb128("DW_CFA_register source register") });
        break;
      }
      case DW_CFA_remember_state:
        if (state.remembered.length >= MAX_REMEMBERED_STATES) {
          throw new UnsupportedInputError(
            "DW_CFA_remember_state",
            opOffset,
            `nesting depth ${state.remembered.length + 1}`,
            `at most ${MAX_REMEMBERED_STATES}`,
          );
        }
        state.remembered.push(state.snapshot());
        break;
      case DW_CFA_restore_state: {
        const saved = state.remembered.pop();
        if (saved === undefined) throw new MalformedInputError("DW_CFA_restore_state", opOffset, "an empty state stack", "a preceding DW_CFA_remember_state");
        state.load(saved);
        break;
      }
      case DW_CFA_def_cfa:
        state.cfaRegister = cursor.uleb128("DW_CFA_def_cfa register");
        state.cfaOffset = cursor.uleb128("DW_CFA_def_cfa offset");
        break;
      case DW_CFA_def_cfa_register:
        state.cfaRegister = cursor.uleb128("DW_CFA_def_cfa_register register");
        break;
      case DW_CFA_def_cfa_offset:
        state.cfaOffset = cursor.uleb128("DW_CFA_def_cfa_offset offset");
        break;
      case DW_CFA_offset_extended_sf: {
        const register = cursor.uleb128("DW_CFA_offset_extended_sf register");
        state.setOffset(register, cursor.sleb128("DW_CFA_offset_extended_sf offset") * daf);
        break;
      }
      case DW_CFA_def_cfa_sf:
        state.cfaRegister = cursor.uleb128("DW_CFA_def_cfa_sf register");
        state.cfaOffset = cursor.sleb128("DW_CFA_def_cfa_sf offset") * daf;
        break;
      case DW_CFA_def_cfa_offset_sf:
        state.cfaOffset = cursor.sleb128("DW_CFA_def_cfa_offset_sf offset") * daf;
        break;
      case DW_CFA_val_offset: {
        const register = cursor.uleb128("DW_CFA_val_offset register");
        state.setOther(register, { kind: "valOffset", offset: cursor.uleb128("DW_CFA_val_offset offset") * daf });
        break;
      }
      case DW_CFA_val_offset_sf: {
        const register = cursor.uleb128("DW_CFA_val_offset_sf register");
        state.setOther(register, { kind: "valOffset", offset: cursor.sleb128("DW_CFA_val_offset_sf offset") * daf });
        break;
      }
      case DW_CFA_AARCH64_negate_ra_state:
        if (!cie.architecture.cfiNegateRaState) throw unsupportedOpcode(opcode, opOffset);
        state.returnAddressSigned = !state.returnAddressSigned;
        break;
      case DW_CFA_GNU_args_size:
        state.argsSizeBytes = cursor.uleb128("DW_CFA_GNU_args_size size");
        break;
      case DW_CFA_GNU_negative_offset_extended: {
        const register = cursor.uleb128("DW_CFA_GNU_negative_offset_extended register");
        state.setOffset(register, -cursor.uleb128("DW_CFA_GNU_negative_offset_extended offset") * daf);
        break;
      }
      default:
        throw unsupportedOpcode(opcode, opOffset);
    }
  }
  return true;
}

function unsupportedOpcode(opcode: number, opOffset: number): UnsupportedInputError {
  const name = EXPRESSION_OPCODES.get(opcode);
  return new UnsupportedInputError(
    name ?? "call frame instruction",
    opOffset,
    name === undefined ? `opcode ${hex(opcode)}` : `${name} (${hex(opcode)})`,
    SUPPORTED_OPCODES,
  );
}
