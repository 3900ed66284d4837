import { catchError } from "../support/catch-error.js";
/**
 * Call-frame instruction semantics on hand-assembled FDEs: one case per opcode and per rule of
 * the row definition in src/unwind/cfi.ts. Defaults: x86-64 CIE (code alignment 1, data
 * alignment -8, CFA = rsp + 8, RA (16) at CFA - 8); the FDE covers [0x1000, 0x1000 + 0x40).
 */
import { describe, expect, it } from "vitest";
import { InvalidArgumentError, MalformedInputError, TruncatedInputError, UnsupportedInputError } from "../../src/errors.js";
import { type CfiRow, MAX_REMEMBERED_STATES, cfiRowAt, cfiRowsAt, cfiTable, registerRule } from "../../src/unwind/cfi.js";
import { type Fde, parseEhFrame } from "../../src/unwind/eh-frame.js";
import { type CieSpec, EhFrameBuilder, sleb, u16, u32, u64, uleb } from "./support/eh-frame-builder.js";

const BEGIN = 0x1000;
const RANGE = 0x40;
const RSP = 7;
const RBP = 6;
const RBX = 3;
const RA = 16;

// Opcode helpers (names as in the DWARF spec).
const advance = (delta: number) => [0x40 | delta];
const offset = (reg: number, factored: number) => [0x80 | reg, ...uleb(factored)];
const restore = (reg: number) => [0xc0 | reg];
const defCfa = (reg: number, off: number) => [0x0c, ...uleb(reg), ...uleb(off)];
const defCfaOffset = (off: number) => [0x0e, ...uleb(off)];
const defCfaRegister = (reg: number) => [0x0d, ...uleb(reg)];
const remember = [0x0a];
const restoreState = [0x0b];

function fdeWith(instructions: number[], cie: CieSpec = {}, sectionAddress = 0): { fde: Fde; fdeOffset: number; instructionsOffset: number } {
  const b = new EhFrameBuilder();
  const cieOffset = b.cie(cie);
  const fdeOffset = b.pcrelFde(cieOffset, sectionAddress, BEGIN, RANGE, instructions);
  const fde = parseEhFrame(b.build(), { sectionAddress }).fdes[0]!;
  return { fde, fdeOffset, instructionsOffset: fde.instructions.baseOffset };
}

function summary(row: CfiRow): { cfa: string; saved: Record<number, number>; args: number; rows: string } {
  return {
    cfa: `${row.cfaRegister}+${row.cfaOffset}`,
    saved: Object.fromEntries(row.savedRegisters),
    args: row.argsSizeBytes,
    rows: `[0x${row.startAddress.toString(16)}, 0x${row.endAddress.toString(16)})`,
  };
}

describe("the row at an address", () => {
  // push rbp (1 byte) ; mov rsp, rbp (3 bytes) ; ... ; the classic frame-pointer prologue.
  const { fde } = fdeWith([...advance(1), ...defCfaOffset(16), ...offset(RBP, 2), ...advance(3), ...defCfaRegister(RBP)]);

  it("is the CIE's initial row before the first advance", () => {
    expect(summary(cfiRowAt(fde, BEGIN))).toEqual({ cfa: "7+8", saved: { [RA]: -8 }, args: 0, rows: "[0x1000, 0x1001)" });
  });

  it("includes every instruction up to an advance landing exactly on the address (loc <= address)", () => {
    expect(summary(cfiRowAt(fde, BEGIN + 1))).toEqual({ cfa: "7+16", saved: { [RA]: -8, [RBP]: -16 }, args: 0, rows: "[0x1001, 0x1004)" });
    expect(summary(cfiRowAt(fde, BEGIN + 3))).toEqual({ cfa: "7+16", saved: { [RA]: -8, [RBP]: -16 }, args: 0, rows: "[0x1001, 0x1004)" });
    expect(summary(cfiRowAt(fde, BEGIN + 4))).toEqual({ cfa: "6+16", saved: { [RA]: -8, [RBP]: -16 }, args: 0, rows: "[0x1004, 0x1040)" });
    expect(summary(cfiRowAt(fde, BEGIN + RANGE - 1)).rows).toBe("[0x1004, 0x1040)");
  });

  it("is the same through cfiRowAt, cfiRowsAt (any order) and cfiTable", () => {
    const addresses = [BEGIN + 0x3f, BEGIN, BEGIN + 4, BEGIN + 2, BEGIN + 1, BEGIN + 4];
    expect(cfiRowsAt(fde, addresses)).toEqual(addresses.map((a) => cfiRowAt(fde, a)));
    expect(cfiRowsAt(fde, [])).toEqual([]);
    expect(cfiTable(fde).map((r) => [r.startAddress, r.endAddress])).toEqual([
      [0x1000, 0x1001],
      [0x1001, 0x1004],
      [0x1004, 0x1040],
    ]);
  });

  it("rejects addresses outside the FDE", () => {
    expect(() => cfiRowAt(fde, BEGIN - 1)).toThrow(InvalidArgumentError);
    expect(() => cfiRowAt(fde, BEGIN + RANGE)).toThrow(InvalidArgumentError);
    expect(() => cfiRowsAt(fde, [BEGIN, Number.NaN])).toThrow(InvalidArgumentError);
  });

  it("never evaluates instructions after the row (a bad instruction later does not matter)", () => {
    const { fde: bad } = fdeWith([...advance(8), 0x0f, 0x01, 0x9c]); // DW_CFA_def_cfa_expression at 0x1008
    expect(cfiRowAt(bad, BEGIN + 7).cfaOffset).toBe(8);
    expect(() => cfiRowAt(bad, BEGIN + 8)).toThrow(UnsupportedInputError);
  });

  it("clamps an advance past the end of the FDE to its end", () => {
    const { fde: long } = fdeWith([...advance(0x10), ...defCfaOffset(16), 0x02, 0xff, ...defCfaOffset(24)]);
    expect(cfiTable(long).map((r) => [r.startAddress, r.endAddress, r.cfaOffset])).toEqual([
      [0x1000, 0x1010, 8],
      [0x1010, 0x1040, 16],
    ]);
  });

  it("multiplies advances by the code alignment factor (AArch64-style CIE: 4)", () => {
    const { fde: arm } = fdeWith([...advance(1), ...defCfaOffset(16), ...offset(29, 2), ...offset(30, 1)], {
      codeAlignmentFactor: 4,
      returnAddressRegister: 30,
      instructions: defCfa(31, 0),
    });
    expect(summary(cfiRowAt(arm, BEGIN + 3))).toMatchObject({ cfa: "31+0", saved: {} });
    expect(summary(cfiRowAt(arm, BEGIN + 4))).toMatchObject({ cfa: "31+16", saved: { 29: -16, 30: -8 } });
  });
});

describe("opcodes", () => {
  const rowAfter = (instructions: number[], cie: CieSpec = {}) => cfiRowAt(fdeWith([...instructions, ...advance(1)], cie).fde, BEGIN);

  it("DW_CFA_nop does nothing", () => {
    expect(summary(rowAfter([0, 0, 0]))).toMatchObject({ cfa: "7+8", saved: { [RA]: -8 } });
  });

  it("advance_loc1 / advance_loc2 / advance_loc4", () => {
    const { fde } = fdeWith([0x02, 0x03, ...defCfaOffset(16), 0x03, ...u16(5), ...defCfaOffset(24), 0x04, ...u32(7), ...defCfaOffset(32)]);
    expect(cfiTable(fde).map((r) => [r.startAddress - BEGIN, r.cfaOffset])).toEqual([
      [0, 8],
      [3, 16],
      [8, 24],
      [15, 32],
    ]);
  });

  it("DW_CFA_set_loc with the FDE's encoding (pcrel is relative to the operand's address)", () => {
    const sectionAddress = 0x10_0000;
    const b = new EhFrameBuilder();
    const cie = b.cie();
    const fdeStart = b.offset;
    // Instructions start after length(4) CIE ptr(4) pc_begin(4) pc_range(4) aug len(1); set_loc's operand is 1 byte further.
    const operandAddress = sectionAddress + fdeStart + 17 + 1;
    b.pcrelFde(cie, sectionAddress, BEGIN, RANGE, [0x01, ...u32((BEGIN + 0x20 - operandAddress) >>> 0), ...defCfaOffset(16)]);
    const fde = parseEhFrame(b.build(), { sectionAddress }).fdes[0]!;
    expect(cfiTable(fde).map((r) => [r.startAddress - BEGIN, r.cfaOffset])).toEqual([
      [0, 8],
      [0x20, 16],
    ]);

    const abs = new EhFrameBuilder();
    const absCie = abs.cie({ augmentation: "" });
    abs.fde(absCie, [...u64(BEGIN), ...u64(RANGE)], [0x01, ...u64(BEGIN + 0x10), ...defCfaOffset(16)]);
    const absFde = parseEhFrame(abs.build(), { sectionAddress: 0 }).fdes[0]!;
    expect(cfiRowAt(absFde, BEGIN + 0x10).cfaOffset).toBe(16);
    expect(cfiRowAt(absFde, BEGIN + 0xf).cfaOffset).toBe(8);
  });

  it("DW_CFA_set_loc backwards is malformed", () => {
    const b = new EhFrameBuilder();
    const cie = b.cie({ augmentation: "" });
    b.fde(cie, [...u64(BEGIN), ...u64(RANGE)], [...advance(8), 0x01, ...u64(BEGIN + 4)]);
    const fde = parseEhFrame(b.build(), { sectionAddress: 0 }).fdes[0]!;
    expect(catchError(() => cfiRowAt(fde, BEGIN + 9))).toMatchObject({
      constructor: MalformedInputError,
      what: "DW_CFA_set_loc",
      offset: fde.instructions.baseOffset + 1,
    });
  });

  it("DW_CFA_offset / offset_extended / offset_extended_sf / GNU_negative_offset_extended", () => {
    const row = rowAfter([...offset(RBX, 2), 0x05, ...uleb(20), ...uleb(3), 0x11, ...uleb(12), ...sleb(-4), 0x2f, ...uleb(13), ...uleb(5)]);
    expect(Object.fromEntries(row.savedRegisters)).toEqual({ [RA]: -8, [RBX]: -16, 20: -24, 12: 32, 13: 40 });
  });

  it("DW_CFA_def_cfa / def_cfa_register / def_cfa_offset (unfactored)", () => {
    expect(summary(rowAfter([...defCfa(RBP, 24)])).cfa).toBe("6+24");
    expect(summary(rowAfter([...defCfaRegister(RBP)])).cfa).toBe("6+8");
    expect(summary(rowAfter([...defCfaOffset(200)])).cfa).toBe("7+200");
  });

  it("DW_CFA_def_cfa_sf / def_cfa_offset_sf (factored, signed)", () => {
    expect(summary(rowAfter([0x12, ...uleb(RBP), ...sleb(-2)])).cfa).toBe("6+16");
    expect(summary(rowAfter([0x13, ...sleb(-3)])).cfa).toBe("7+24");
    expect(summary(rowAfter([0x13, ...sleb(1)])).cfa).toBe("7+-8");
  });

  it("DW_CFA_undefined / same_value / register / val_offset / val_offset_sf are recorded, replacing offset rules", () => {
    const row = rowAfter([
      ...offset(RBX, 2),
      0x07,
      ...uleb(RA),
      0x08,
      ...uleb(RBX),
      0x09,
      ...uleb(12),
      ...uleb(13),
      0x14,
      ...uleb(14),
      ...uleb(4),
      0x15,
      ...uleb(15),
      ...sleb(-1),
    ]);
    expect(row.savedRegisters.size).toBe(0);
    expect([RA, RBX, 12, 14, 15, 5].map((r) => registerRule(row, r))).toEqual([
      { kind: "undefined" },
      { kind: "sameValue" },
      { kind: "register", register: 13 },
      { kind: "valOffset", offset: -32 },
      { kind: "valOffset", offset: 8 },
      { kind: "unspecified" },
    ]);
    // An offset rule replaces the other rule again.
    expect(registerRule(rowAfter([0x08, ...uleb(RBX), ...offset(RBX, 3)]), RBX)).toEqual({ kind: "offset", offset: -24 });
  });

  it("DW_CFA_restore / restore_extended return to the CIE's rule (or to none)", () => {
    const cie: CieSpec = { instructions: [...defCfa(RSP, 8), ...offset(RA, 1), ...offset(RBX, 2)] };
    const row = rowAfter([...offset(RBX, 5), ...offset(RBP, 3), ...offset(RA, 4), ...restore(RBX), ...restore(RBP), 0x06, ...uleb(RA)], cie);
    expect(Object.fromEntries(row.savedRegisters)).toEqual({ [RA]: -8, [RBX]: -16 });
    // restore also undoes a non-offset rule.
    expect(registerRule(rowAfter([0x07, ...uleb(RBX), ...restore(RBX)], cie), RBX)).toEqual({ kind: "offset", offset: -16 });
  });

  it("DW_CFA_GNU_args_size is carried until changed and survives restore_state", () => {
    const { fde } = fdeWith([0x2e, ...uleb(16), ...remember, ...advance(2), 0x2e, ...uleb(0), ...advance(2), 0x2e, ...uleb(32), ...restoreState]);
    expect([0, 2, 4].map((a) => cfiRowAt(fde, BEGIN + a).argsSizeBytes)).toEqual([16, 0, 32]);
  });

  it("DW_CFA_remember_state / restore_state save the CFA rule and every register rule, nested", () => {
    const { fde } = fdeWith([
      ...advance(1),
      ...defCfaOffset(16),
      ...offset(RBX, 2),
      ...remember,
      ...advance(1),
      ...defCfaOffset(24),
      ...offset(RBP, 3),
      ...remember,
      ...advance(1),
      ...defCfa(RBP, 16),
      0x07,
      ...uleb(RBX),
      ...advance(1),
      ...restoreState,
      ...advance(1),
      ...restoreState,
    ]);
    expect([1, 2, 3, 4, 5].map((a) => summary(cfiRowAt(fde, BEGIN + a))).map((s) => [s.cfa, s.saved])).toEqual([
      ["7+16", { [RA]: -8, [RBX]: -16 }],
      ["7+24", { [RA]: -8, [RBX]: -16, [RBP]: -24 }],
      ["6+16", { [RA]: -8, [RBP]: -24 }],
      ["7+24", { [RA]: -8, [RBX]: -16, [RBP]: -24 }],
      ["7+16", { [RA]: -8, [RBX]: -16 }],
    ]);
  });
});

describe("errors name the instruction's offset", () => {
  it.each([
    [0x0f, "DW_CFA_def_cfa_expression", [0x01, 0x9c]],
    [0x10, "DW_CFA_expression", [0x06, 0x02, 0x76, 0x00]],
    [0x16, "DW_CFA_val_expression", [0x06, 0x01, 0x9c]],
  ])("opcode %i (%s) is unsupported", (opcode, name, operands) => {
    const { fde, instructionsOffset } = fdeWith([...advance(1), 0, opcode, ...operands]);
    expect(cfiRowAt(fde, BEGIN).cfaOffset).toBe(8);
    expect(catchError(() => cfiRowAt(fde, BEGIN + 1))).toMatchObject({ constructor: UnsupportedInputError, what: name, offset: instructionsOffset + 2 });
  });

  it.each([0x2d, 0x17, 0x1c, 0x30, 0x3f])("unknown opcode %i is unsupported", (opcode) => {
    const { fde, instructionsOffset } = fdeWith([opcode]);
    expect(catchError(() => cfiRowAt(fde, BEGIN))).toMatchObject({
      constructor: UnsupportedInputError,
      what: "call frame instruction",
      offset: instructionsOffset,
      found: `opcode 0x${opcode.toString(16)}`,
    });
  });

  it("a truncated operand is truncated input at the operand", () => {
    const { fde, instructionsOffset } = fdeWith([0x0c, 0x07, 0x80]); // def_cfa rsp, <LEB128 without end>
    expect(catchError(() => cfiRowAt(fde, BEGIN))).toMatchObject({ constructor: TruncatedInputError, offset: instructionsOffset + 2 });
    const { fde: loc2 } = fdeWith([0x03, 0x01]);
    expect(() => cfiRowAt(loc2, BEGIN)).toThrow(TruncatedInputError);
  });

  it("restore_state without remember_state is malformed", () => {
    const { fde, instructionsOffset } = fdeWith([0, ...restoreState]);
    expect(catchError(() => cfiRowAt(fde, BEGIN))).toMatchObject({
      constructor: MalformedInputError,
      what: "DW_CFA_restore_state",
      offset: instructionsOffset + 1,
    });
  });

  it(`more than ${MAX_REMEMBERED_STATES} nested remember_state is unsupported`, () => {
    const ok = fdeWith(Array<number>(MAX_REMEMBERED_STATES).fill(0x0a));
    expect(cfiRowAt(ok.fde, BEGIN).cfaOffset).toBe(8);
    const { fde, instructionsOffset } = fdeWith(Array<number>(MAX_REMEMBERED_STATES + 1).fill(0x0a));
    expect(catchError(() => cfiRowAt(fde, BEGIN))).toMatchObject({ constructor: UnsupportedInputError, offset: instructionsOffset + MAX_REMEMBERED_STATES });
  });

  it("a row without any CFA rule is malformed", () => {
    const { fde } = fdeWith([], { instructions: offset(RA, 1) });
    expect(catchError(() => cfiRowAt(fde, BEGIN))).toMatchObject({ constructor: MalformedInputError, what: "CFI row" });
  });

  it("errors in the CIE's initial instructions name the CIE's bytes", () => {
    const { fde } = fdeWith([], { instructions: [0x0b] });
    expect(catchError(() => cfiRowAt(fde, BEGIN))).toMatchObject({ constructor: MalformedInputError, offset: fde.cie.initialInstructions.baseOffset });
  });
});
