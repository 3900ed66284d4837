/**
 * `.eh_frame` parsing and CFI evaluation against the reference tools, on code built by the real
 * compilers (see test/unwind/fixtures and support/corpus.ts):
 *
 * - every CIE and FDE header equals `llvm-dwarfdump --eh-frame` (offsets, CIE fields, pc ranges;
 *   personality and LSDA addresses in the linked library, where no relocation is pending);
 * - at EVERY byte address of every FDE, our row prints exactly like the dwarfdump row covering
 *   that address, except the CFA, which is compared with `readelf -wF`: LLVM 14's dwarfdump
 *   does not restore the CFA rule on DW_CFA_restore_state (GCC's epilogues rely on it), and the
 *   only places the two tools disagree must be FDEs using DW_CFA_restore_state;
 * - rows that dwarfdump prints with a DWARF expression raise UnsupportedInputError;
 * - findFde maps every address of every FDE back to it.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { UnsupportedInputError } from "../../src/errors.js";
import { type CfiRow, cfiRowAt, cfiRowsAt, cfiTable } from "../../src/unwind/cfi.js";
import type { Fde } from "../../src/unwind/eh-frame.js";
import {
  type DumpedFde,
  type Dwarfdump,
  type LoadedEhFrame,
  type ReadelfFde,
  corpus,
  dumpedRowAt,
  dwarfdump,
  loadEhFrame,
  readelfCfaAt,
  readelfFrames,
} from "./support/corpus.js";
import { formatRowLikeDwarfdump, readelfCfaToDwarfdump, withCfa } from "./support/format-row.js";

const CASES = [
  { name: "llc -O2 object", build: corpus.llvmObject },
  { name: "gcc -O2 object", build: corpus.gccObject },
  { name: "gcc -O2 -fno-omit-frame-pointer object", build: corpus.gccFramePointerObject },
  { name: "g++ -O2 object with exceptions and a cold section", build: corpus.cxxObject },
  { name: "gcc -O2 object with stack realignment (DWARF expressions)", build: corpus.drapObject },
  { name: "llvm-mc object using every register rule", build: corpus.asmObject },
  { name: "g++ -shared library (gcc + llc code, crt files)", build: corpus.sharedLibrary },
];

function hasExpression(text: string): boolean {
  return text.includes("DW_OP");
}

/** The text we expect at `address`: dwarfdump's register rules with readelf's CFA. */
function expectedText(dumped: DumpedFde, readelf: ReadelfFde, address: number): string {
  const row = dumpedRowAt(dumped, address);
  if (row === undefined) throw new Error(`dwarfdump has no row at 0x${address.toString(16)}`);
  const cfa = readelfCfaAt(readelf, address);
  return cfa === undefined || cfa === "exp" ? row.text : withCfa(row.text, readelfCfaToDwarfdump(cfa));
}

describe.each(CASES)("$name", ({ build }) => {
  let loaded: LoadedEhFrame;
  let dump: Dwarfdump;
  let readelf: Map<number, ReadelfFde>;
  const fdePairs = (): { fde: Fde; dumped: DumpedFde; gnu: ReadelfFde }[] =>
    loaded.ehFrame.fdes.map((fde) => {
      const dumped = dump.fdes.find((d) => d.offset === fde.offset);
      const gnu = readelf.get(fde.offset);
      if (dumped === undefined || gnu === undefined) throw new Error(`FDE at 0x${fde.offset.toString(16)} missing from a reference dump`);
      return { fde, dumped, gnu };
    });

  beforeAll(() => {
    const path = build();
    loaded = loadEhFrame(path);
    dump = dwarfdump(path);
    readelf = readelfFrames(path);
  });

  it("parses the same CIEs as llvm-dwarfdump", () => {
    expect(loaded.ehFrame.cies.length).toBe(dump.cies.length);
    for (const expected of dump.cies) {
      const cie = loaded.ehFrame.cieAt(expected.offset);
      expect(cie, `CIE at ${expected.offset}`).toBeDefined();
      expect({
        version: cie!.version,
        augmentation: cie!.augmentation,
        codeAlignmentFactor: cie!.codeAlignmentFactor,
        dataAlignmentFactor: cie!.dataAlignmentFactor,
        returnAddressRegister: cie!.returnAddressRegister,
      }).toEqual({
        version: expected.version,
        augmentation: expected.augmentation,
        codeAlignmentFactor: expected.codeAlignmentFactor,
        dataAlignmentFactor: expected.dataAlignmentFactor,
        returnAddressRegister: expected.returnAddressRegister,
      });
      // In a .o the personality field awaits a relocation; dwarfdump's value there is meaningless.
      if (!loaded.relocatable) expect(cie!.personality?.address).toBe(expected.personalityAddress);
    }
  });

  it("parses the same FDEs as llvm-dwarfdump (pc_begin via .rela.eh_frame in objects)", () => {
    expect(loaded.ehFrame.fdes.map((f) => f.offset)).toEqual(dump.fdes.map((d) => d.offset));
    for (const { fde, dumped } of fdePairs()) {
      expect({ cie: fde.cie.offset, pcBegin: fde.pcBegin, pcEnd: fde.pcBegin + fde.pcRange }).toEqual({
        cie: dumped.cieOffset,
        pcBegin: dumped.pcBegin,
        pcEnd: dumped.pcEnd,
      });
      if (!loaded.relocatable) expect(fde.lsda?.address).toBe(dumped.lsdaAddress);
    }
    if (loaded.relocatable) {
      // Every pc_begin came from a relocation, never from the unrelocated bytes.
      expect(loaded.pcBeginRelocations.size).toBeGreaterThanOrEqual(loaded.ehFrame.fdes.length);
    } else {
      expect(loaded.ehFrame.terminatorOffset).toBe(loaded.ehFrameBytes.length - 4);
    }
  });

  it("finds every FDE by every address it covers", () => {
    // In a .o with several text sections the offsets of different sections overlap; check
    // only FDEs that no other FDE overlaps.
    const fdes = loaded.ehFrame.fdes;
    for (const fde of fdes) {
      const overlapped = fdes.some((o) => o !== fde && o.pcBegin < fde.pcBegin + fde.pcRange && fde.pcBegin < o.pcBegin + o.pcRange);
      if (overlapped) continue;
      for (const address of [fde.pcBegin, fde.pcBegin + (fde.pcRange >> 1), fde.pcBegin + fde.pcRange - 1]) {
        expect(loaded.ehFrame.findFde(address)).toBe(fde);
      }
    }
    const end = Math.max(...fdes.map((f) => f.pcBegin + f.pcRange));
    expect(loaded.ehFrame.findFde(end)).toBeUndefined();
  });

  it("computes the dwarfdump/readelf row at every address of every FDE", () => {
    let comparedAddresses = 0;
    for (const { fde, dumped, gnu } of fdePairs()) {
      const addresses = Array.from({ length: fde.pcRange }, (_, i) => fde.pcBegin + i);
      if (dumped.rows.some((r) => hasExpression(r.text))) {
        // Evaluate address by address: rows before the expression work, the rest are unsupported.
        for (const address of addresses) {
          const expected = expectedText(dumped, gnu, address);
          if (hasExpression(expected)) {
            expect(() => cfiRowAt(fde, address), `0x${address.toString(16)}`).toThrow(UnsupportedInputError);
          } else {
            expect(formatRowLikeDwarfdump(cfiRowAt(fde, address)), `0x${address.toString(16)}`).toBe(expected);
          }
          comparedAddresses++;
        }
        continue;
      }
      const rows = cfiRowsAt(fde, addresses);
      const mismatches = addresses.filter((address, i) => formatRowLikeDwarfdump(rows[i]!) !== expectedText(dumped, gnu, address));
      expect(
        mismatches.map((a) => `0x${a.toString(16)}: ours ${formatRowLikeDwarfdump(rows[a - fde.pcBegin]!)} / expected ${expectedText(dumped, gnu, a)}`),
        `FDE at 0x${fde.offset.toString(16)}`,
      ).toEqual([]);
      // The single-address entry point agrees with the one-pass one at every row boundary.
      for (const row of dumped.rows) {
        for (const address of [row.address, row.address - 1]) {
          if (address < fde.pcBegin) continue;
          expect(cfiRowAt(fde, address)).toEqual(rows[address - fde.pcBegin]);
        }
      }
      // The full table starts its rows where dwarfdump does (it prints one row per advance).
      expect(cfiTable(fde).map((r: CfiRow) => r.startAddress)).toEqual(dumped.rows.map((r) => r.address));
      comparedAddresses += addresses.length;
    }
    expect(comparedAddresses).toBeGreaterThan(0);
  });

  it("disagrees with llvm-dwarfdump's CFA only after DW_CFA_restore_state (LLVM 14 bug), siding with readelf", () => {
    for (const { fde, dumped, gnu } of fdePairs()) {
      const disagreements = dumped.rows.filter((row) => {
        const cfa = readelfCfaAt(gnu, row.address);
        return cfa !== undefined && cfa !== "exp" && withCfa(row.text, readelfCfaToDwarfdump(cfa)) !== row.text;
      });
      if (disagreements.length > 0) {
        expect(dumped.instructions, `FDE at 0x${fde.offset.toString(16)}`).toContain("DW_CFA_restore_state:");
      }
    }
  });
});
