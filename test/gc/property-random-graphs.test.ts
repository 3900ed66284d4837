// Property: random object graphs, random root sets, random mutations, pins and collections
// (explicit, on allocation failure and every few KiB), in every collector mode, with verify on:
// no verification failure ever, and what is reachable from the roots is exactly the model's
// graph, with every object's shape and raw bytes intact and pinned objects never moved.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BYTES_IN_BLOCK } from "../../gc/heap-constants.js";
import type { ImmixCollector } from "../../gc/immix-collector.js";
import { makeHeap } from "./support/mock-vm.js";

type Op =
  | { k: "alloc"; slots: number; raw: number; attach: "root" | "link" | "drop"; pick: number; slot: number }
  | { k: "link"; from: number; slot: number; to: number }
  | { k: "unroot"; pick: number }
  | { k: "pin"; pick: number }
  | { k: "unpin"; pick: number }
  | { k: "collect" };

const rawSize = fc.oneof(
  { weight: 12, arbitrary: fc.integer({ min: 4, max: 120 }) }, // small
  { weight: 4, arbitrary: fc.integer({ min: 121, max: 3000 }) }, // medium
  { weight: 1, arbitrary: fc.integer({ min: 8200, max: 12_000 }) }, // large
);
const pick = fc.nat({ max: 1_000_000 });
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record({
      k: fc.constant("alloc" as const),
      slots: fc.integer({ min: 0, max: 4 }),
      raw: rawSize,
      attach: fc.constantFrom("root" as const, "link" as const, "link" as const, "drop" as const),
      pick,
      slot: fc.nat(3),
    }),
  },
  { weight: 6, arbitrary: fc.record({ k: fc.constant("link" as const), from: pick, slot: fc.nat(3), to: fc.integer({ min: -1, max: 1_000_000 }) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant("unroot" as const), pick }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("pin" as const), pick }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("unpin" as const), pick }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("collect" as const) }) },
);
const config = fc.record({
  stress: fc.boolean(),
  defrag: fc.constantFrom("auto" as const, "always" as const),
  collectEveryBytes: fc.constantFrom(Infinity, 4096, 20_000),
  initialBlocks: fc.constantFrom(4, 16, 64),
});

/** The model: per object id its shape and the ids its slots point to (-1 = null). */
interface Model {
  slots: number[];
  raw: number[];
  edges: number[][];
}

function readId(c: ImmixCollector, address: number): number {
  const raw = c.rawBytes(address);
  return raw[0]! | (raw[1]! << 8) | (raw[2]! << 16) | (raw[3]! << 24);
}

function fillObject(c: ImmixCollector, address: number, id: number): void {
  const raw = c.rawBytes(address);
  raw[0] = id & 0xff;
  raw[1] = (id >>> 8) & 0xff;
  raw[2] = (id >>> 16) & 0xff;
  raw[3] = (id >>> 24) & 0xff;
  for (let i = 4; i < raw.length; i++) raw[i] = (id * 31 + i * 7) & 0xff;
}

function rawIntact(c: ImmixCollector, address: number, id: number): boolean {
  const raw = c.rawBytes(address);
  for (let i = 4; i < raw.length; i++) if (raw[i] !== ((id * 31 + i * 7) & 0xff)) return false;
  return true;
}

describe("random graphs under random collections", () => {
  it("never fails verification and preserves everything reachable", () => {
    const totals = { collections: 0, evacuated: 0, objects: 0, grew: 0, exhausted: 0, large: 0 };
    fc.assert(
      fc.property(config, fc.array(op, { minLength: 100, maxLength: 600, size: "max" }), (cfg, ops) => {
        const t = makeHeap({
          sizeBytes: 64 * BYTES_IN_BLOCK,
          initialSizeBytes: cfg.initialBlocks * BYTES_IN_BLOCK,
          verify: true,
          stress: cfg.stress,
          defrag: cfg.defrag,
          collectEveryBytes: cfg.collectEveryBytes,
        });
        const { collector: c, mutator: m, scanner } = t;
        const model: Model = { slots: [], raw: [], edges: [] };
        const rootIds: number[] = [];
        /** Reachable object ids and their current addresses (rebuilt after each collection). */
        let where = new Map<number, number>();
        const pinnedAt = new Map<number, number>();
        let seenCollections = 0;

        const checkHeap = (): void => {
          const last = c.stats.last!;
          expect(last.verifyFailures, c.verifyMessages.join("\n")).toBe(0);
          const found = new Map<number, number>();
          const visit = (address: number, expectedId: number): void => {
            const id = readId(c, address);
            expect(id).toBe(expectedId);
            const known = found.get(id);
            if (known !== undefined) {
              expect(known).toBe(address); // one object, one address
              return;
            }
            found.set(id, address);
            expect(c.pointerSlotCount(address)).toBe(model.slots[id]);
            expect(c.rawBytes(address).length).toBe(model.raw[id]);
            expect(rawIntact(c, address, id)).toBe(true);
            model.edges[id]!.forEach((target, j) => {
              const v = c.readPointer(address, j);
              if (target < 0) expect(v).toBe(0);
              else visit(v, target);
            });
          };
          scanner.roots.forEach((address, i) => visit(address, rootIds[i]!));
          // Exactly the model's reachable set.
          const reachable = new Set<number>();
          const stack = [...rootIds];
          while (stack.length > 0) {
            const id = stack.pop()!;
            if (reachable.has(id)) continue;
            reachable.add(id);
            for (const e of model.edges[id]!) if (e >= 0) stack.push(e);
          }
          expect(found.size).toBe(reachable.size);
          for (const [id, address] of pinnedAt) {
            if (found.has(id)) expect(found.get(id)).toBe(address);
            else pinnedAt.delete(id);
          }
          where = found;
        };
        const afterPossibleCollection = (): void => {
          if (c.stats.collections !== seenCollections) {
            seenCollections = c.stats.collections;
            checkHeap();
          }
        };
        const live = (): number[] => [...where.keys()];

        for (const o of ops) {
          switch (o.k) {
            case "alloc": {
              const id = model.slots.length;
              const address = m.alloc(o.slots, o.raw);
              afterPossibleCollection(); // the allocation may have collected: addresses changed
              model.slots.push(o.slots);
              model.raw.push(o.raw);
              model.edges.push(new Array<number>(o.slots).fill(-1));
              fillObject(c, address, id);
              const holders = live().filter((h) => model.slots[h]! > 0);
              if (o.attach === "root" || (o.attach === "link" && holders.length === 0)) {
                scanner.roots.push(address);
                rootIds.push(id);
                where.set(id, address);
              } else if (o.attach === "link") {
                const holder = holders[o.pick % holders.length]!;
                const slot = o.slot % model.slots[holder]!;
                c.writePointer(where.get(holder)!, slot, address);
                model.edges[holder]![slot] = id;
                where.set(id, address);
              }
              break;
            }
            case "link": {
              const ids = live();
              const holders = ids.filter((h) => model.slots[h]! > 0);
              if (holders.length === 0) break;
              const from = holders[o.from % holders.length]!;
              const slot = o.slot % model.slots[from]!;
              const to = o.to < 0 ? -1 : ids[o.to % ids.length]!;
              c.writePointer(where.get(from)!, slot, to < 0 ? 0 : where.get(to)!);
              model.edges[from]![slot] = to;
              break;
            }
            case "unroot": {
              if (rootIds.length === 0) break;
              const i = o.pick % rootIds.length;
              rootIds.splice(i, 1);
              scanner.roots.splice(i, 1);
              break;
            }
            case "pin":
            case "unpin": {
              const ids = live();
              if (ids.length === 0) break;
              const id = ids[o.pick % ids.length]!;
              const address = where.get(id)!;
              if (o.k === "pin") {
                c.pin(address);
                pinnedAt.set(id, address);
              } else {
                c.unpin(address);
                pinnedAt.delete(id);
              }
              break;
            }
            case "collect":
              c.collect();
              afterPossibleCollection();
              break;
          }
        }
        c.collect();
        afterPossibleCollection();
        expect(c.stats.totalVerifyFailures).toBe(0);
        totals.collections += c.stats.collections;
        totals.evacuated += c.stats.totalEvacuatedObjects;
        totals.objects += model.slots.length;
        totals.grew += c.stats.cycles.filter((cy) => cy.grewToBytes > 0).length;
        totals.exhausted += c.stats.cycles.filter((cy) => cy.headroomExhausted).length;
        totals.large += c.stats.cycles.reduce((n, cy) => n + cy.largeObjects, 0);
      }),
      { numRuns: 120 },
    );
    // The runs did exercise the collector: many collections, many objects moved.
    expect(totals.collections).toBeGreaterThan(500);
    expect(totals.evacuated).toBeGreaterThan(5000);
    expect(totals.grew).toBeGreaterThan(0);
  });
});
