import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dumpFiles } from "../../src/cli/dump-command.js";
import { describeFile } from "../../src/loader/describe-file.js";
import { loadObjectStackMaps, type ObjectStackMaps } from "../../src/loader/object-file.js";
import { FLAG_DYNAMIC_FRAME, FLAG_FRAME_SIZE_DIFFERS, NO_CFA_RULE } from "../../src/safepoints/frame-descriptors.js";
import { AARCH64 } from "../../src/arch/aarch64.js";
import { CORPUS, compileCorpusEntry, corpusEntry, type CorpusEntry } from "../ll/corpus.js";
import { compileToObject, findLlvmTool, objdumpDisassembly, readobjRelocations, runTool } from "../support/llvm-tools.js";
import { cfiTable } from "../../src/unwind/cfi.js";
import { parseReadobjStackmap, statepointShape, type ReadobjLocation } from "../support/readobj-stackmap.js";
import { dumpedRowAt, dwarfdump, type DumpedFde } from "../unwind/support/corpus.js";

/*
 * The .ll corpus (test/ll/corpus.ts) built for AArch64 Linux (`llc -mtriple=aarch64-linux-gnu`,
 * after the entry's own opt passes: rewrite-statepoints-for-gc for statepoint entries), against
 * LLVM's own tools, under the LLVM the project selects (14 and 19):
 *  - `rootwalk dump --format readobj` is byte for byte what `llvm-readobj --stackmap` prints;
 *  - the objects need exactly the relocations the ELF reader applies (R_AARCH64_ABS64 in
 *    .rela.llvm_stackmaps, R_AARCH64_PREL32 in .rela.eh_frame);
 *  - every root and live-out is named as AArch64 names DWARF registers (R#31 sp, R#n xn);
 *  - every safepoint's CFA rule and saved registers are what llvm-dwarfdump's CFI rows say, and
 *    its frame size (SP to CFA: `bl` pushes nothing) is the recorded StackSize, also for frames
 *    whose CFA is x29-based, where the prologue's `add x29, sp, #N` gives SP + N + (CFA - x29).
 */

const MTRIPLE = "aarch64-linux-gnu";

/** Entries llc cannot build for AArch64, and why (each is checked to fail, so the list stays true). */
const X86_ONLY: Readonly<Record<string, string>> = {
  "live-outs": "AVX ymm vectors (+avx, +avx2 target features)",
  "statepoint-attributes": "x86 calling conventions on the statepoint",
  "handwritten-statepoint": "a gc-transition statepoint: AArch64 has no lowering for gc_transition",
};

/** Call-site safepoints whose frame size was checked, over all entries, by CFA register. */
const framesChecked = { sp: 0, x29: 0 };

const AARCH64_ENTRIES = CORPUS.filter((entry) => X86_ONLY[entry.name] === undefined);

function compileForAarch64(entry: CorpusEntry): string {
  return compileCorpusEntry(entry, { mtriple: MTRIPLE });
}

function load(path: string): ObjectStackMaps {
  const loaded = loadObjectStackMaps(readFileSync(path), path);
  if (loaded === undefined) throw new Error(`${path} has no stack maps`);
  return loaded;
}

/** An AArch64 DWARF register's name (aadwarf64 §4.1: 0-30 x0-x30, 31 sp, 64-95 v0-v31). */
function aadwarfName(dwarfReg: number): string {
  if (dwarfReg <= 30) return `x${dwarfReg}`;
  if (dwarfReg === 31) return "sp";
  return dwarfReg >= 64 && dwarfReg <= 95 ? `v${dwarfReg - 64}` : `R#${dwarfReg}`;
}

/** How rootwalk must spell a readobj register location on AArch64. */
function expectedSpelling(location: ReadobjLocation): string | undefined {
  if (location.kind === "Constant" || location.kind === "ConstantIndex") return undefined;
  const name = aadwarfName(location.dwarfReg);
  const offset = location.kind === "Register" || location.offset === 0 ? "" : location.offset > 0 ? `+${location.offset}` : `${location.offset}`;
  return location.kind === "Register" ? name : location.kind === "Direct" ? `${name}${offset}` : `[${name}${offset}]`;
}

/** `CFA=W29+32: W19=[CFA-16], W30=[CFA-24]` -> CFA register/offset and saved x19-x30 offsets. */
function parseRow(text: string): { cfaRegister: number; cfaOffset: number; saved: Map<number, number> } {
  const cfa = /^CFA=(WSP|W(\d+))([+-]\d+)?/.exec(text);
  if (cfa === null) throw new Error(`unexpected CFI row: ${text}`);
  const saved = new Map<number, number>();
  for (const match of text.matchAll(/W(\d+)=\[CFA([+-]\d+)\]/g)) saved.set(Number(match[1]), Number(match[2]));
  return { cfaRegister: cfa[1] === "WSP" ? 31 : Number(cfa[2]), cfaOffset: Number(cfa[3] ?? 0), saved };
}

/**
 * From the disassembly: function name -> N of its prologue's `add x29, sp, #N` (`mov x29, sp`:
 * 0), for x29-based frames; and the return addresses of its calls (`bl`, `blr`: 4 bytes each).
 */
function machineCodeFacts(object: string): { framePointerSetups: Map<string, number>; callReturns: Set<number> } {
  const framePointerSetups = new Map<string, number>();
  const callReturns = new Set<number>();
  let current: string | undefined;
  for (const line of objdumpDisassembly(object).split("\n")) {
    const header = /^[0-9a-f]+ <(.+)>:$/.exec(line);
    if (header !== null) current = header[1];
    const call = /^\s*([0-9a-f]+):\s+blr?\s/.exec(line);
    if (call !== null) callReturns.add(parseInt(call[1]!, 16) + 4);
    if (current === undefined || framePointerSetups.has(current)) continue;
    const add = /\sadd\s+x29, sp, #(0x[0-9a-f]+|\d+)$/.exec(line);
    if (add !== null) framePointerSetups.set(current, Number(add[1]));
    else if (/\smov\s+x29, sp$/.test(line)) framePointerSetups.set(current, 0);
  }
  return { framePointerSetups, callReturns };
}

describe("the .ll corpus built for AArch64", () => {
  it.each(Object.entries(X86_ONLY))("llc cannot build %s for AArch64 (%s)", (name) => {
    expect(() => compileForAarch64(CORPUS.find((entry) => entry.name === name)!)).toThrow();
  });

  it("leaves at least 20 entries to compare", () => {
    expect(AARCH64_ENTRIES.length).toBeGreaterThanOrEqual(20);
  });

  describe.each(AARCH64_ENTRIES.map((entry) => [entry.name, entry] as const))("%s", (_name, entry) => {
    const object = compileForAarch64(entry);

    it("dump --format readobj equals llvm-readobj --stackmap byte for byte", () => {
      const theirs = runTool(findLlvmTool("llvm-readobj"), ["--stackmap", object]);
      expect(theirs).toContain("Arch: aarch64");
      expect(dumpFiles([object], "readobj")).toBe(theirs);
    });

    it("needs R_AARCH64_ABS64 (stack maps) and R_AARCH64_PREL32 (.eh_frame pc_begin) in its data", () => {
      const relocations = readobjRelocations(object);
      const types = (section: string): Set<string> => new Set((relocations.get(section) ?? []).map((r) => r.type));
      expect(types(".rela.llvm_stackmaps")).toEqual(new Set(["R_AARCH64_ABS64"]));
      // (A CIE with a personality routine adds an R_AARCH64_ABS64 (LLVM 14) or R_AARCH64_PREL64
      // (LLVM 19) for its pointer: the reader needs only pc_begin's.)
      expect(types(".rela.eh_frame")).toContain("R_AARCH64_PREL32");
      const others = [...types(".rela.eh_frame")].filter((t) => t !== "R_AARCH64_PREL32");
      expect(others.filter((t) => t !== "R_AARCH64_ABS64" && t !== "R_AARCH64_PREL64")).toEqual([]);
    });

    it("names every register location and live-out as AArch64 does", () => {
      const map = parseReadobjStackmap(runTool(findLlvmTool("llvm-readobj"), ["--stackmap", object]));
      const [described] = describeFile(readFileSync(object), object);
      expect(described?.safepoints.length).toBe(map.records.length);
      described!.safepoints.forEach((safepoint, r) => {
        const record = map.records[r]!;
        const liveOuts = record.liveOuts.map((l) => `${aadwarfName(l.dwarfReg)} (${l.sizeBytes} bytes)`);
        expect(safepoint.liveOuts).toEqual(liveOuts);
        const shape = statepointShape(record);
        if (safepoint.kind !== "statepoint" || shape === undefined) return;
        const theirs = new Set(record.locations.slice(3).flatMap((l) => expectedSpelling(l) ?? []));
        const ours = [...safepoint.deopt, ...safepoint.roots.flatMap((p) => [p.base, p.derived]), ...safepoint.allocas];
        expect(new Set(ours.filter((s) => !s.startsWith("const "))), `record ${r}`).toEqual(theirs);
      });
    });

    it("has every safepoint's CFA, saved registers and frame size as the CFI and the prologue say", () => {
      const loaded = load(object);
      const d = loaded.descriptors;
      expect(d.architecture).toBe(AARCH64);
      const fdes = dwarfdump(object).fdes;
      const { framePointerSetups: setups, callReturns } = machineCodeFacts(object);
      const fdeAt = (address: number): DumpedFde | undefined => fdes.find((f) => f.pcBegin <= address && address < f.pcEnd);
      for (let i = 0; i < d.count; i++) {
        const fn = d.functions[d.functionIndex[i]!]!;
        const where = `${fn.name ?? "?"}+${d.returnAddress[i]! - fn.address}`;
        // Looked up at RA - 1 as the loader does: the last byte of the `bl`.
        const fde = fdeAt(d.returnAddress[i]! - 1);
        expect(fde, `${where}: an FDE covers it`).toBeDefined();
        const row = parseRow(dumpedRowAt(fde!, d.returnAddress[i]! - 1)!.text);
        expect(d.cfaRegister[i], where).not.toBe(NO_CFA_RULE);
        expect([d.cfaRegister[i], d.cfaOffsetBytes[i]], `${where}: CFA rule`).toEqual([row.cfaRegister, row.cfaOffset]);
        AARCH64.calleeSavedDwarf.forEach((reg, k) => {
          expect(d.savedRegOffsets[i * AARCH64.calleeSavedDwarf.length + k], `${where}: x${reg} save slot`).toBe(row.saved.get(reg) ?? 0);
        });
        // The frame size matters where a walker meets the frame: at a call's return address.
        // (llc's AArch64 CFI is exact at calls only: a stackmap inside a prologue gets the row
        // of the prologue's start, as llvm-dwarfdump says too.)
        if ((d.flags[i]! & FLAG_DYNAMIC_FRAME) !== 0 || !callReturns.has(d.returnAddress[i]!)) continue;
        expect(d.flags[i]! & FLAG_FRAME_SIZE_DIFFERS, `${where}: frame size is StackSize`).toBe(0);
        expect(d.frameSizeBytes[i], where).toBe(d.stackSizeBytes[i]);
        if (row.cfaRegister === 31) {
          expect(row.cfaOffset, `${where}: CFA = SP + StackSize`).toBe(d.stackSizeBytes[i]);
          framesChecked.sp++;
        } else {
          expect(row.cfaRegister, `${where}: CFA via x29`).toBe(29);
          const setup = setups.get(fn.name ?? "");
          expect(setup, `${where}: the prologue sets x29 from sp`).toBeDefined();
          expect(setup! + row.cfaOffset, `${where}: CFA - SP through x29`).toBe(d.stackSizeBytes[i]);
          framesChecked.x29++;
        }
      }
    });
  });

  // Runs after the entries (vitest keeps a file's order): the frame-size checks really ran.
  it("checked the frame size of at least 30 call-site safepoints, with and without x29", () => {
    expect(framesChecked.sp + framesChecked.x29).toBeGreaterThanOrEqual(30);
    expect(framesChecked.x29).toBeGreaterThan(0);
  });
});

/*
 * Pointer authentication (`"sign-return-address"="all"`, what -mbranch-protection=pac-ret asks of
 * llc): `paciasp` signs x30 first thing and the CFI says so with DW_CFA_AARCH64_negate_ra_state.
 * rootwalk reads such objects and knows, row by row, where the return address is signed.
 */
const SIGNED_IR = `declare void @f()
define void @g() #0 {
  call void @f()
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 7, i32 0)
  call void @f()
  ret void
}
declare void @llvm.experimental.stackmap(i64, i32, ...)
attributes #0 = { "sign-return-address"="all" }
`;

describe("AArch64 code with signed return addresses", () => {
  const source = join(mkdtempSync(join(tmpdir(), "rootwalk-pac-")), "pac.ll");
  writeFileSync(source, SIGNED_IR);
  const object = compileToObject(source, { llcFlags: [`-mtriple=${MTRIPLE}`, "-O2"] });

  it("dump --format readobj equals llvm-readobj --stackmap byte for byte", () => {
    expect(dumpFiles([object], "readobj")).toBe(runTool(findLlvmTool("llvm-readobj"), ["--stackmap", object]));
  });

  it("has the return address signed in the rows llvm-dwarfdump's negate_ra_state instructions say", () => {
    const [dumped] = dwarfdump(object).fdes;
    expect(dumped!.instructions).toContain("DW_CFA_AARCH64_negate_ra_state:");
    // The sign state after each location, from llvm-dwarfdump's instruction list.
    const toggles: { location: number; signed: boolean }[] = [];
    let location = 0;
    let signed = false;
    for (const instruction of dumped!.instructions) {
      const advance = /^DW_CFA_advance_loc\d?: (\d+)/.exec(instruction);
      if (advance !== null) location += Number(advance[1]);
      if (instruction.startsWith("DW_CFA_AARCH64_negate_ra_state")) toggles.push({ location, signed: (signed = !signed) });
    }
    const expectedAt = (offset: number): boolean => toggles.filter((t) => t.location <= offset).at(-1)?.signed ?? false;
    const loaded = load(object);
    const rows = cfiTable(loaded.unwind!.fdes[0]!);
    const pcBegin = loaded.unwind!.fdes[0]!.pcBegin;
    expect(rows[0]!.returnAddressSigned).toBe(false);
    expect(rows.some((row) => row.returnAddressSigned)).toBe(true);
    for (const row of rows) expect(row.returnAddressSigned, `row at +${row.startAddress - pcBegin}`).toBe(expectedAt(row.startAddress - pcBegin));
    // The stackmap sits at the first call's return address: x30 there is signed.
    expect(loaded.descriptors.count).toBe(1);
    const ra = loaded.descriptors.returnAddress[0]!;
    expect(rows.find((row) => row.startAddress <= ra - 1 + pcBegin && ra - 1 + pcBegin < row.endAddress)?.returnAddressSigned).toBe(true);
  });
});

/*
 * Linked AArch64 files from the cross gcc: a shared library (its stack maps' function addresses
 * are R_AARCH64_RELATIVE relocations in .rela.dyn) and a PIE executable.
 */
describe("AArch64 shared libraries and executables", () => {
  const dir = mkdtempSync(join(tmpdir(), "rootwalk-a64-linked-"));
  const object = compileForAarch64(corpusEntry("call-chain-frame-pointer"));
  const harness = join(dir, "main.c");
  writeFileSync(
    harness,
    "#include <stdint.h>\nint64_t chain_f0(int64_t *, int64_t *, int64_t *);\nvoid gc_safepoint_poll(void) {}\nint main(void) { int64_t a[2] = {1, 2}; return (int)chain_f0(a, a, a); }\n",
  );
  const library = join(dir, "libchain.so");
  const executable = join(dir, "chain-pie");
  execFileSync("aarch64-linux-gnu-gcc", ["-shared", "-fPIC", object, "-o", library]);
  execFileSync("aarch64-linux-gnu-gcc", ["-pie", "-fPIE", harness, object, "-o", executable]);

  it.each([
    ["a shared library", library],
    ["a PIE executable", executable],
  ])("%s: readobj identity, and every function at its symbol's address", (_what, file) => {
    expect(dumpFiles([file], "readobj")).toBe(runTool(findLlvmTool("llvm-readobj"), ["--stackmap", file]));
    const symbols = new Map<string, number>();
    for (const line of execFileSync("aarch64-linux-gnu-nm", [file], { encoding: "utf8" }).split("\n")) {
      const m = /^([0-9a-f]+) T (chain_f\d)$/.exec(line);
      if (m !== null) symbols.set(m[2]!, parseInt(m[1]!, 16));
    }
    expect(symbols.size).toBe(3);
    const functions = load(file).descriptors.functions.map((fn) => [fn.name, fn.address]);
    expect(new Map(functions as [string, number][])).toEqual(symbols);
  });
});
