import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DuplicateSafepointError, InvalidArgumentError } from "../../src/errors.js";
import { SafepointRegistry } from "../../src/safepoints/registry.js";
import { SafepointTable } from "../../src/safepoints/safepoint-table.js";
import { syntheticDescriptors } from "./synthetic-descriptors.js";

const address = fc.integer({ min: 1, max: 2 ** 47 - 1 });
/** Return addresses as compiled code has them: a base plus a regular stride (call sites of one size). */
const stridedAddresses = fc
  .tuple(fc.integer({ min: 0x400000, max: 2 ** 46 }), fc.constantFrom(5, 8, 16, 32, 64, 4096), fc.integer({ min: 1, max: 3000 }))
  .map(([base, stride, n]) => Array.from({ length: n }, (_, i) => base + i * stride));
const addressSets = fc.oneof(fc.uniqueArray(address, { maxLength: 2000 }), stridedAddresses);

describe("SafepointTable", () => {
  it("finds every inserted address and no other", () => {
    fc.assert(
      fc.property(addressSets, fc.array(address, { maxLength: 200 }), (present, probes) => {
        const table = new SafepointTable();
        present.forEach((ra, i) => expect(table.insert(ra, i % 3, i)).toBe(-1));
        expect(table.size).toBe(present.length);
        expect(table.capacity).toBeGreaterThanOrEqual(2 * present.length);
        present.forEach((ra, i) => {
          const slot = table.find(ra);
          expect(slot).toBeGreaterThanOrEqual(0);
          expect(table.moduleSlotAt(slot)).toBe(i % 3);
          expect(table.descriptorAt(slot)).toBe(i);
        });
        const set = new Set(present);
        for (const p of probes) if (!set.has(p)) expect(table.find(p)).toBe(-1);
        // 0 (a zeroed slot, a stack's end marker) is never a safepoint, even though it marks empty slots.
        expect(table.find(0)).toBe(-1);
        for (const ra of present) {
          if (!set.has(ra + 1)) expect(table.find(ra + 1)).toBe(-1);
        }
      }),
      { numRuns: 150 },
    );
  });

  it("reports the existing slot instead of inserting a second copy", () => {
    const table = new SafepointTable();
    expect(table.insert(0x401000, 0, 7)).toBe(-1);
    const slot = table.insert(0x401000, 1, 8);
    expect(slot).toBeGreaterThanOrEqual(0);
    expect(table.descriptorAt(slot)).toBe(7);
    expect(table.size).toBe(1);
  });

  it("finds nothing for a query that is not an integer address, even when its u32 halves are a key's", () => {
    const table = new SafepointTable();
    table.insert(0xffff_fff8, 0, 1);
    table.insert(0x401000, 0, 2);
    expect(table.find(0xffff_fff8)).toBeGreaterThanOrEqual(0);
    expect(table.find(-8)).toBe(-1);
    expect(table.find(0x401000 + 0.5)).toBe(-1);
    expect(table.find(0x401000 + 2 ** 64)).toBe(-1);
    expect(table.find(Number.NaN)).toBe(-1);
  });

  it("rejects addresses that cannot be return addresses", () => {
    const table = new SafepointTable();
    for (const bad of [0, -8, 2 ** 53, 1.5, Number.NaN]) expect(() => table.insert(bad, 0, 0)).toThrow(InvalidArgumentError);
  });

  it("keeps probe sequences short on regularly spaced addresses (high-bit hash)", () => {
    for (const stride of [16, 64, 4096, 1 << 20]) {
      const table = new SafepointTable();
      const n = 20_000;
      for (let i = 0; i < n; i++) table.insert(0x7f0000000000 + i * stride, 0, i);
      // Count probe steps by walking each key's chain from its home slot.
      let probes = 0;
      for (let i = 0; i < n; i++) {
        const ra = 0x7f0000000000 + i * stride;
        const found = table.find(ra);
        const home = (table as unknown as { slotOf(a: number): number }).slotOf(ra);
        probes += 1 + ((found - home + table.capacity) % table.capacity);
      }
      expect(probes / n).toBeLessThan(2.5);
    }
  });

  it("find (the f64 key column) and findHalves (the u32 halves the scan kernel copies) agree through growth and clones", () => {
    fc.assert(
      fc.property(addressSets, fc.integer({ min: 0, max: 500 }), (present, extra) => {
        const table = new SafepointTable();
        present.forEach((ra, i) => table.insert(ra, 0, i));
        const copy = table.clone(extra);
        for (let i = 0; i < extra; i++) copy.insert(2 ** 48 + i * 16, 1, i);
        for (const t of [table, copy]) {
          for (const [ra] of t.entriesInOrder()) {
            expect(t.find(ra)).toBe(t.findHalves(ra >>> 0, Math.floor(ra / 2 ** 32)));
            expect(t.find(ra + 1)).toBe(t.findHalves((ra + 1) >>> 0, Math.floor((ra + 1) / 2 ** 32)));
          }
        }
      }),
      { numRuns: 60 },
    );
  });

  it("clone() is independent of the original", () => {
    const table = new SafepointTable();
    table.insert(0x1000, 0, 0);
    const copy = table.clone(100);
    for (let i = 1; i <= 100; i++) copy.insert(0x1000 + i * 16, 0, i);
    expect(table.size).toBe(1);
    expect(table.find(0x1010)).toBe(-1);
    expect(copy.find(0x1010)).toBeGreaterThanOrEqual(0);
  });
});

describe("SafepointRegistry", () => {
  const moduleOf = (name: string, ras: number[], bias = 0) => ({
    name,
    format: "llvm-v3" as const,
    descriptors: syntheticDescriptors(ras),
    loadBias: bias,
    contentKey: `${name}:${ras.join(",")}`,
  });

  it("unregistering restores exactly the previous contents", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: 1e6 }), { minLength: 2, maxLength: 600 }), fc.integer({ min: 1, max: 5 }), (ras, k) => {
        const groups: number[][] = Array.from({ length: k }, () => []);
        ras.forEach((ra, i) => groups[i % k]!.push(ra * 16));
        const registry = new SafepointRegistry();
        const handles = groups.map((g, i) => registry.register(moduleOf(`m${i}`, g)));
        const full = registry.snapshot();
        const removed = handles.length - 1;
        registry.unregister(handles[removed]!);
        const after = registry.snapshot();
        for (const [i, g] of groups.entries()) {
          for (const ra of g) {
            const hit = after.lookup(ra);
            if (i === removed) expect(hit).toBeUndefined();
            else expect(hit?.module.name).toBe(`m${i}`);
            // The snapshot taken before still answers as it did: a walk in progress is unaffected.
            expect(full.lookup(ra)?.module.name).toBe(`m${i}`);
          }
        }
        registry.register(moduleOf(`m${removed}`, groups[removed]!));
        for (const g of groups) for (const ra of g) expect(registry.snapshot().lookup(ra)).toBeDefined();
        expect(registry.snapshot().safepointCount).toBe(full.safepointCount);
      }),
      { numRuns: 60 },
    );
  });

  it("returns the same handle when the same map is registered twice", () => {
    const registry = new SafepointRegistry();
    const a = registry.register(moduleOf("a", [0x10, 0x20]));
    expect(registry.register(moduleOf("a", [0x10, 0x20]))).toBe(a);
    expect(registry.snapshot().modules.size).toBe(1);
  });

  it("a return address claimed by two modules is an error naming both, and nothing changes", () => {
    const registry = new SafepointRegistry();
    registry.register(moduleOf("first.so", [0x1000, 0x2000]));
    const before = registry.snapshot();
    let error: unknown;
    try {
      registry.register(moduleOf("second.so", [0x3000, 0x2000]));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DuplicateSafepointError);
    expect(String((error as Error).message)).toMatch(/0x2000.*second\.so.*first\.so/);
    expect(registry.snapshot()).toBe(before);
    expect(registry.snapshot().lookup(0x3000)).toBeUndefined();
  });

  it("applies the load bias to every address", () => {
    const registry = new SafepointRegistry();
    registry.register(moduleOf("lib", [0x10, 0x20], 0x7f0000000000));
    expect(registry.snapshot().lookup(0x7f0000000010)?.index).toBe(0);
    expect(registry.snapshot().lookup(0x10)).toBeUndefined();
  });

  it("rejects unknown handles", () => {
    expect(() => new SafepointRegistry().unregister(42)).toThrow(InvalidArgumentError);
  });
});
