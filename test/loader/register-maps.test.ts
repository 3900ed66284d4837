import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  DuplicateSafepointError,
  SafepointRegistry,
  linkSharedLibrary,
  loadObjectStackMaps,
  registerObjectFile,
  registerStackMapBytes,
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
