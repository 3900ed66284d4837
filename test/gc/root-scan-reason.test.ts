// The root-scanning contract says why each scan is made (gc/root-scanning.ts RootScanReason): a
// scanner never needs to look at the collector's state to tell a collection's scan, whose roots
// are traced and then updated, from a verification's read of the roots.
import { describe, expect, it } from "vitest";
import { makeHeap } from "./support/mock-vm.js";

describe("scanRoots says why it is called", () => {
  it("one 'collection' scan per collection, followed by its one updateRoots", () => {
    const { collector, mutator, scanner } = makeHeap();
    scanner.roots = [mutator.alloc(1, 16)];
    collector.collect();
    collector.collect();
    expect(scanner.reasons).toEqual(["collection", "collection"]);
    expect(scanner.updates).toBe(2);
  });

  it("with verify on, the roots are read before and after the collection's scan as 'verification'", () => {
    const { collector, mutator, scanner } = makeHeap({ verify: true });
    scanner.roots = [mutator.alloc(1, 16)];
    const cycle = collector.collect();
    expect(cycle.verifyFailures).toBe(0);
    expect(scanner.reasons).toEqual(["verification", "collection", "verification"]);
    expect(scanner.updates).toBe(1);
  });

  it("a nursery collection's scan says 'nursery-collection' (its scanner may skip frames of old roots), a full one 'collection'", () => {
    const { collector, mutator, scanner } = makeHeap({ generational: true, verify: true });
    scanner.roots = [mutator.alloc(1, 16)];
    expect(collector.collect().kind).toBe("full");
    scanner.roots.push(mutator.alloc(1, 16));
    expect(collector.collect("stress").kind).toBe("nursery");
    // verify: before, the collection's own scan, after, and the nursery trace's check of every root.
    expect(scanner.reasons).toEqual(["verification", "collection", "verification", "verification", "nursery-collection", "verification", "verification"]);
    expect(scanner.updates).toBe(2);
  });

  it("verifyHeap and graphChecksum outside a collection read the roots as 'verification'", () => {
    const { collector, mutator, scanner } = makeHeap();
    scanner.roots = [mutator.alloc(1, 16)];
    collector.verifyHeap();
    collector.graphChecksum();
    expect(scanner.reasons).toEqual(["verification", "verification"]);
    expect(scanner.updates).toBe(0);
  });
});
