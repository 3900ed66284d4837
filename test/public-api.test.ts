import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { encodeSyntheticStackMap } from "../bench/synthetic-stackmap.js";
import * as api from "../src/index.js";
import { compileCorpusEntry, corpusEntry } from "./ll/corpus.js";

describe("the public index", () => {
  it("wires loaders, walker and collector together under one import", () => {
    for (const name of [
      "parseStackMapSection",
      "SafepointRegistry",
      "registerObjectFile",
      "registerFile",
      "loadStackMapFile",
      "StackMapFormatError",
      "loadPlimmixFromElf",
      "Unwinder",
      "StackRootScanner",
      "ImmixCollector",
      "compileProgram",
    ]) {
      expect(typeof (api as Record<string, unknown>)[name], name).toBe("function");
    }
  });
});

/*
 * Load biases reach the stack map index (the scan kernel's, which turns them into 64-bit words
 * with BigInt) only through the registry: every public registration entry must refuse a bias that
 * is no safe integer with an InvalidArgumentError, never a RangeError from BigInt or addresses
 * that are not whole numbers.
 */
describe("the public registration entries and a load bias that is no address", () => {
  const object = readFileSync(compileCorpusEntry(corpusEntry("call-chain")));
  const section = encodeSyntheticStackMap({ functions: 2, recordsPerFunction: 2, rootsPerRecord: 1 });
  const entries: [string, (bias: number) => unknown][] = [
    ["registerObjectFile", (loadBias) => api.registerObjectFile(new api.SafepointRegistry(), object, { path: "call-chain.o", loadBias })],
    ["registerFile", (loadBias) => api.registerFile(new api.SafepointRegistry(), object, { path: "call-chain.o", loadBias })],
    ["registerStackMapBytes", (loadBias) => api.registerStackMapBytes(new api.SafepointRegistry(), section, { name: "synthetic", loadBias })],
  ];

  it.each(entries)("%s refuses 1.5, NaN, Infinity, 2^53, 2^64 and a string by name", (_name, register) => {
    for (const bias of [1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, 2 ** 64, "0x10" as unknown as number]) {
      expect(() => register(bias), String(bias)).toThrow(api.InvalidArgumentError);
      expect(() => register(bias), String(bias)).toThrow(/^load ?bias: found /i);
    }
    expect(register(0x7f12_3400_0000)).toBe(1);
  });
});

/*
 * A JavaScript caller (no type checker) passing something else than bytes to an entry that
 * decodes bytes: one InvalidArgumentError naming what it got, never a TypeError from inside a
 * decoder (undefined, null) or a string read as "0 bytes".
 */
describe("the public decoding entries and an argument that is no bytes", () => {
  const entries: [string, (bytes: Uint8Array) => unknown][] = [
    ["ElfFile.parse", (bytes) => api.ElfFile.parse(bytes)],
    ["parseStackMapSection", (bytes) => api.parseStackMapSection(bytes)],
    ["loadStackMapFile", (bytes) => api.loadStackMapFile(bytes, "f.o")],
    ["loadObjectStackMaps", (bytes) => api.loadObjectStackMaps(bytes, "f.o")],
    ["registerObjectFile", (bytes) => api.registerObjectFile(new api.SafepointRegistry(), bytes, { path: "f.o" })],
    ["registerStackMapBytes", (bytes) => api.registerStackMapBytes(new api.SafepointRegistry(), bytes, { name: "f" })],
    ["loadPlimmixFromElf", (bytes) => api.loadPlimmixFromElf(bytes, "f.o")],
    ["loadOcamlFromElf", (bytes) => api.loadOcamlFromElf(bytes, "f.o")],
  ];
  const notBytes: [unknown, string][] = [
    [undefined, "undefined"],
    [null, "null"],
    ["\x7fELF", "a string"],
    [[0x7f, 0x45, 0x4c, 0x46], "an array"],
    [new ArrayBuffer(64), "an ArrayBuffer \\(wrap it: new Uint8Array\\(buffer\\)\\)"],
  ];

  it.each(entries)("%s names what it got", (_name, decode) => {
    for (const [value, found] of notBytes) {
      expect(() => decode(value as Uint8Array), String(found)).toThrow(api.InvalidArgumentError);
      expect(() => decode(value as Uint8Array), String(found)).toThrow(new RegExp(`: found ${found}, expected a Uint8Array \\(a Buffer is one\\)$`));
    }
  });
});

/*
 * The entries that take what another entry made (a blob, an ElfFile, an Fde, descriptors) refuse
 * anything else by name: a JavaScript caller's undefined was a TypeError from inside them, and a
 * record index the blob does not have was answered "not a statepoint" (undefined), a wrong answer.
 */
describe("the public entries and an argument of the wrong kind", () => {
  const bytes = readFileSync(compileCorpusEntry(corpusEntry("call-chain")));
  const elf = api.ElfFile.parse(bytes);
  const blob = api.parseStackMapSection(api.relocatedSection(elf, ".llvm_stackmaps")!.bytes)[0]!;

  it("names what it got and what it expected", () => {
    const cases: [string, () => unknown, string][] = [
      [
        "decodeStatepoint(undefined, 0)",
        () => api.decodeStatepoint(undefined as unknown as api.StackMapBlob, 0),
        "blob: found undefined, expected a StackMapBlob",
      ],
      ["formatBlobLikeReadobj({})", () => api.formatBlobLikeReadobj({} as api.StackMapBlob), "blob: found an object, expected a StackMapBlob"],
      ["relocatedSection(undefined)", () => api.relocatedSection(undefined as unknown as api.ElfFile, ".text"), "elf: found undefined, expected an ElfFile"],
      ["relocatedSection(elf, 5)", () => api.relocatedSection(elf, 5 as unknown as string), "section name: found a number, expected a string"],
      [
        "parseEhFrame(bytes)",
        () => api.parseEhFrame(bytes, undefined as unknown as { sectionAddress: number }),
        "options: found undefined, expected { sectionAddress",
      ],
      ["cfiRowAt(undefined, 0)", () => api.cfiRowAt(undefined as unknown as Parameters<typeof api.cfiRowAt>[0], 0), "fde: found undefined, expected an Fde"],
      [
        "describeLlvmMaps(x, undefined)",
        () => api.describeLlvmMaps("x", undefined as unknown as api.StackMapBlob[], undefined as unknown as api.FrameDescriptors, () => ""),
        "blobs: found undefined, expected an array of StackMapBlob",
      ],
      [
        "plimmixMapLength(undefined, ...)",
        () => api.plimmixMapLength(undefined as unknown as (a: number) => bigint, 8, 64),
        "readWord: found undefined, expected a function",
      ],
    ];
    for (const [name, call, message] of cases) {
      expect(call, name).toThrow(api.InvalidArgumentError);
      expect(call, name).toThrow(message);
    }
  });

  it("a record the blob does not have is refused, not answered 'not a statepoint'", () => {
    expect(blob.numRecords).toBeGreaterThan(0);
    expect(() => api.decodeStatepoint(blob, 0)).not.toThrow();
    for (const r of [blob.numRecords, -1, 0.5, Number.NaN]) {
      expect(() => api.decodeStatepoint(blob, r), String(r)).toThrow(`record index: found ${r}, expected a whole number in [0, ${blob.numRecords})`);
    }
  });
});

/*
 * An embedder walks the same snapshot files as `rootwalk walk` (docs/snapshot-format.md): the
 * library's loader reads the file the CLI reads, and walkStack over it finds what the CLI prints
 * for the shipped example (2 frames, roots [0x7010] = 0x50000000 and [0x7028] = 0x50000040).
 */
describe("loadStackSnapshotFile", () => {
  const example = new URL("../schemas/stack-snapshot.example.json", import.meta.url).pathname;

  it("loads the shipped example, and walkStack over it finds the CLI's frames and roots", () => {
    const loaded = api.loadStackSnapshotFile(example);
    const walk = api.walkStack(loaded.registry.snapshot(), loaded.memory, loaded.start, { mode: "lenient" });
    expect(walk.frames).toHaveLength(2);
    expect(walk.roots.map((r) => [api.hex(r.slot), api.hex(r.value)])).toEqual([
      ["0x7010", "0x50000000"],
      ["0x7028", "0x50000040"],
    ]);
  });

  it("refuses a file that is no snapshot with the path first", () => {
    expect(() => api.loadStackSnapshotFile("/nonexistent/snapshot.json")).toThrow("/nonexistent/snapshot.json: found ENOENT, expected a readable file");
    const text = new URL("../package.json", import.meta.url).pathname;
    expect(() => api.loadStackSnapshotFile(text)).toThrow(api.InvalidArgumentError);
    expect(() => api.loadStackSnapshotFile(text)).toThrow(/package\.json: snapshot: found no memory, expected a memory array/);
  });
});
