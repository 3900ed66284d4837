/**
 * The facts the stack walker relies on, read at real return addresses (found from the call
 * relocations in .rela.text: return address = r_offset + 4) of the compiled fixtures.
 *
 * Headline (llvm-stackmaps.md §4): at -O2 LLVM pushes the 7th and 8th integer arguments. The
 * CFI row at the return address has CFA = RSP + 64 while the rest of the body has RSP + 48, i.e.
 * the pushes are described by DW_CFA_def_cfa_offset (what `.cfi_adjust_cfa_offset` assembles
 * to); DW_CFA_GNU_args_size appears only in functions with landing pads.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { UnsupportedInputError } from "../../src/errors.js";
import { cfiRowAt, cfiTable, registerRule } from "../../src/unwind/cfi.js";
import { X86_64_DWARF } from "../../src/arch/x86-64.js";
import type { Fde } from "../../src/unwind/eh-frame.js";
import { type LoadedEhFrame, callSites, corpus, dumpedRowAt, dwarfdump, loadEhFrame } from "./support/corpus.js";
import { elfSections, symbols } from "./support/elf-sections.js";
import { formatRowLikeDwarfdump } from "./support/format-row.js";

const { RSP, RBP, RBX, RAX, R12, R14, RA } = X86_64_DWARF;

function fdeAt(loaded: LoadedEhFrame, address: number): Fde {
  const fde = loaded.ehFrame.findFde(address);
  if (fde === undefined) throw new Error(`no FDE for 0x${address.toString(16)}`);
  return fde;
}

describe("llc -O2: calls with more than 6 integer arguments", () => {
  let path: string;
  let loaded: LoadedEhFrame;
  beforeAll(() => {
    path = corpus.llvmObject();
    loaded = loadEhFrame(path);
  });

  it("describes the pushed arguments with CFA offsets at the return address (no GNU_args_size)", () => {
    const { functionStart, returnAddresses } = callSites(path, "llvm_many_args", "callee");
    const { returnAddresses: getReturns } = callSites(path, "llvm_many_args", "get");
    expect(returnAddresses).toHaveLength(1);
    const fde = fdeAt(loaded, functionStart);
    expect(fde.pcBegin).toBe(functionStart);

    const atCall = cfiRowAt(fde, returnAddresses[0]!);
    const inBody = cfiRowAt(fde, getReturns[0]!);
    // Body: RA + 4 callee-saved pushes + 8 bytes of alignment = 48. At the call: + 2 pushed args.
    expect(inBody.cfaOffset).toBe(48);
    expect({ cfaRegister: atCall.cfaRegister, cfaOffset: atCall.cfaOffset, argsSizeBytes: atCall.argsSizeBytes }).toEqual({
      cfaRegister: RSP,
      cfaOffset: 64,
      argsSizeBytes: 0,
    });
    // The row that covers the return address starts at the second push, before the call.
    expect(atCall.startAddress).toBeLessThan(returnAddresses[0]!);
    expect(atCall.endAddress).toBeGreaterThan(returnAddresses[0]!);
    // Same as llvm-dwarfdump, and no DW_CFA_GNU_args_size anywhere in this FDE.
    const dumped = dwarfdump(path).fdes.find((d) => d.offset === fde.offset)!;
    expect(formatRowLikeDwarfdump(atCall)).toBe(dumpedRowAt(dumped, returnAddresses[0]!)!.text);
    expect(dumped.instructions.some((i) => i.startsWith("DW_CFA_GNU_args_size"))).toBe(false);
  });

  it("with invoke and a landing pad, adds DW_CFA_GNU_args_size = 16 at both call sites", () => {
    const { functionStart, returnAddresses } = callSites(path, "llvm_invoke_args", "callee");
    expect(returnAddresses).toHaveLength(2);
    const fde = fdeAt(loaded, functionStart);
    expect(fde.lsda).toBeDefined();
    expect(fde.cie.augmentation).toBe("zPLR");
    for (const ra of returnAddresses) {
      const row = cfiRowAt(fde, ra);
      expect({ cfaRegister: row.cfaRegister, cfaOffset: row.cfaOffset, argsSizeBytes: row.argsSizeBytes }).toEqual({
        cfaRegister: RSP,
        cfaOffset: 48,
        argsSizeBytes: 16,
      });
    }
  });

  it("gives a dynamic alloca frame a CFA on RBP and the saved RBP at CFA-16", () => {
    const { functionStart, returnAddresses } = callSites(path, "llvm_dyn_alloca", "get");
    const row = cfiRowAt(fdeAt(loaded, functionStart), returnAddresses[0]!);
    expect(row.cfaRegister).toBe(RBP);
    expect(row.cfaOffset).toBe(16);
    expect(row.savedRegisters.get(RBP)).toBe(-16);
    expect(row.savedRegisters.get(RA)).toBe(-8);
  });
});

describe("gcc -O2", () => {
  it("pushes stack arguments too: the CFA offset at the call is larger than in the body", () => {
    const path = corpus.gccObject();
    const loaded = loadEhFrame(path);
    const { functionStart, returnAddresses } = callSites(path, "many_args", "many");
    const { returnAddresses: getReturns } = callSites(path, "many_args", "get");
    const fde = fdeAt(loaded, functionStart);
    const body = cfiRowAt(fde, getReturns[0]!).cfaOffset;
    expect(returnAddresses).toHaveLength(2);
    for (const ra of returnAddresses) {
      const row = cfiRowAt(fde, ra);
      expect(row.cfaRegister).toBe(RSP);
      expect(row.cfaOffset).toBeGreaterThan(body);
      expect(row.argsSizeBytes).toBe(0);
    }
  });

  it("restores the CFA with DW_CFA_restore_state after a mid-function epilogue (llvm-dwarfdump 14 does not)", () => {
    const path = corpus.gccObject();
    const loaded = loadEhFrame(path);
    const { functionStart } = callSites(path, "early_returns", "get");
    const fde = fdeAt(loaded, functionStart);
    const dumped = dwarfdump(path).fdes.find((d) => d.offset === fde.offset)!;
    expect(dumped.instructions).toContain("DW_CFA_remember_state:");
    // After each `ret` in the middle, the code continues with the full frame (CFA = RSP + 32).
    const table = cfiTable(fde);
    const afterRet = table.filter((row, i) => i > 1 && table[i - 1]!.cfaOffset === 8 && row.startAddress < fde.pcBegin + fde.pcRange - 1);
    expect(afterRet.length).toBeGreaterThan(0);
    for (const row of afterRet) expect(row.cfaOffset).toBe(32);
    // llvm-dwarfdump 14 keeps CFA = RSP + 8 there.
    const disagreeing = afterRet.filter((row) => dumpedRowAt(dumped, row.startAddress)!.text.startsWith("CFA=RSP+8:"));
    expect(disagreeing.length).toBeGreaterThan(0);
  });

  it("reports DW_CFA_expression / DW_CFA_def_cfa_expression (stack realignment) as unsupported, naming the instruction", () => {
    const path = corpus.drapObject();
    const loaded = loadEhFrame(path);
    const fde = loaded.ehFrame.fdes[0]!;
    // The prologue before the expressions is fine: CFA = R10 + 0 after `lea 8(%rsp), %r10`.
    const rows: string[] = [];
    let error: unknown;
    for (let address = fde.pcBegin; address < fde.pcBegin + fde.pcRange && error === undefined; address++) {
      try {
        rows.push(formatRowLikeDwarfdump(cfiRowAt(fde, address)));
      } catch (e) {
        error = e;
      }
    }
    expect(rows).toContain("CFA=R10: RIP=[CFA-8]");
    expect(error).toBeInstanceOf(UnsupportedInputError);
    const unsupported = error as UnsupportedInputError;
    expect(unsupported.what).toMatch(/^DW_CFA_(def_cfa_)?expression$/);
    // The offset is the instruction's offset in the section: the opcode byte is there.
    expect([0x0f, 0x10]).toContain(loaded.ehFrameBytes[unsupported.offset]);
  });
});

describe("g++ -O2 with exceptions", () => {
  it("sets DW_CFA_GNU_args_size = 16 at the calls that push arguments", () => {
    const path = corpus.cxxObject();
    const loaded = loadEhFrame(path);
    const { functionStart, returnAddresses } = callSites(path, "_Z7throwerll", "_Z4manyllllllll");
    // The cold part (.text.unlikely) also starts at offset 0 of its own section: pick the .text FDE.
    const fde = loaded.ehFrame.fdes.find((f) => f.pcBegin === functionStart && returnAddresses.every((ra) => ra < f.pcBegin + f.pcRange))!;
    expect(fde.cie.personality?.indirect).toBe(true);
    expect(fde.cie.personality?.encoding).toBe(0x9b);
    expect(returnAddresses).toHaveLength(2);
    for (const ra of returnAddresses) {
      const row = cfiRowAt(fde, ra);
      expect([row.cfaRegister, row.cfaOffset, row.argsSizeBytes]).toEqual([RBP, 16, 16]);
    }
  });
});

describe("llvm-mc: every register rule", () => {
  it("records undefined, same_value, register, val_offset, args_size and the _sf forms", () => {
    const loaded = loadEhFrame(corpus.asmObject());
    const fde = loaded.ehFrame.fdes[0]!;
    // Instruction layout: push(1) mov(3) nop@4 nop@5 nop@6 nop@7 nop@8 nop@9 ret@10.
    const at5 = cfiRowAt(fde, fde.pcBegin + 5);
    expect(registerRule(at5, RAX)).toEqual({ kind: "undefined" });
    expect(registerRule(at5, RBX)).toEqual({ kind: "sameValue" });
    expect(registerRule(at5, R12)).toEqual({ kind: "register", register: 13 });
    expect(registerRule(at5, R14)).toEqual({ kind: "valOffset", offset: -32 });
    expect(registerRule(at5, 5)).toEqual({ kind: "unspecified" });
    const at6 = cfiRowAt(fde, fde.pcBegin + 6);
    expect([at6.cfaRegister, at6.cfaOffset, at6.argsSizeBytes]).toEqual([RSP, 16, 32]);
    expect(registerRule(at6, RBP)).toEqual({ kind: "unspecified" }); // DW_CFA_restore to the CIE's rule
    const at7 = cfiRowAt(fde, fde.pcBegin + 7);
    expect([at7.cfaOffset, at7.savedRegisters.get(RBX)]).toEqual([24, 32]);
    // restore_state brings back CFA = RBP + 16 and the rules remembered at 0x4; args_size stays.
    const at8 = cfiRowAt(fde, fde.pcBegin + 8);
    expect([at8.cfaRegister, at8.cfaOffset, at8.argsSizeBytes, at8.savedRegisters.get(RBP), at8.otherRules.size]).toEqual([RBP, 16, 32, -16, 0]);
    expect(() => cfiRowAt(fde, fde.pcBegin + 9)).toThrow(UnsupportedInputError);
  });

  it("handles advance_loc2 and advance_loc4", () => {
    const loaded = loadEhFrame(corpus.asmObject());
    const fde = loaded.ehFrame.fdes[1]!;
    expect(cfiTable(fde).map((r) => [r.startAddress - fde.pcBegin, r.cfaOffset])).toEqual([
      [0, 8],
      [1, 16],
      [301, 24],
      [70301, 16],
      [70302, 8],
    ]);
  });
});

describe("g++ -shared library", () => {
  it("decodes pcrel pc_begin against the section's address: every exported function's FDE starts at its symbol", () => {
    const path = corpus.sharedLibrary();
    const loaded = loadEhFrame(path);
    expect(loaded.sectionAddress).toBeGreaterThan(0);
    expect(loaded.ehFrame.cies.every((c) => c.fdePointerEncoding === 0x1b)).toBe(true);
    const sections = elfSections(new Uint8Array(readFileSync(path)));
    const dynsym = sections.find((s) => s.name === ".dynsym")!;
    const functions = ["llvm_many_args", "llvm_invoke_args", "early_returns", "many_args", "_Z7throwerll"];
    const bySymbol = new Map(symbols(sections, dynsym).map((s) => [s.name, s.value]));
    for (const name of functions) {
      const address = bySymbol.get(name)!;
      expect(address, name).toBeGreaterThan(0);
      const fde = fdeAt(loaded, address);
      expect(fde.pcBegin, name).toBe(address);
      expect(formatRowLikeDwarfdump(cfiRowAt(fde, address)), name).toBe("CFA=RSP+8: RIP=[CFA-8]");
    }
  });
});
