// Generational collection with sticky mark bits (MMTk's StickyImmix) on simulated memory: a
// nursery collection promotes what it traces, never moves an old object, rescans the objects the
// write barrier logged, and the verifier names an old object stored into without a barrier.
import { describe, expect, it } from "vitest";
import { BYTES_IN_BLOCK } from "../../gc/heap-constants.js";
import { fillRaw, makeHeap, rawMatches } from "./support/mock-vm.js";

describe("nursery collections (--generational)", () => {
  it("promotes the young survivors and frees the young dead, keeping the old in place", () => {
    const { collector: c, mutator: m, scanner } = makeHeap({ sizeBytes: 16 * BYTES_IN_BLOCK, generational: true, verify: true });
    const old = m.alloc(2, 16);
    fillRaw(c, old, 1);
    scanner.roots = [old];
    expect(c.collect().kind).toBe("full"); // an explicit collect is full
    expect(c.space.isMarked(old)).toBe(true);

    const young = m.alloc(0, 24);
    fillRaw(c, young, 2);
    for (let i = 0; i < 100; i++) m.alloc(1, 40); // young garbage
    scanner.roots = [old, young];
    const cycle = c.collect("stress");
    expect(cycle.kind).toBe("nursery");
    expect(cycle.verifyFailures).toBe(0);
    expect(cycle.markedObjects).toBe(1); // only the young survivor: the old one is not traced again
    expect(cycle.promotedBytes).toBe(32); // header 8 + 24 raw bytes
    expect(scanner.roots[0]).toBe(old);
    expect(c.space.isMarked(scanner.roots[1]!)).toBe(true);
    expect(rawMatches(c, old, 1) && rawMatches(c, scanner.roots[1]!, 2)).toBe(true);
    expect(c.stats.minorCollections).toBe(1);
    expect(c.stats.majorCollections).toBe(1);
  });

  it("keeps a young object reachable only from a logged old object, and moves no old object under stress", () => {
    const { collector: c, mutator: m, scanner } = makeHeap({ sizeBytes: 16 * BYTES_IN_BLOCK, generational: true, stress: true, verify: true });
    const list = m.alloc(4, 0);
    scanner.roots = [list];
    c.collect("requested");
    const listAfterFull = scanner.roots[0]!;
    const young = m.alloc(0, 8);
    fillRaw(c, young, 7);
    c.writePointer(listAfterFull, 2, young); // the barrier logs the old list
    expect(c.remembered!.size).toBe(1);
    const cycle = c.collect("stress");
    expect(cycle.kind).toBe("nursery");
    expect(cycle.rememberedSetSize).toBe(1);
    expect(cycle.verifyFailures).toBe(0);
    expect(scanner.roots[0]).toBe(listAfterFull); // old: never moved by a nursery collection
    const moved = c.readPointer(listAfterFull, 2);
    expect(moved).not.toBe(young); // stress evacuates young survivors
    expect(rawMatches(c, moved, 7)).toBe(true);
    expect(c.remembered!.size).toBe(0); // the log is emptied, the list unlogged again
    expect(c.remembered!.isUnlogged(listAfterFull - c.space.base)).toBe(true);
  });

  it("names the old object, the field and the missing barrier, and collects fully instead", () => {
    const { collector: c, mutator: m, scanner } = makeHeap({ sizeBytes: 16 * BYTES_IN_BLOCK, generational: true, verify: true });
    const list = m.alloc(3, 0);
    scanner.roots = [list];
    c.collect();
    const young = m.alloc(0, 8);
    fillRaw(c, young, 9);
    c.space.writeWord(list + 16, young); // a store with no barrier after it
    const cycle = c.collect("stress");
    expect(cycle.kind).toBe("full");
    expect(cycle.verifyFailures).toBe(1);
    const message = c.verifyMessages.join("\n");
    expect(message).toContain(`field +0x10 of object 0x${list.toString(16)}`);
    expect(message).toContain(`0x${young.toString(16)}`);
    expect(message).toContain(`had no gc_write_barrier(0x${list.toString(16)}) after it`);
    expect(rawMatches(c, c.readPointer(list, 2), 9)).toBe(true); // the full collection kept it
  });

  it("triggers a nursery collection when the mutators allocated the nursery budget", () => {
    const { collector: c, mutator: m, scanner } = makeHeap({ sizeBytes: 64 * BYTES_IN_BLOCK, generational: true, nurseryBytes: 4 * BYTES_IN_BLOCK });
    const keep = m.alloc(1, 0);
    scanner.roots = [keep];
    for (let i = 0; i < 4000; i++) c.writePointer(keep, 0, m.alloc(0, 100));
    expect(c.stats.minorCollections).toBeGreaterThan(0);
    expect(c.stats.majorCollections).toBe(0);
    expect(c.stats.cycles.every((k) => k.reason === "nursery budget")).toBe(true);
  });

  it("without generational, the barrier logs nothing and every collection is full", () => {
    const { collector: c, mutator: m, scanner } = makeHeap({ sizeBytes: 16 * BYTES_IN_BLOCK });
    const a = m.alloc(1, 0);
    scanner.roots = [a];
    c.collect();
    c.writePointer(a, 0, m.alloc(0, 8));
    expect(c.remembered).toBeNull();
    expect(c.collect("stress").kind).toBe("full");
  });
});
