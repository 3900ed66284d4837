import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  InvalidArgumentError,
  SafepointRegistry,
  StackMapFormatError,
  compileProgram,
  linkSharedLibrary,
  listSafepoints,
  loadStackMapFile,
  registerFile,
  registerObjectFile,
  registerOcamlFile,
  registerPlimmixFile,
  registerStackMapBytes,
} from "../../src/index.js";
import { registerPlimmixBytes } from "../../src/loader/plimmix-loader.js";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { OCAML_SOURCES, ocamlFixture } from "../support/ocaml-fixtures.js";

/*
 * registerFile: "a file with stack maps", whatever its format, detected as `rootwalk dump` does
 * (loader/stack-map-file.ts); the per-format functions throw on the wrong format instead of
 * returning undefined (a plimmix object given to registerObjectFile was silently not registered).
 */

const PROGRAMS = join(repoRoot(), "test", "native-runtime", "programs");

async function objectBytes(source: string, mode: "statepoint" | "plimmix" | "plain"): Promise<{ path: string; bytes: Uint8Array }> {
  const path = await compileProgram(join(PROGRAMS, source), { mode });
  return { path, bytes: readFileSync(path) };
}

describe("registerFile detects the format", () => {
  it("statepoint, plimmix and OCaml files each register under their format and return the handle", async () => {
    const registry = new SafepointRegistry();
    const statepoint = await objectBytes("list-tree.ll", "statepoint");
    const plimmix = await objectBytes("plimmix-list.ll", "plimmix");
    const ocaml = ocamlFixture(OCAML_SOURCES[0]);
    const handles = [
      registerFile(registry, statepoint.bytes, { path: statepoint.path, loadBias: 0x1000_0000 }),
      registerFile(registry, plimmix.bytes, { path: plimmix.path, loadBias: 0x2000_0000 }),
      registerFile(registry, ocaml.bytes, { path: ocaml.path, loadBias: 0x3000_0000 }),
    ];
    expect(new Set(handles).size).toBe(3);
    expect([...registry.snapshot().modules.values()].map((m) => m.format)).toEqual(["llvm-v3", "plimmix-v1", "ocaml"]);
    expect(listSafepoints(registry.snapshot()).length).toBeGreaterThan(3);
  }, 180_000);

  it("the per-format functions throw a typed error naming what the file holds", async () => {
    const registry = new SafepointRegistry();
    const plimmix = await objectBytes("plimmix-list.ll", "plimmix");
    const call = () => registerObjectFile(registry, plimmix.bytes, { path: plimmix.path });
    expect(call).toThrow(StackMapFormatError);
    expect(call).toThrow(/found a _GC_MAP_ v1 map \(plimmix, gcroot code\), expected an LLVM stack map v3 \(.llvm_stackmaps\)$/);
    const statepoint = await objectBytes("list-tree.ll", "statepoint");
    expect(() => registerPlimmixFile(registry, statepoint.bytes, { path: statepoint.path })).toThrow(
      /found an LLVM stack map v3 \(.llvm_stackmaps\), expected a _GC_MAP_ v1 map/,
    );
    expect(() => registerOcamlFile(registry, statepoint.bytes, { path: statepoint.path })).toThrow(/expected an OCaml frame table/);
    expect(registry.snapshot().modules.size).toBe(0);
  }, 180_000);

  it("no stack maps, several formats, not ELF: each a typed error", async () => {
    const registry = new SafepointRegistry();
    const plain = await objectBytes("list-tree.ll", "plain"); // no RewriteStatepointsForGC: no stack map
    expect(() => registerFile(registry, plain.bytes, { path: plain.path })).toThrow(
      /found no stack maps \(no .llvm_stackmaps section, no _GC_MAP_ symbol, no caml\*__frametable symbol\)/,
    );
    // A library linking statepoint and gcroot code holds both: the caller says which.
    const callChain = await compileProgram(join(repoRoot(), "test", "ll", "call-chain.ll"), { mode: "statepoint" });
    const both = linkSharedLibrary([callChain, (await objectBytes("plimmix-list.ll", "plimmix")).path]);
    const bytes = readFileSync(both);
    expect(() => registerFile(registry, bytes, { path: both })).toThrow(
      /found an LLVM stack map v3 \(.llvm_stackmaps\) and a _GC_MAP_ v1 map .*expected one format, or options.format naming which/,
    );
    expect(registerFile(registry, bytes, { path: both, format: "plimmix-v1" })).toBeTypeOf("number");
    expect(() => registerFile(registry, new TextEncoder().encode("not an ELF file"), { path: "notes.txt" })).toThrow(/notes.txt/);
    try {
      registerFile(registry, new Uint8Array(64), { path: "zeros.bin" });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(Error);
      expect((e as { code?: string }).code).toMatch(/MALFORMED|TRUNCATED|UNSUPPORTED|INVALID_ARGUMENT/);
    }
    expect(new StackMapFormatError("x.o", [], "y")).toBeInstanceOf(InvalidArgumentError);
  }, 180_000);
});

describe("a format that is none of the formats", () => {
  // A misspelt format (a JavaScript caller's) matched no format: the file was then said to hold
  // the wrong one, "expected undefined".
  it("registerFile and loadStackMapFile name it and the formats there are", async () => {
    const statepoint = await objectBytes("list-tree.ll", "statepoint");
    const expected = "format: found llvm, expected llvm-v3 | plimmix-v1 | ocaml";
    const registry = new SafepointRegistry();
    expect(() => registerFile(registry, statepoint.bytes, { path: statepoint.path, format: "llvm" as "llvm-v3" })).toThrow(
      new InvalidArgumentError("format", "llvm", "llvm-v3 | plimmix-v1 | ocaml"),
    );
    expect(() => loadStackMapFile(statepoint.bytes, statepoint.path, { formats: ["llvm" as "llvm-v3"] })).toThrow(expected);
    expect(registry.snapshot().modules.size).toBe(0);
  }, 180_000);

  it("every register entry refuses what is no registry by name (it was registry.register's TypeError)", async () => {
    const statepoint = await objectBytes("list-tree.ll", "statepoint");
    const snapshot = new SafepointRegistry().snapshot();
    for (const register of [registerFile, registerObjectFile, registerPlimmixFile, registerOcamlFile]) {
      for (const wrong of [snapshot, undefined, {}]) {
        expect(() => register(wrong as unknown as SafepointRegistry, statepoint.bytes, { path: statepoint.path })).toThrow(InvalidArgumentError);
      }
    }
    for (const wrong of [snapshot, undefined]) {
      expect(() => registerStackMapBytes(wrong as unknown as SafepointRegistry, statepoint.bytes, { name: "x" })).toThrow(/^registry: found /);
      expect(() => registerPlimmixBytes(wrong as unknown as SafepointRegistry, statepoint.bytes, { name: "x" })).toThrow(/^registry: found /);
    }
  }, 180_000);
});
