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
