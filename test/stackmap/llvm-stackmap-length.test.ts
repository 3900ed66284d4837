import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ElfFile } from "../../src/elf/elf-file.js";
import { TruncatedInputError } from "../../src/errors.js";
import { SimulatedMemory } from "../../src/memory/memory.js";
import { llvmStackMapLength, parseStackMapSection } from "../../src/stackmap/llvm-stackmap.js";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { catchError } from "../support/catch-error.js";
import { compileToObject } from "../support/llvm-tools.js";
import { concatBytes, encodeBlob } from "./stackmap-encoder.js";

/*
 * The length of a live StackMap v3 blob (what `run` reads at gc_init when the map is not found in
 * a file): equal to the parser's length for every blob of a section, real (llc) and hand-built
 * (odd and even location counts, live-outs, constants), and never reading past its bound.
 */

const BASE = 0x7f00_0000_0000;

/** `bytes` at BASE, poisoned after them up to `sizeBytes` (a read there is not a zero). */
function memoryHolding(bytes: Uint8Array, sizeBytes: number): SimulatedMemory {
  const memory = new SimulatedMemory(BASE, sizeBytes, { poison: true });
  memory.bytes.set(bytes.subarray(0, sizeBytes));
  return memory;
}

/** The .llvm_stackmaps section of a real statepoint program (llc -O2). */
function realSection(): Uint8Array {
  const source = join(repoRoot(), "test", "native-programs", "sp-binary-tree.ll");
  const object = compileToObject(source, { optPasses: ["-passes=rewrite-statepoints-for-gc"], llcFlags: ["-O2"] });
  const bytes = readFileSync(object);
  const section = ElfFile.parse(bytes).section(".llvm_stackmaps");
  if (section === undefined) throw new Error(`${object}: no .llvm_stackmaps`);
  return bytes.slice(section.offset, section.offset + section.size);
}

const HAND_BUILT = [
  encodeBlob({
    functions: [
      {
        address: 0x1000n,
        stackSize: 24n,
        records: [
          {
            id: 1n,
            instructionOffset: 5,
            locations: [{ kind: 3, reg: 7, offset: 8 }],
            liveOuts: [
              { reg: 17, size: 32 },
              { reg: 3, size: 8 },
            ],
          },
        ],
      },
      {
        address: 0x2000n,
        stackSize: 8n,
        records: [
          {
            id: 2n,
            instructionOffset: 9,
            locations: [
              { kind: 3, reg: 7, offset: 8 },
              { kind: 5, offset: 0 },
            ],
          },
          { id: 3n, instructionOffset: 12, locations: [] },
        ],
      },
    ],
    constants: [0x8000000000000000n],
  }),
  encodeBlob({ functions: [] }),
];

describe("llvmStackMapLength: a live StackMap v3 blob's length", () => {
  it("is the parser's length of every blob of a section, one after the other", () => {
    const section = concatBytes(realSection(), ...HAND_BUILT);
    const memory = memoryHolding(section, section.length + 64);
    const blobs = parseStackMapSection(section);
    expect(blobs.length).toBeGreaterThanOrEqual(3);
    let at = 0;
    for (const blob of blobs) {
      expect(blob.sectionOffset).toBe(at);
      const length = llvmStackMapLength((a) => memory.readWordBigInt(a), BASE + at, section.length + 64 - at);
      expect(length).toBe(blob.sizeBytes);
      at += length;
    }
    expect(at).toBe(section.length);
  });

  it("a bound shorter than the blob is a TruncatedInputError, and no read reaches the bound", () => {
    const blob = HAND_BUILT[0]!;
    const memory = memoryHolding(blob, blob.length + 64);
    for (let bound = 0; bound < blob.length; bound++) {
      let highest = -1;
      const read = (a: number): bigint => {
        highest = Math.max(highest, a - BASE + 8);
        return memory.readWordBigInt(a);
      };
      expect(catchError(() => llvmStackMapLength(read, BASE, bound))).toBeInstanceOf(TruncatedInputError);
      expect(highest).toBeLessThanOrEqual(bound);
    }
    expect(llvmStackMapLength((a) => memory.readWordBigInt(a), BASE, blob.length)).toBe(blob.length);
  });

  it("counts that cannot fit the readable bytes fail before any record is read", () => {
    const header = new Uint8Array(16);
    header[0] = 3;
    new DataView(header.buffer).setUint32(8, 0xffff_ffff, true); // constants
    const memory = memoryHolding(header, 4096);
    const e = catchError(() => llvmStackMapLength((a) => memory.readWordBigInt(a), BASE, 4096));
    expect(e).toBeInstanceOf(TruncatedInputError);
    expect((e as Error).message).toBe(
      "stack map functions and constants (0 functions, 4294967295 constants) at offset 0x10: found 4080 bytes, expected 34359738360",
    );
  });
});
