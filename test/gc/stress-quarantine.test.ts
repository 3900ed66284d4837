// The stress quarantine (gc/quarantine.ts; issue 17, item 3): under stress every collection
// evacuates every movable object, the blocks it frees are poisoned and held out of use for
// `quarantineCollections` collections (protected when the memory can be), and the poison is
// checked at the next collection, so a pointer kept across a collection without a root finds
// poison, never a new object, and a write through it is reported with what lived there.
import { describe, expect, it } from "vitest";
import { BYTES_IN_BLOCK } from "../../gc/heap-constants.js";
import { DEFAULT_QUARANTINE_COLLECTIONS, ImmixCollector } from "../../gc/immix-collector.js";
import { POISON_HALF_WORD, POISON_WORD_VALUE } from "../../gc/poison.js";
import type { MemoryProtection } from "../../gc/quarantine.js";
import { HEAP_BASE, MockRootScanner, makeHeap } from "./support/mock-vm.js";

const blockOf = (address: number): number => Math.floor((address - HEAP_BASE) / BYTES_IN_BLOCK);

describe("stress quarantine", () => {
  it("the poison word is not a canonical x86-64 address (bits 63..47 neither all 0 nor all 1): following it faults", () => {
    const word = (BigInt(POISON_HALF_WORD) << 32n) | BigInt(POISON_HALF_WORD);
    expect(word).toBe(0xdeadbeecdeadbeecn);
    const top17 = word >> 47n;
    expect(top17 !== 0n && top17 !== 0x1ffffn).toBe(true);
    const top8 = word >> 56n; // and with 5-level paging (57-bit addresses)
    expect(top8 !== 0n && top8 !== 0xffn).toBe(true);
  });

  it("holds a freed block for quarantineCollections collections: new objects never land where a stale pointer points", () => {
    const t = makeHeap({ stress: true, sizeBytes: 64 * BYTES_IN_BLOCK });
    const { collector: c, mutator: m, scanner } = t;
    const a = m.alloc(0, 16);
    c.space.writeWord(a + 8, 42);
    scanner.roots = [a];
    const stale = a; // kept without a root
    c.collect();
    expect(scanner.roots[0]).not.toBe(stale); // moved: every movable object is evacuated
    expect(c.space.readWord(stale + 8)).toBe(POISON_WORD_VALUE);
    expect(c.space.quarantine!.holds(blockOf(stale))).toBe(true);
    for (let k = 1; k < DEFAULT_QUARANTINE_COLLECTIONS; k++) {
      for (let i = 0; i < 2000; i++) expect(blockOf(m.alloc(0, 16))).not.toBe(blockOf(stale));
      const cycle = c.collect();
      expect(cycle.poisonWrites).toBe(0);
      expect(cycle.quarantinedBytes).toBeGreaterThan(0);
      expect(c.space.readWord(stale + 8)).toBe(POISON_WORD_VALUE);
    }
    expect(c.space.quarantine!.holds(blockOf(stale))).toBe(true);
    c.collect(); // collection 1 + hold: released (it may be copied into or allocated from again)
    expect(c.space.quarantine!.holds(blockOf(stale))).toBe(false);
  });

  it.each([false, true])(
    "reports a write through a stale pointer at the next collection: address, the object that lived there, the collection that freed it (verify %s)",
    (verify) => {
      const t = makeHeap({ stress: true, verify });
      const { collector: c, mutator: m, scanner } = t;
      const a = m.alloc(1, 24); // 8 header + 8 slot + 24 raw = 40 bytes
      scanner.roots = [a];
      const stale = a;
      const first = c.collect();
      expect(first.cycle).toBe(1);
      const moved = scanner.roots[0]!;
      c.space.writeWord(stale + 16, 7); // raw word 1 of the old copy
      const second = c.collect();
      expect(second.poisonWrites).toBe(1);
      expect(second.verifyFailures).toBe(1); // a verification failure, with or without verify
      expect(c.verifyFailures).toEqual([
        {
          location: { kind: "poisoned-memory", address: stale + 16 },
          value: 7,
          reason:
            `written into poisoned memory since collection #1 freed it (checked at collection #2): object 0x${stale.toString(16)} (40 bytes, header included) ` +
            `lived there (+0x10) until collection #1 moved it to 0x${moved.toString(16)}; a write through a stale pointer`,
          expected: "the poison pattern 0xdeadbeecdeadbeec",
        },
      ]);
      expect(c.stats.firstVerifyFailures[0]!.cycle).toBe(2);
      expect(c.collect().poisonWrites).toBe(1); // still there: reported at every collection while held
    },
  );

  it("checks the free lines of a block kept for a pinned object (not handed out while quarantining)", () => {
    const t = makeHeap({ stress: true });
    const { collector: c, mutator: m, scanner } = t;
    const pinned = m.alloc(0, 8);
    c.pin(pinned);
    for (let i = 0; i < 30; i++) m.alloc(0, 8); // lines 0-3: a's line is not the one a small object may spill into
    const a = m.alloc(0, 8);
    for (let i = 0; i < 100; i++) m.alloc(0, 8);
    scanner.roots = [pinned, a];
    c.collect();
    expect(blockOf(scanner.roots[0]!)).toBe(blockOf(a)); // the pinned object keeps a's block in use
    for (let i = 0; i < 3000; i++) expect(blockOf(m.alloc(0, 8))).not.toBe(blockOf(a));
    c.space.writeWord(a, 99);
    const cycle = c.collect();
    expect(cycle.poisonWrites).toBe(1);
    expect(c.verifyMessages[0]).toMatch(new RegExp(`^heap word 0x${a.toString(16)}: found 0x63 written into poisoned memory since collection #1 freed it`));
  });

  it("the tracer and the verifier name a stale root into quarantined memory without reading it", () => {
    const t = makeHeap({ stress: true, verify: true });
    const { collector: c, mutator: m, scanner } = t;
    const a = m.alloc(0, 8);
    scanner.roots = [a];
    c.collect();
    const moved = scanner.roots[0]!;
    scanner.roots = [moved, a]; // a stale copy of the old address comes back as a root
    const held = `in block 0, quarantined since collection #1 freed it: object 0x${a.toString(16)} \\(16 bytes, header included\\) lived there \\(\\+0x0\\) until collection #1 moved it to 0x${moved.toString(16)} \\(a stale pointer\\)`;
    // No object starts there (the allocation bitmap): the collection is refused, with verify a failure naming it.
    expect(c.collect().verifyFailures).toBe(1);
    expect(c.verifyMessages[0]).toMatch(new RegExp(`^before: root #1: found 0x${a.toString(16)} ${held}`));
    // Without verify, the same words in the refusal.
    const plain = makeHeap({ stress: true });
    const b = plain.mutator.alloc(0, 8);
    plain.scanner.roots = [b];
    plain.collector.collect();
    plain.scanner.roots = [plain.scanner.roots[0]!, b];
    expect(() => plain.collector.collect()).toThrow(
      /^collection refused, nothing moved: root #1: found 0x[0-9a-f]+ in block 0, quarantined since collection #1 freed it/,
    );
  });

  it("protects the blocks each collection frees (a run at once) and unprotects each when it is released", () => {
    const calls: string[] = [];
    const protection: MemoryProtection = {
      protect: (address, bytes) => calls.push(`protect ${(address - HEAP_BASE) / BYTES_IN_BLOCK}+${bytes / BYTES_IN_BLOCK}`),
      unprotect: (address, bytes) => calls.push(`unprotect ${(address - HEAP_BASE) / BYTES_IN_BLOCK}+${bytes / BYTES_IN_BLOCK}`),
    };
    const sizeBytes = 32 * BYTES_IN_BLOCK;
    const c = new ImmixCollector({
      heap: { base: HEAP_BASE, buffer: new ArrayBuffer(sizeBytes), sizeBytes, protection },
      options: { stress: true, quarantineCollections: 2 },
    });
    const scanner = new MockRootScanner();
    c.addRootScanner(scanner);
    const m = c.newMutator();
    const list: number[] = [];
    for (let i = 0; i < 3000; i++) list.push(m.alloc(0, 16)); // 24 B each: blocks 0..2
    scanner.roots = list;
    c.collect(); // copies into blocks 3..5, frees 0..2
    expect(calls).toEqual(["protect 0+3"]);
    c.collect(); // 0..2 are held: copies into 6..8, frees 3..5
    expect(calls).toEqual(["protect 0+3", "protect 3+3"]);
    c.collect(); // collection 3 releases what collection 1 freed (held for 2), then copies into it
    expect(calls.slice(2, 5)).toEqual(["unprotect 0+1", "unprotect 1+1", "unprotect 2+1"]);
    expect(calls.slice(5)).toEqual(["protect 6+3"]);
    // Nothing held is ever read by the collector: a poison check only reads unprotected memory.
    expect(c.stats.last!.poisonWrites).toBe(0);
  });

  it("releases held blocks early rather than run out of memory", () => {
    const t = makeHeap({ stress: true, sizeBytes: 8 * BYTES_IN_BLOCK, growthThreshold: 1 });
    const { collector: c, mutator: m, scanner } = t;
    const live: number[] = [];
    for (let i = 0; i < 1500; i++) live.push(m.alloc(0, 16)); // about 1.1 blocks live
    scanner.roots = live;
    for (let k = 0; k < 12; k++) {
      const cycle = c.collect();
      expect(cycle.evacuatedObjects).toBe(1500);
      expect(cycle.headroomExhausted).toBe(false);
    }
    expect(c.quarantine!.releasedEarly).toBeGreaterThan(0);
  });
});
