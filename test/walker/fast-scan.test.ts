import { X86_64 } from "../../src/arch/x86-64.js";
import { ROOT_TYPE_ATOMIC, ROOT_TYPE_POINTER } from "../../src/location/location-word.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SimulatedMemory } from "../../src/memory/memory.js";
import { NOT_FAST } from "../../src/safepoints/scan-recipes.js";
import { crossCheckScan, fastScan, generalScan } from "../../walker/scan-cross-check.js";
import { RegisterContext } from "../../walker/register-context.js";
import type { ManagedChunk } from "../../walker/unwinder.js";
import { type SyntheticSafepoint, syntheticRegistry } from "./support/synthetic-stack.js";

/*
 * The fast scan loop against the general unwinder on random stacks that mix every frame kind the
 * loop takes (static size, [rsp + off] roots, register saves) with kinds it hands over (typed
 * roots, roots outside the frame), and with every way a walk ends (boundary, stack top, unknown or
 * corrupt return address, misaligned SP, depth limit, SP leaving memory), in both modes.
 * (Every other stack of the suite goes through the same check: test/support/cross-check-setup.ts.)
 */

const BASE = 0x7ffe_0000_0000;
const SIZE = 64 * 1024;
const BOUNDARY = 0x9999_0000;

const SAFEPOINTS: SyntheticSafepoint[] = [
  {
    ra: 0x401010,
    frameSizeBytes: 40,
    pairs: [
      [0, 0],
      [8, 8],
      [16, 24],
    ],
  },
  { ra: 0x402020, frameSizeBytes: 24, pairs: [[0, 16]] },
  {
    ra: 0x403030,
    frameSizeBytes: 56,
    pairs: [
      [0, 0],
      [8, 8],
      [16, 16],
      [24, 24],
    ],
    saved: { 0: -16, 2: -24 },
  },
  {
    ra: 0x404040,
    frameSizeBytes: 32,
    pairs: [
      [0, 0],
      [8, 8],
    ],
    types: [ROOT_TYPE_POINTER, ROOT_TYPE_ATOMIC],
  },
  {
    ra: 0x405050,
    frameSizeBytes: 16,
    pairs: [
      [0, 0],
      [64, 64],
    ],
  }, // a root past the frame: general path decides
  { ra: 0x406060, frameSizeBytes: 0, pairs: [] },
  { ra: 0x1_0000_7070, frameSizeBytes: 8, pairs: [[0, 0]] }, // a key with a high half
];

type Ending = "boundary" | "stack-top" | "unknown" | "misaligned" | "out-of-memory";

function buildStack(sites: number[], ending: Ending): { memory: SimulatedMemory; sp: number; ra: number; stackTop?: number } {
  const memory = new SimulatedMemory(BASE, SIZE);
  let sp = BASE + 256;
  const start = sp;
  const firstRa = SAFEPOINTS[sites[0]!]!.ra;
  for (let f = 0; f < sites.length; f++) {
    const s = SAFEPOINTS[sites[f]!]!;
    for (let off = 0; off < s.frameSizeBytes; off += 8) memory.writeWord(sp + off, 0x10_0000_0000 + f * 64 + off);
    const raSlot = sp + s.frameSizeBytes;
    const next = sites[f + 1];
    let callerRa: number;
    if (next !== undefined) callerRa = SAFEPOINTS[next]!.ra;
    else if (ending === "boundary" || ending === "stack-top") callerRa = BOUNDARY;
    else if (ending === "unknown") callerRa = 0x4242_4242;
    else callerRa = SAFEPOINTS[1]!.ra;
    memory.writeWord(raSlot, callerRa);
    sp = raSlot + 8;
  }
  if (ending === "misaligned") {
    // The last frame's caller frame starts 4 bytes off: rewrite as a frame of a size the map does not have.
    memory.writeWord(sp - 8, SAFEPOINTS[5]!.ra);
    memory.writeWord(sp, SAFEPOINTS[5]!.ra);
  }
  return { memory, sp: start, ra: firstRa, stackTop: ending === "stack-top" ? sp : undefined };
}

describe("fast scan loop", () => {
  const registry = syntheticRegistry(SAFEPOINTS);

  it("compiles recipes only for frames it can take, and shares identical ones", () => {
    const recipes = registry.snapshot().moduleBySlot[0]!.recipes;
    expect(recipes.frameBytes[recipes.recipe[0]!]).toBe(40);
    expect(recipes.recipe[3]).toBe(NOT_FAST); // typed plimmix-style roots
    expect(recipes.recipe[4]).toBe(NOT_FAST); // a root slot outside [sp, cfa)
    const saving = recipes.recipe[2]!;
    expect(Array.from(recipes.saves.subarray(recipes.saveStart[saving]!, recipes.saveStart[saving]! + 2 * recipes.saveCount[saving]!))).toEqual([
      0, -16, 2, -24,
    ]);
    expect(Array.from(recipes.slots.subarray(recipes.slotStart[recipes.recipe[1]!]!, recipes.slotStart[recipes.recipe[1]!]! + 2))).toEqual([0, 16]);
  });

  // The same safepoints dealt into three modules: the loop reads the recipes of all modules
  // joined into one set (RegistrySnapshot.scanRecipes), indexed per module.
  const threeModules = syntheticRegistry(SAFEPOINTS, 3);
  it.each([
    ["one module", registry],
    ["three modules", threeModules],
  ])("gives the general unwinder's frames, pairs, stop and errors on every random stack (%s)", (_, registry) => {
    const site = fc.integer({ min: 0, max: SAFEPOINTS.length - 1 });
    fc.assert(
      fc.property(
        fc.array(site, { minLength: 1, maxLength: 200 }),
        fc.constantFrom<Ending>("boundary", "stack-top", "unknown", "misaligned", "out-of-memory"),
        fc.constantFrom<"strict" | "lenient">("strict", "lenient"),
        fc.option(fc.integer({ min: 1, max: 60 }), { nil: undefined }),
        (sites, ending, mode, maxDepth) => {
          const { memory, sp, ra, stackTop } = buildStack(sites, ending);
          const chunks = [{ sp, ra, boundaryRa: ending === "boundary" ? BOUNDARY : undefined, stackTop }];
          const options = { mode, maxDepth, boundaries: ending === "stack-top" ? undefined : new Set([BOUNDARY]) };
          const general = generalScan(registry.snapshot(), memory, chunks, options);
          const fast = fastScan(registry.snapshot(), memory, chunks, options);
          expect(fast).toEqual(general);
          crossCheckScan(registry.snapshot(), memory, chunks, options);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("takes a root's slots exactly where the map says (not just agreeing with a wrong general path)", () => {
    const { memory, sp, ra } = buildStack([0, 1, 2], "boundary");
    const fast = fastScan(registry.snapshot(), memory, [{ sp, ra, boundaryRa: BOUNDARY }], { mode: "strict" });
    expect(fast.frames).toBe(3);
    expect(fast.stopReason).toBe("boundary");
    // frame 0: pairs (0,0) (8,8) (16,24); frame 1 at sp + 48: (0,16); frame 2 at sp + 48 + 32: four plain roots
    const f1 = sp + 48;
    const f2 = f1 + 32;
    expect(fast.pairs).toEqual([
      sp,
      sp,
      0,
      sp + 8,
      sp + 8,
      0,
      sp + 16,
      sp + 24,
      0,
      f1,
      f1 + 16,
      1,
      f2,
      f2,
      2,
      f2 + 8,
      f2 + 8,
      2,
      f2 + 16,
      f2 + 16,
      2,
      f2 + 24,
      f2 + 24,
      2,
    ]);
  });
});

describe("fast scan loop on a corrupted two-chunk stack", () => {
  // Plain frames (one saving rbx), a typed-root frame the loop hands back, two chunks with
  // register contexts, the outer ending at its stack top; then every word of it overwritten in
  // turn with a value that matters to a walk (0, a key, the boundary, nearby SPs, odd values).
  const registry = syntheticRegistry([
    {
      ra: 0x2000,
      frameSizeBytes: 16,
      pairs: [
        [0, 0],
        [0, 8],
      ],
    },
    { ra: 0x3000, frameSizeBytes: 24, pairs: [[8, 8]], saved: { 0: -16 } },
    { ra: 0x4000, frameSizeBytes: 8, pairs: [[0, 0]], types: [ROOT_TYPE_POINTER] },
  ]);
  const STACK = 0x7ff0_0000_0000;
  const inner = [
    { ra: 0x2000, size: 16 },
    { ra: 0x3000, size: 24 },
    { ra: 0x3000, size: 24 },
    { ra: 0x4000, size: 8 },
    { ra: 0x2000, size: 16 },
    { ra: 0x3000, size: 24 },
  ];
  function build(): { memory: SimulatedMemory; chunks: ManagedChunk[] } {
    const memory = new SimulatedMemory(STACK, 0x2000);
    let sp = STACK + 0x100;
    const chunks: ManagedChunk[] = [{ sp, ra: 0x2000, boundaryRa: 0x7000, registers: RegisterContext.from({ rbx: 7 }, X86_64) }];
    inner.forEach((f, i) => {
      for (let off = 0; off < f.size; off += 8) memory.writeWord(sp + off, 0x5000_0000 + i * 0x100 + off);
      memory.writeWord(sp + f.size, inner[i + 1]?.ra ?? 0x7000);
      sp += f.size + 8;
    });
    sp = STACK + 0x1000;
    chunks.push({ sp, ra: 0x2000, stackTop: sp + 56 });
    memory.writeWord(sp, 0x5100_0000);
    memory.writeWord(sp + 8, 0x5100_0008);
    memory.writeWord(sp + 16, 0x3000);
    memory.writeWord(sp + 32, 0x5100_0020);
    memory.writeWord(sp + 48, 0x9999);
    return { memory, chunks };
  }

  it("agrees with the general unwinder on the intact stack and on every single-word corruption", () => {
    const snapshot = registry.snapshot();
    const intact = build();
    const whole = crossCheckScan(snapshot, intact.memory, intact.chunks, { mode: "strict" });
    expect(whole.frames).toBe(8);
    expect(whole.stopReason).toBe("stack-top");
    let errors = 0;
    const innerEnd = STACK + 0x100 + inner.reduce((n, f) => n + f.size + 8, 0);
    for (let addr = STACK + 0x100; addr < STACK + 0x1000 + 56; addr += 8) {
      if (addr === innerEnd) addr = STACK + 0x1000;
      for (const value of [0, 0x2000, 0x3000, 0x4000, 0x7000, addr + 8, addr - 8, 0x2001, STACK + 0x2000 - 8]) {
        const { memory, chunks } = build();
        memory.writeWord(addr, value);
        for (const mode of ["strict", "lenient"] as const) {
          const maxDepth = 6 + (addr & 8);
          const outcome = crossCheckScan(snapshot, memory, chunks, { mode, maxDepth });
          if (outcome.error !== undefined) errors++;
        }
      }
    }
    // the corruptions reached the checks: many walks ended in an error
    expect(errors).toBeGreaterThan(20);
  });
});
