// Verification failures say where and why (issue 17, item 4): the root (as its scanner describes
// it, after the roots of the scanners before it) or the object field, the value and the reason;
// the run keeps its first FIRST_VERIFY_FAILURES_KEPT with the collection that found each.
import { describe, expect, it } from "vitest";
import { FIRST_VERIFY_FAILURES_KEPT } from "../../gc/gc-stats.js";
import { formatVerifyFailure } from "../../gc/heap-verifier.js";
import { MockRootScanner, makeHeap } from "./support/mock-vm.js";

describe("verification failure details", () => {
  it("names a root by its scanner's description, counted after the earlier scanners' roots", () => {
    // Foreign pointers allowed: the tracer leaves the bad root alone, only the verifier objects.
    const t = makeHeap({ verify: true, poison: false, allowForeignPointers: true });
    const { collector: c, mutator: m, scanner: first } = t;
    first.label = "first";
    first.roots = [m.alloc(0, 8), 0, m.alloc(0, 8)];
    const second = new MockRootScanner();
    second.label = "second";
    c.addRootScanner(second);
    const outside = 0x1000; // below the heap
    second.roots = [0, m.alloc(0, 8), outside];
    const cycle = c.collect();
    // Read before the collection (the checks it can make then) and after it.
    expect(cycle.verifyFailures).toBe(2);
    const after = c.verifyFailures.at(-1)!;
    expect(after).toEqual({
      location: { kind: "root", index: 3, description: "second roots[2]" },
      value: outside,
      reason: "outside the heap",
      expected: "a live object",
      phase: "after",
    });
    expect(formatVerifyFailure(after)).toBe("root #3 (second roots[2]): found 0x1000 outside the heap, expected a live object");
  });

  it("names a pointer field by its object and byte offset", () => {
    const t = makeHeap({ verify: true, poison: false });
    const { collector: c, mutator: m, scanner } = t;
    const holder = m.alloc(3, 0);
    scanner.roots = [holder];
    expect(c.collect().verifyFailures).toBe(0);
    c.writePointer(holder, 2, holder + 4); // misaligned, in field +0x10
    const report = c.verifyHeap();
    expect(report.details).toEqual([
      { location: { kind: "field", object: holder, offsetBytes: 16 }, value: holder + 4, reason: "misaligned", expected: "a live object" },
    ]);
    expect(report.messages[0]).toBe(`field +0x10 of object 0x${holder.toString(16)}: found 0x${(holder + 4).toString(16)} misaligned, expected a live object`);
  });

  it(`keeps the run's first ${FIRST_VERIFY_FAILURES_KEPT} failures with the collection that found each`, () => {
    const t = makeHeap({ verify: true, poison: false, allowForeignPointers: true });
    const { collector: c, scanner } = t;
    scanner.roots = Array.from({ length: 7 }, (_, k) => 0x1000 + 8 * k); // 7 roots outside the heap
    expect(c.collect().verifyFailures).toBe(14); // before and after
    expect(c.collect().verifyFailures).toBe(14);
    expect(c.stats.totalVerifyFailures).toBe(28);
    const kept = c.stats.firstVerifyFailures;
    expect(kept).toHaveLength(FIRST_VERIFY_FAILURES_KEPT);
    expect(kept.map((f) => f.cycle)).toEqual(Array.from({ length: FIRST_VERIFY_FAILURES_KEPT }, () => 1));
    expect(kept[0]!).toMatchObject({ location: { kind: "root", index: 0 }, value: 0x1000, reason: "outside the heap", phase: "before" });
    expect(kept[7]!).toMatchObject({ location: { kind: "root", index: 0 }, value: 0x1000, reason: "outside the heap", phase: "after" });
  });
});
