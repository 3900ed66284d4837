// Global roots: slots in memory outside the heap (any SlotMemory, here src/memory's
// SimulatedMemory), scanned first and rewritten in place when their objects move.
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import { SimulatedMemory } from "../../src/memory/memory.js";
import { catchError } from "../support/catch-error.js";
import { makeHeap } from "./support/mock-vm.js";

describe("global roots", () => {
  it("keeps objects held only by globals alive and relocates the slots", () => {
    const globals = new SimulatedMemory(0x60_0000, 64);
    const t = makeHeap({ stress: true, verify: true, globalMemory: globals });
    const { collector: c, mutator: m } = t;
    const a = m.alloc(1, 8);
    const b = m.alloc(0, 8);
    c.writePointer(a, 0, b);
    globals.writeWord(0x60_0000, a);
    globals.writeWord(0x60_0008, 0); // a null global is not a root
    c.addGlobalRoot(0x60_0000);
    c.addGlobalRoot(0x60_0008);
    m.alloc(0, 8); // garbage

    const cycle = c.collect();
    expect(cycle.rootsVisited).toBe(1);
    expect(cycle.markedObjects).toBe(2);
    expect(cycle.verifyFailures).toBe(0);
    const moved = globals.readWord(0x60_0000);
    expect(moved).not.toBe(a);
    expect(c.pointerSlotCount(moved)).toBe(1);
    expect(globals.readWord(0x60_0008)).toBe(0);

    expect(c.removeGlobalRoot(0x60_0000)).toBe(true);
    expect(c.collect().markedObjects).toBe(0);
  });

  it("rejects a global slot inside the heap, or one without a memory", () => {
    const t = makeHeap();
    expect(catchError(() => t.collector.addGlobalRoot(t.collector.space.base + 64, new SimulatedMemory(8, 8)))).toBeInstanceOf(InvalidArgumentError);
    expect(catchError(() => t.collector.addGlobalRoot(0x1000))).toBeInstanceOf(InvalidArgumentError);
  });
});
