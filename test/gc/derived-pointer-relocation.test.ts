// Derived (interior) roots: the collector only sees bases; the scanner rebuilds every derived
// pointer from its relocated base, whatever its offset (inside, before or past the object).
import { describe, expect, it } from "vitest";
import { makeHeap } from "./support/mock-vm.js";

describe("derived-pointer relocation through the scanner", () => {
  it("rebuilds derived = base' + (derived - base) for every pair, across several moving collections", () => {
    const t = makeHeap({ stress: true, verify: true });
    const { collector: c, mutator: m, scanner } = t;
    const a = m.alloc(3, 40); // 8 + 24 + 40 = 72 bytes
    const b = m.alloc(0, 64);
    const large = m.alloc(0, 10_000);
    c.writePointer(a, 1, b);
    c.rawBytes(b)[5] = 0x5a;
    c.rawBytes(a)[0] = 0x11;
    scanner.roots = [a, b, a, large];
    const rawB = b; // b has no pointer slots: its raw bytes start at its address
    scanner.derived = [
      { baseIndex: 0, address: a + 16 }, // interior: a's slot 2
      { baseIndex: 1, address: rawB + 5 }, // interior: a raw byte of b
      { baseIndex: 0, address: a - 8 }, // before the object (its header)
      { baseIndex: 2, address: a + 64 }, // one past the end (72 - 8): the same base reported twice
      { baseIndex: 3, address: large + 9_000 }, // a large object never moves
    ];
    const offsets = scanner.derived.map((d) => d.address - scanner.roots[d.baseIndex]!);

    for (let round = 0; round < 3; round++) {
      const oldRoots = [...scanner.roots];
      const cycle = c.collect();
      expect(cycle.verifyFailures).toBe(0);
      const [na, nb, na2, nl] = scanner.roots;
      expect(na).not.toBe(oldRoots[0]);
      expect(na2).toBe(na);
      expect(nl).toBe(large);
      scanner.derived.forEach((d, i) => expect(d.address - scanner.roots[d.baseIndex]!).toBe(offsets[i]));
      // The derived pointers lead to the same data as before.
      expect(c.space.bytes[scanner.derived[1]!.address - c.space.base]).toBe(0x5a);
      expect(c.space.readWord(scanner.derived[0]!.address - 8)).toBe(nb); // slot 1 of a, through the interior pointer
      expect(c.readPointer(na!, 1)).toBe(nb);
      expect(c.rawBytes(na!)[0]).toBe(0x11);
    }
    expect(scanner.updates).toBe(3);
  });
});
