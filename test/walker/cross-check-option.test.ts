import { describe, expect, it } from "vitest";
import { SimulatedMemory } from "../../src/memory/memory.js";
import { crossCheckByDefault } from "../../walker/scan-cross-check.js";
import { StackRootScanner } from "../../walker/stack-root-scanner.js";
import { walkStack } from "../../walker/walk-stack.js";
import { syntheticRegistry } from "./support/synthetic-stack.js";

/*
 * The `crossCheck` option of StackRootScanner and walkStack: on, the stack is walked by both paths
 * and any difference is an error; off, only the requested path runs. Made visible by giving the
 * fast loop a wrong recipe (its root slot moved from sp + 0 to sp + 8), which only the fast path
 * reads: the general unwinder still finds sp + 0.
 */

const BASE = 0x7ff0_0000_0000;
const BOUNDARY = 0x9999;

function stackWithWrongRecipe() {
  const registry = syntheticRegistry([{ ra: 0x2000, frameSizeBytes: 16, pairs: [[0, 0]] }]);
  registry.snapshot().scanRecipes.slots.fill(8);
  const memory = new SimulatedMemory(BASE, 0x1000);
  const sp = BASE + 0x100;
  memory.writeWord(sp, 0x5000_0000);
  memory.writeWord(sp + 8, 0);
  memory.writeWord(sp + 16, BOUNDARY);
  const stack = { memory, chunks: [{ sp, ra: 0x2000, boundaryRa: BOUNDARY }] };
  return { registry, stack };
}

describe("cross-checking is an option of the scanner and the walk", () => {
  it("the tests turn it on by default for everything they scan (test/support/cross-check-setup.ts)", () => {
    expect(crossCheckByDefault()).toBe(true);
    const { registry, stack } = stackWithWrongRecipe();
    expect(() => new StackRootScanner(registry, () => [stack]).walkStacks()).toThrow(/fast scan and general unwinder disagree on pairs/);
  });

  it("crossCheck: false scans with the fast loop alone (and here believes its wrong recipe)", () => {
    const { registry, stack } = stackWithWrongRecipe();
    const scanner = new StackRootScanner(registry, () => [stack], { crossCheck: false });
    const roots: number[] = [];
    scanner.scanRoots((b) => roots.push(b), "collection");
    expect(scanner.lastWalkOf(0)?.pairs.baseSlots[0]).toBe(stack.chunks[0]!.sp + 8);
    expect(roots).toEqual([]);
  });

  it("walkStack: crossCheck true fails on the disagreement, false walks with the general unwinder only", () => {
    const { registry, stack } = stackWithWrongRecipe();
    const walk = (crossCheck: boolean) => walkStack(registry.snapshot(), stack.memory, stack.chunks, { mode: "strict", crossCheck });
    expect(() => walk(true)).toThrow(/disagree on pairs/);
    expect(walk(false).roots.map((r) => r.value)).toEqual([0x5000_0000]);
  });
});
