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
