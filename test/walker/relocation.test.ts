import { X86_64 } from "../../src/arch/x86-64.js";
import { describe, expect, it } from "vitest";
import { SimulatedMemory } from "../../src/memory/memory.js";
import { RegisterContext } from "../../walker/register-context.js";
import { StackRootScanner } from "../../walker/stack-root-scanner.js";
import { walkStack } from "../../walker/walk-stack.js";
import { relocateRootPairs } from "../../walker/relocate-roots.js";
import { syntheticRegistry } from "./support/synthetic-stack.js";

const BASE = 0x7ff0_0000_0000;
const TOP = BASE + 0x1000;
const BOUNDARY = 0x9999;

describe("relocating root pairs", () => {
  it("one slot that is the base of a derived pair and a pair of its own: all reads happen before any write", () => {
    // One frame: [sp+0] holds base b; [sp+8] holds b+24 derived from it. Pairs: (0,8) then (0,0).
    const registry = syntheticRegistry([
      {
        ra: 0x2000,
        frameSizeBytes: 32,
        pairs: [
          [0, 8],
          [0, 0],
        ],
      },
    ]);
    const memory = new SimulatedMemory(BASE, 0x1000);
    const sp = BASE + 0x100;
    const b = 0x5000_0000;
    memory.writeWord(sp, b);
    memory.writeWord(sp + 8, b + 24);
    memory.writeWord(sp + 32, BOUNDARY);
    const result = walkStack(registry.snapshot(), memory, { sp, ra: 0x2000 }, { mode: "strict", boundaries: new Set([BOUNDARY]) });
    expect(result.roots.map((r) => r.value)).toEqual([b + 24, b]);
    const moved = 0x6000_0000;
    relocateRootPairs(result.pairs, memory, result.contexts, (old) => (old === b ? moved : old));
    expect(memory.readWord(sp)).toBe(moved);
    expect(memory.readWord(sp + 8)).toBe(moved + 24);
  });

  it("derived pointers below their base and null bases", () => {
    const registry = syntheticRegistry([
      {
        ra: 0x2000,
        frameSizeBytes: 24,
        pairs: [
          [0, 8],
          [16, 16],
        ],
      },
    ]);
    const memory = new SimulatedMemory(BASE, 0x1000);
    const sp = BASE + 0x100;
    memory.writeWord(sp, 0x5000_0100);
    memory.writeWord(sp + 8, 0x5000_0100 - 16); // derived = base - 16
    memory.writeWord(sp + 16, 0); // a null root
    memory.writeWord(sp + 24, BOUNDARY);
    const result = walkStack(registry.snapshot(), memory, { sp, ra: 0x2000 }, { mode: "strict", boundaries: new Set([BOUNDARY]) });
    const written = relocateRootPairs(result.pairs, memory, result.contexts, (old) => old + 0x1000);
    expect(written).toBe(2);
    expect(memory.readWord(sp)).toBe(0x5000_1100);
    expect(memory.readWord(sp + 8)).toBe(0x5000_1100 - 16);
    expect(memory.readWord(sp + 16)).toBe(0);
  });

  it("the StackRootScanner visits bases, then rewrites slots and saved registers, across two threads", () => {
    // Thread 1: frame A (ra 0x2000) saved rbx at CFA-16; its caller B (ra 0x3000) keeps a root in rbx.
    const registry = syntheticRegistry([
      { ra: 0x2000, frameSizeBytes: 16, pairs: [[0, 0]], saved: { 0: -16 } },
      { ra: 0x3000, frameSizeBytes: 8, pairs: [] },
    ]);
    // B's root in a register: patch the descriptor through a second registry with a Register location.
    const memory1 = new SimulatedMemory(BASE, 0x1000);
    const sp = BASE + 0x100;
    memory1.writeWord(sp, 0x5000_0000); // A's root
    memory1.writeWord(sp + 8, 0x5100_0000); // A's save slot of rbx (CFA - 16 = sp + 24 - 16)
    memory1.writeWord(sp + 16, 0x3000); // A's return address -> B
    memory1.writeWord(sp + 24 + 8, BOUNDARY); // B's return address
    const memory2 = new SimulatedMemory(TOP, 0x1000);
    memory2.writeWord(TOP + 0x100, 0x5200_0000);
    memory2.writeWord(TOP + 0x100 + 16, 0x3000);
    memory2.writeWord(TOP + 0x100 + 24 + 8, BOUNDARY);
    const threads = [
      { memory: memory1, chunks: [{ sp, ra: 0x2000, registers: RegisterContext.from({ rbx: 0x5300_0000 }, X86_64), boundaryRa: BOUNDARY }] },
      { memory: memory2, chunks: [{ sp: TOP + 0x100, ra: 0x2000, boundaryRa: BOUNDARY }] },
    ];
    const scanner = new StackRootScanner(registry, () => threads);
    const visited: number[] = [];
    scanner.scanRoots((b) => visited.push(b), "collection");
    expect(visited).toEqual([0x5000_0000, 0x5200_0000]);
    expect(scanner.framesScanned).toBe(4);
    scanner.updateRoots((old) => old + 0x10);
    expect(memory1.readWord(sp)).toBe(0x5000_0010);
    expect(memory2.readWord(TOP + 0x100)).toBe(0x5200_0010);
    expect(scanner.rootsRelocated).toBe(2);
  });
});

describe("typed roots (_GC_MAP_): pointer, trait, complex, atomic", () => {
  it("TRAIT roots are the heap-pointer slot at +8 of the object; COMPLEX roots report their visitor; ATOMIC are skipped", async () => {
    const { ROOT_TYPE_ATOMIC, ROOT_TYPE_COMPLEX, ROOT_TYPE_POINTER, ROOT_TYPE_TRAIT } = await import("../../src/location/location-word.js");
    const registry = syntheticRegistry([
      {
        ra: 0x2000,
        frameSizeBytes: 40,
        pairs: [
          [0, 0],
          [8, 8],
          [16, 16],
          [24, 24],
          [32, 32],
        ],
        types: [ROOT_TYPE_POINTER, ROOT_TYPE_TRAIT, ROOT_TYPE_COMPLEX, ROOT_TYPE_ATOMIC, ROOT_TYPE_TRAIT],
      },
    ]);
    const memory = new SimulatedMemory(BASE, 0x1000);
    const sp = BASE + 0x100;
    const trait = BASE + 0x800; // a two-word trait object on the stack: [vtable, heap pointer]
    const complex = BASE + 0x900; // a structure whose first word is its visitor
    memory.writeWord(sp, 0x5000_0000);
    memory.writeWord(sp + 8, trait);
    memory.writeWord(trait, 0x1234);
    memory.writeWord(trait + 8, 0x5100_0000);
    memory.writeWord(sp + 16, complex);
    memory.writeWord(complex, 0x40_1000);
    memory.writeWord(sp + 24, 42);
    memory.writeWord(sp + 32, 0); // a null trait: nothing to scan
    memory.writeWord(sp + 40, BOUNDARY);
    const result = walkStack(registry.snapshot(), memory, { sp, ra: 0x2000 }, { mode: "strict", boundaries: new Set([BOUNDARY]) });
    expect(result.roots.map((r) => [r.slot - BASE, r.value])).toEqual([
      [0x100, 0x5000_0000],
      [0x808, 0x5100_0000],
    ]);
    expect(result.pairs.complexRoots).toEqual([{ slot: sp + 16, visitor: 0x40_1000, frame: 0 }]);
  });
});

describe("CFA-relative roots (function-wide offsets of _GC_MAP_ and OCaml maps)", () => {
  it("resolve against the CFA, so pushed outgoing arguments do not move them", async () => {
    const { FrameDescriptorBuilder, DWARF_CFA, NO_CFA_RULE } = await import("../../src/safepoints/frame-descriptors.js");
    const { encodeLocationWord0 } = await import("../../src/location/location-word.js");
    const { SafepointRegistry } = await import("../../src/safepoints/registry.js");
    const b = new FrameDescriptorBuilder();
    const fn = b.addFunction({ name: "f", address: 0x1000, stackSizeBytes: 24 });
    const loc = b.addLocation(encodeLocationWord0(3, 4, DWARF_CFA, 8), -24); // CFA - 24 = SP + 8 without pushes
    b.addPair(loc, loc);
    // At this call site 16 bytes of arguments were pushed: the effective frame size is 40.
    b.addSafepoint({
      returnAddress: 0x2000,
      frameSizeBytes: 40,
      stackSizeBytes: 24,
      cfaRegister: 7,
      cfaOffsetBytes: 48,
      savedRegOffsets: [],
      flags: 0,
      functionIndex: fn,
      blobIndex: 0,
      recordIndex: 0,
      locStart: loc,
      deoptCount: 0,
      pairStart: 0,
      pairCount: 1,
      allocaCount: 0,
    });
    void NO_CFA_RULE;
    const registry = new SafepointRegistry();
    registry.register({ name: "cfa", format: "plimmix-v1", descriptors: b.finish(), contentKey: "cfa" });
    const memory = new SimulatedMemory(BASE, 0x1000);
    const sp = BASE + 0x100;
    memory.writeWord(sp + 24, 0x5000_0000); // SP + 16 pushed + 8
    memory.writeWord(sp + 40, BOUNDARY);
    const result = walkStack(registry.snapshot(), memory, { sp, ra: 0x2000 }, { mode: "strict", boundaries: new Set([BOUNDARY]) });
    expect(result.roots).toMatchObject([{ slot: sp + 24, value: 0x5000_0000 }]);
  });
});
