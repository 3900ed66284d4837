import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  DuplicateSafepointError,
  SafepointRegistry,
  linkSharedLibrary,
  loadObjectStackMaps,
  registerObjectFile,
  registerStackMapBytes,
  compileProgram,
} from "../../src/index.js";
import { compileCorpusEntry, corpusEntry } from "../ll/corpus.js";

describe("registering maps through the public API", () => {
  const library = linkSharedLibrary(["call-chain", "stack-args", "deopt-statepoint"].map((n) => compileCorpusEntry(corpusEntry(n))));
  const bytes = readFileSync(library);
  const loaded = loadObjectStackMaps(bytes, library)!;
  const BIAS = 0x7f12_3400_0000;

  it("a shared library at a load bias: every safepoint found at link address + bias, with its effective frame", () => {
    const registry = new SafepointRegistry();
    const handle = registerObjectFile(registry, bytes, { path: library, loadBias: BIAS });
    expect(handle).toBeDefined();
    const snapshot = registry.snapshot();
    expect(snapshot.safepointCount).toBe(loaded.descriptors.count);
    for (let i = 0; i < loaded.descriptors.count; i++) {
      const hit = snapshot.lookup(loaded.descriptors.returnAddress[i]! + BIAS);
      expect(hit?.index).toBe(i);
      expect(hit?.module.descriptors.frameSizeBytes[i]).toBe(loaded.descriptors.frameSizeBytes[i]);
      expect(snapshot.lookup(loaded.descriptors.returnAddress[i]!)).toBeUndefined();
    }
    // The same file again is a no-op; at another bias it is another module.
    expect(registerObjectFile(registry, bytes, { path: library, loadBias: BIAS })).toBe(handle);
    registerObjectFile(registry, bytes, { path: library, loadBias: BIAS * 2 });
    expect(registry.snapshot().modules.size).toBe(2);
    registry.unregister(handle!);
    expect(registry.snapshot().safepointCount).toBe(loaded.descriptors.count);
  });

  it("the section bytes alone, as a program hands them to gc_init (addresses already absolute)", () => {
    const registry = new SafepointRegistry();
    registerStackMapBytes(registry, loaded.relocatedBytes, { name: "gc_init@0x1000" });
    const section = loaded.relocatedBytes;
    expect(() => registerStackMapBytes(registry, section.slice(), { name: "again", loadBias: 0 })).not.toThrow();
    // The same length is not the same map: a copy with one function's stack size changed is
    // another map claiming the same return addresses (not a repeat of the first).
    const changed = section.slice();
    const stackSizeAt = 16 + 8; // header, then function #0's address; its StackSize follows
    new DataView(changed.buffer).setUint32(stackSizeAt, new DataView(section.buffer, section.byteOffset).getUint32(stackSizeAt, true) + 8, true);
    expect(() => registerStackMapBytes(registry, changed, { name: "changed", loadBias: 0 })).toThrow(DuplicateSafepointError);
    // Overlapping a registered module is an error naming both modules.
    expect(() => registerObjectFile(registry, bytes, { path: library })).toThrow(DuplicateSafepointError);
    expect(() => registerObjectFile(registry, bytes, { path: library })).toThrow(/gc_init@0x1000/);
  });
});

/*
 * Two objects of one program, each compiled alone: both start at address 0, so their return
 * addresses collide (here: the same code under other names). The error must say how to register
 * both (a loadBias each), and doing what it says must work.
 */
describe("two .o files whose return addresses collide", () => {
  it("the error names both and says to give each its load address ({ loadBias }); with one, both register", async () => {
    const scratch = mkdtempSync(join(tmpdir(), "rootwalk-collide-"));
    const source = readFileSync(join(import.meta.dirname, "..", "ll", "call-chain.ll"), "utf8");
    const renamed = join(scratch, "call-chain-b.ll");
    writeFileSync(renamed, source.replaceAll("chain_f", "other_f"));
    const a = readFileSync(compileCorpusEntry(corpusEntry("call-chain")));
    const b = readFileSync(await compileProgram(renamed, { mode: "statepoint" }));
    const registry = new SafepointRegistry();
    registerObjectFile(registry, a, { path: "a.o" });
    const register = () => registerObjectFile(registry, b, { path: "b.o" });
    expect(register).toThrow(DuplicateSafepointError);
    expect(register).toThrow(
      /: found in module "b\.o", expected it only once \(already registered by module "a\.o"\); to register both, give each the address it is loaded at: \{ loadBias \}/,
    );
    registerObjectFile(registry, b, { path: "b.o", loadBias: 0x10_0000 });
    expect(registry.snapshot().modules.size).toBe(2);
  });
});
