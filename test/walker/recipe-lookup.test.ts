import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import { scanMemory } from "../../src/memory/scan-memory.js";
import { SafepointRegistry, type RegistrySnapshot } from "../../src/safepoints/registry.js";
import { RECIPE_NOT_FOUND, findRecipes } from "../../walker/scan-kernel/recipe-lookup.js";
import { syntheticDescriptors } from "../safepoints/synthetic-descriptors.js";

/*
 * The scan kernel's batch lookup (walker/scan-kernel/recipe-lookup.ts) runs the kernel's one table
 * probe over a list of addresses: every answer must be the recipe of what SafepointTable.find
 * (JavaScript, the registry's lookups) finds, on colliding strided keys, neighbours of keys, 0 and
 * addresses above 2^32, across several modules (the joined recipe numbering).
 */

const address = fc.integer({ min: 1, max: 2 ** 47 - 1 });
const strided = fc
  .tuple(fc.integer({ min: 0x400000, max: 2 ** 46 }), fc.constantFrom(1, 8, 16, 48, 4096), fc.integer({ min: 1, max: 1500 }))
  .map(([base, stride, n]) => Array.from({ length: n }, (_, i) => base + i * stride));
const addressSets = fc.oneof(fc.uniqueArray(address, { maxLength: 1500 }), strided);

/** The answer findRecipes must give for `ra`, from the JavaScript table and the joined recipes. */
function expectedRecipe(snapshot: RegistrySnapshot, ra: number): number {
  const slot = snapshot.table.find(ra);
  if (slot < 0) return RECIPE_NOT_FOUND;
  return snapshot.scanRecipes.recipe[snapshot.firstSafepointBySlot[snapshot.table.moduleSlotAt(slot)]! + snapshot.table.descriptorAt(slot)]!;
}

/** `queries` and their answers laid out in the scan memory, looked up in one kernel call. */
function lookUp(snapshot: RegistrySnapshot, queries: readonly number[]): Int32Array {
  const memory = scanMemory();
  const region = memory.allocate(12 * queries.length + 8, "recipe lookup test");
  try {
    const words = new Uint32Array(memory.buffer, region.offset, 2 * queries.length);
    queries.forEach((q, i) => {
      words[2 * i] = q >>> 0;
      words[2 * i + 1] = Math.floor(q / 2 ** 32);
    });
    const answers = new Int32Array(memory.buffer, region.offset + 8 * queries.length, queries.length);
    answers.fill(12345);
    findRecipes(snapshot.scanLayout, words, answers);
    return answers.slice();
  } finally {
    region.release();
  }
}

describe("findRecipes (the kernel's probe over many addresses)", () => {
  it("answers every address as SafepointTable.find does, across modules", () => {
    fc.assert(
      fc.property(addressSets, fc.integer({ min: 1, max: 3 }), fc.array(address, { maxLength: 100 }), (present, modules, others) => {
        const registry = new SafepointRegistry();
        for (let m = 0; m < modules; m++) {
          const mine = present.filter((_, i) => i % modules === m);
          if (mine.length > 0) registry.register({ name: `m${m}`, format: "llvm-v3", descriptors: syntheticDescriptors(mine), contentKey: `m${m}` });
        }
        const snapshot = registry.snapshot();
        const queries = [...present, ...present.map((ra) => ra + 1), ...present.map((ra) => ra + 2 ** 32), ...others, 0];
        const answers = lookUp(snapshot, queries);
        queries.forEach((q, i) => expect(answers[i], `address ${q.toString(16)}`).toBe(expectedRecipe(snapshot, q)));
        expect(answers.filter((r) => r !== RECIPE_NOT_FOUND).length).toBeGreaterThanOrEqual(present.length);
      }),
      { numRuns: 80 },
    );
  });

  it("answers 0 (an empty cell's key) with RECIPE_NOT_FOUND, not the empty cell's recipe", () => {
    const registry = new SafepointRegistry();
    registry.register({ name: "m", format: "llvm-v3", descriptors: syntheticDescriptors([0x401000, 0x401010]), contentKey: "m" });
    const found = [...lookUp(registry.snapshot(), [0, 0x401000, 0x401010, 0x401001])].map((r) => r !== RECIPE_NOT_FOUND);
    expect(found).toEqual([false, true, true, false]);
  });

  it("refuses views outside the scan memory and mismatched lengths, by name", () => {
    const layout = new SafepointRegistry().snapshot().scanLayout;
    expect(() => findRecipes(layout, new Uint32Array(2), new Int32Array(1))).toThrow(InvalidArgumentError);
    const region = scanMemory().allocate(64, "recipe lookup test");
    try {
      const words = new Uint32Array(scanMemory().buffer, region.offset, 4);
      const answers = new Int32Array(scanMemory().buffer, region.offset + 32, 1);
      expect(() => findRecipes(layout, words, answers)).toThrow(/4 address words for 1 answers/);
    } finally {
      region.release();
    }
  });
});
