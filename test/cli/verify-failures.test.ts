// How `run` and `sim` show verification failures (src/cli/verify-failures.ts): the count, then
// the first failures one per line, and the same in --json's verifyFailureDetails.
import { describe, expect, it } from "vitest";
import { verifyFailureJson, verifyFailureReport } from "../../src/cli/verify-failures.js";
import { makeHeap } from "../gc/support/mock-vm.js";

describe("verify failure report", () => {
  // 12 roots outside the heap (foreign pointers allowed: only the verifier objects), found before
  // and after each collection: 24 failures, of which the first 10 are kept.
  const t = makeHeap({ verify: true, poison: false, allowForeignPointers: true });
  t.scanner.label = "mock";
  t.scanner.roots = Array.from({ length: 12 }, (_, k) => 0x1000 + 8 * k);
  t.collector.collect();
  const { totalVerifyFailures, firstVerifyFailures } = t.collector.stats;

  it("prints the count and the first ten, each with its collection, place, value and reason", () => {
    expect(totalVerifyFailures).toBe(24);
    const lines = verifyFailureReport("sim", totalVerifyFailures, firstVerifyFailures).trimEnd().split("\n");
    expect(lines[0]).toBe("rootwalk sim: 24 heap verification failures; the first 10:");
    expect(lines).toHaveLength(11);
    expect(lines[1]).toBe("  collection #1 (before it): root #0 (mock roots[0]): found 0x1000 outside the heap, expected a live object");
    expect(lines[10]).toBe("  collection #1 (before it): root #9 (mock roots[9]): found 0x1048 outside the heap, expected a live object");
  });

  it("a single failure: no 'first N'", () => {
    expect(verifyFailureReport("run", 1, firstVerifyFailures.slice(0, 1))).toBe(
      "rootwalk run: 1 heap verification failure:\n  collection #1 (before it): root #0 (mock roots[0]): found 0x1000 outside the heap, expected a live object\n",
    );
  });

  it("as JSON: the place as an object, addresses in hex, the message", () => {
    expect(verifyFailureJson(firstVerifyFailures[1]!)).toEqual({
      collection: 1,
      phase: "before",
      where: { kind: "root", index: 1, description: "mock roots[1]" },
      value: "0x1008",
      reason: "outside the heap",
      expected: "a live object",
      message: "root #1 (mock roots[1]): found 0x1008 outside the heap, expected a live object",
    });
  });
});
