import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { dumpFiles } from "../../src/cli/dump-command.js";
import { loadObjectStackMaps, type ObjectStackMaps } from "../../src/loader/object-file.js";
import { FLAG_DYNAMIC_FRAME, FLAG_FRAME_POINTER_CFA, FLAG_FRAME_SIZE_DIFFERS, FLAG_NO_UNWIND_INFO } from "../../src/safepoints/frame-descriptors.js";
import { CORPUS, compileCorpusEntry, corpusEntry } from "../ll/corpus.js";
import { findLlvmTool, runTool } from "../support/llvm-tools.js";
import { objdumpCallSites, type FrameState } from "../support/objdump-frames.js";

/*
 * The loader against LLVM's own tools on every object of the .ll corpus (test/ll/corpus.ts):
 *  - `rootwalk dump --format readobj` is byte for byte what `llvm-readobj --stackmap` prints;
 *  - the effective frame size of every safepoint (from .eh_frame) is what the machine code does
 *    (test/support/objdump-frames.ts reads it off `llvm-objdump -d`: prologue plus pushes).
 */

function load(path: string): ObjectStackMaps {
  const loaded = loadObjectStackMaps(readFileSync(path), path);
  if (loaded === undefined) throw new Error(`${path} has no stack maps`);
  return loaded;
}

interface FrameCheck {
  checked: number;
  pushedArgs: number;
  dynamic: number;
  framePointer: number;
  oracleUnknown: number;
}

/** Compares every safepoint's frame with the disassembly; returns what was checked. */
function checkFramesAgainstObjdump(object: string, loaded: ObjectStackMaps): FrameCheck {
  const oracle = objdumpCallSites(object);
  const d = loaded.descriptors;
  const result: FrameCheck = { checked: 0, pushedArgs: 0, dynamic: 0, framePointer: 0, oracleUnknown: 0 };
  for (let i = 0; i < d.count; i++) {
    const fn = d.functions[d.functionIndex[i]!]!;
    const where = `${object} ${fn.name} record #${d.recordIndex[i]}`;
    const machine = oracle.get(fn.name ?? "");
    expect(machine, `${where}: objdump knows the function`).toBeDefined();
    const offset = d.returnAddress[i]! - fn.address;
    const call = machine!.callSites.find((c) => c.returnOffset === offset);
    const state: FrameState | undefined = call ?? machine!.frameAt.get(offset);
    const flags = d.flags[i]!;
    expect(flags & FLAG_NO_UNWIND_INFO, `${where}: has unwind info`).toBe(0);
    if ((flags & FLAG_DYNAMIC_FRAME) !== 0) {
      result.dynamic++;
      expect(machine!.dynamic, `${where}: objdump sees a dynamic frame too`).toBe(true);
      expect(machine!.framePointer, `${where}: a dynamic frame has a frame pointer`).toBe(true);
      expect(d.frameSizeBytes[i]).toBe(-1);
      expect(flags & FLAG_FRAME_POINTER_CFA).toBe(FLAG_FRAME_POINTER_CFA);
      continue;
    }
    if ((flags & FLAG_FRAME_POINTER_CFA) !== 0) {
      // CFA = rbp+16: the walker climbs by rbp; the size is static only with GNU_args_size.
      result.framePointer++;
      expect(machine!.framePointer, `${where}: CFA via rbp means a frame pointer`).toBe(true);
      expect(d.cfaOffsetBytes[i]).toBe(16);
      if (d.frameSizeBytes[i]! >= 0 && state?.frameSizeBytes !== undefined) expect(d.frameSizeBytes[i]).toBe(state.frameSizeBytes);
      continue;
    }
    if (state?.frameSizeBytes === undefined) {
      result.oracleUnknown++;
      continue;
    }
    expect(d.frameSizeBytes[i], `${where}: frame size`).toBe(state.frameSizeBytes);
    expect(d.stackSizeBytes[i], `${where}: StackSize is the fixed part`).toBe(state.baseBytes);
    const differs = (flags & FLAG_FRAME_SIZE_DIFFERS) !== 0;
    expect(differs, `${where}: flagged exactly when arguments were pushed`).toBe(state.pushedArgBytes > 0);
    if (differs) result.pushedArgs++;
    result.checked++;
  }
  return result;
}

describe("every corpus object", () => {
  for (const entry of CORPUS) {
    describe(entry.name, () => {
      const object = compileCorpusEntry(entry);
      it("dump --format readobj equals llvm-readobj --stackmap byte for byte", () => {
        expect(dumpFiles([object], "readobj")).toBe(runTool(findLlvmTool("llvm-readobj"), ["--stackmap", object]));
      });
      it("has the effective frame size of every safepoint that the machine code has", () => {
        const check = checkFramesAgainstObjdump(object, load(object));
        expect(check.checked + check.dynamic + check.framePointer).toBeGreaterThan(0);
        expect(check.oracleUnknown).toBe(0);
      });
    });
  }
});

describe("frames that StackSize alone gets wrong", () => {
  it("pushed stack arguments at -O2: the frame size includes them and is flagged", () => {
    const object = compileCorpusEntry(corpusEntry("stack-args"));
    const loaded = load(object);
    const check = checkFramesAgainstObjdump(object, loaded);
    expect(check.pushedArgs).toBeGreaterThanOrEqual(2);
    const d = loaded.descriptors;
    const differing = [...Array(d.count).keys()].filter((i) => (d.flags[i]! & FLAG_FRAME_SIZE_DIFFERS) !== 0);
    // 8 arguments push 16 bytes, 10 arguments push 32 (test/ll/stack-args.ll).
    expect(differing.map((i) => d.frameSizeBytes[i]! - d.stackSizeBytes[i]!).sort()).toEqual(expect.arrayContaining([16, 32]));
  });

  it("dynamic frames (StackSize UINT64_MAX) are marked and climbed by the frame pointer", () => {
    for (const name of ["dynamic-frame", "realigned-frame"]) {
      const object = compileCorpusEntry(corpusEntry(name));
      const check = checkFramesAgainstObjdump(object, load(object));
      expect(check.dynamic, name).toBeGreaterThan(0);
    }
  });
});

describe("a shared library linked from several objects", () => {
  const names = ["stack-args", "call-chain", "mixed-kinds", "deopt-statepoint", "gc-in-csr"];
  const objects = names.map((n) => compileCorpusEntry(corpusEntry(n)));
  const library = runToolLink(objects);

  it("finds every blob, and every function address is the symbol's address from nm", () => {
    const loaded = load(library);
    expect(loaded.kind).toBe("shared");
    expect(loaded.blobs.length).toBe(objects.length);
    const nm = new Map<string, number>();
    for (const line of runTool("nm", ["--defined-only", library]).split("\n")) {
      const m = /^([0-9a-f]+) [tT] (\S+)$/.exec(line);
      if (m) nm.set(m[2]!, parseInt(m[1]!, 16));
    }
    let functions = 0;
    loaded.functions.forEach((list, b) => {
      expect(list.length).toBe(loaded.blobs[b]!.numFunctions);
      for (const fn of list) {
        expect(fn.name, `blob ${b} function at 0x${fn.address.toString(16)} has a name`).toBeDefined();
        expect(fn.address, fn.name).toBe(nm.get(fn.name!));
        functions++;
      }
    });
    expect(functions).toBeGreaterThanOrEqual(10);
    // The blobs are the objects' blobs, in link order: same record counts.
    names.forEach((n, i) => expect(loaded.blobs[i]!.numRecords).toBe(load(objects[i]!).blobs[0]!.numRecords));
  });

  it("readobj prints only the first blob; rootwalk prints that blob identically, then the rest", () => {
    const ours = dumpFiles([library], "readobj");
    const theirs = runTool(findLlvmTool("llvm-readobj"), ["--stackmap", library]);
    expect(ours.startsWith(theirs)).toBe(true);
    expect(ours.split("LLVM StackMap Version: 3").length - 1).toBe(objects.length);
  });

  it("has the same frame sizes and roots in the library as in each object", () => {
    const lib = load(library);
    const byName = new Map<string, string[]>();
    const summary = (l: ObjectStackMaps, i: number) => {
      const d = l.descriptors;
      return `${d.returnAddress[i]! - d.functions[d.functionIndex[i]!]!.address}:${d.frameSizeBytes[i]}:${d.flags[i]}:${d.cfaRegister[i]}:${d.cfaOffsetBytes[i]}:${d.pairCount[i]}`;
    };
    for (let i = 0; i < lib.descriptors.count; i++) {
      const name = lib.descriptors.functions[lib.descriptors.functionIndex[i]!]!.name!;
      byName.set(name, [...(byName.get(name) ?? []), summary(lib, i)]);
    }
    let compared = 0;
    for (const object of objects) {
      const o = load(object);
      for (let i = 0; i < o.descriptors.count; i++) {
        const name = o.descriptors.functions[o.descriptors.functionIndex[i]!]!.name!;
        expect(byName.get(name), name).toContain(summary(o, i));
        compared++;
      }
    }
    expect(compared).toBe(lib.descriptors.count);
  });
});

function runToolLink(objects: string[]): string {
  // Through the toolchain module (cached by content): gcc -shared, as a runtime would build it.
  return linkShared(objects);
}
import { linkSharedLibrary as linkShared } from "../../src/toolchain/llvm-toolchain.js";
