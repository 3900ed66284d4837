// Poisoning: after a collection, the old copies of evacuated objects, the freed blocks and
// lines and the freed large pages hold the pattern 0xdeadbeec in every 32-bit half, so a stale
// pointer reads garbage; the tracer and the verifier name pointers into poisoned memory.
import { describe, expect, it } from "vitest";
import { BYTES_IN_BLOCK, BYTES_IN_LINE } from "../../gc/heap-constants.js";
import { POISON_HALF_WORD, POISON_WORD_VALUE } from "../../gc/poison.js";
import { catchError } from "../support/catch-error.js";
import { HEAP_BASE, fillRaw, makeHeap, rawMatches } from "./support/mock-vm.js";

function allPoison(words: Uint32Array, start: number, bytes: number): boolean {
  for (let i = (start - HEAP_BASE) / 4; i < (start - HEAP_BASE + bytes) / 4; i++) if (words[i] !== POISON_HALF_WORD) return false;
  return true;
}

describe("poison", () => {
  it("is on with stress, off otherwise, and can be asked for", () => {
    expect(makeHeap({ stress: true }).collector.poisons).toBe(true);
    expect(makeHeap({}).collector.poisons).toBe(false);
    expect(makeHeap({ poison: true }).collector.poisons).toBe(true);
    expect(makeHeap({ stress: true, poison: false }).collector.poisons).toBe(false);
  });

  it("overwrites every evacuated old copy and freed block; survivors and new objects are intact", () => {
    const t = makeHeap({ stress: true, verify: true, sizeBytes: 16 * BYTES_IN_BLOCK });
    const { collector: c, mutator: m, scanner } = t;
    const kept: number[] = [];
    for (let i = 0; i < 200; i++) {
      const o = m.alloc(1, 24 + (i % 5) * 8);
      fillRaw(c, o, i);
      if (kept.length > 0) c.writePointer(o, 0, kept[kept.length - 1]!);
      kept.push(o);
      m.alloc(0, 40); // garbage between them
    }
    const stale = kept.slice();
    scanner.roots = [kept[kept.length - 1]!];
    const words = c.space.words;
    const sizes = stale.map((o) => c.space.readWord(o - 8));
    const cycle = c.collect();
    expect(cycle.verifyFailures).toBe(0);
    expect(cycle.evacuatedObjects).toBe(200);
    expect(cycle.poisonedBytes).toBeGreaterThanOrEqual(BYTES_IN_BLOCK);
    // Every old copy (header + body) is poison; the block they were in was freed and poisoned whole.
    stale.forEach((o, i) => expect(allPoison(words, o - 8, 8 + 8 + 24 + (i % 5) * 8), `old copy ${i}`).toBe(true));
    expect(allPoison(words, HEAP_BASE, BYTES_IN_BLOCK)).toBe(true);
    expect(sizes.every((h) => h !== POISON_WORD_VALUE)).toBe(true);
    // The live graph moved and is intact.
    let o = scanner.roots[0]!;
    for (let i = 199; i >= 0; i--) {
      expect(o).not.toBe(stale[i]);
      expect(rawMatches(c, o, i)).toBe(true);
      o = c.readPointer(o, 0);
    }
    expect(o).toBe(0);
    // New objects come zeroed out of poisoned memory.
    const fresh = m.alloc(2, 16);
    expect(c.readPointer(fresh, 0)).toBe(0);
    expect(c.readPointer(fresh, 1)).toBe(0);
    expect([...c.rawBytes(fresh)].every((b) => b === 0)).toBe(true);
  });

  it("poisons the free lines of a block it keeps, not the lines a small object may spill into", () => {
    const t = makeHeap({ poison: true, defrag: "never" });
    const { collector: c, mutator: m, scanner } = t;
    const objects: number[] = [];
    for (let i = 0; i < 64; i++) objects.push(m.alloc(0, 56)); // 64-byte objects, 2 per line
    const keep = objects[21]!; // second object of line 10
    fillRaw(c, keep, 5);
    scanner.roots = [keep];
    const cycle = c.collect();
    expect(cycle.evacuatedObjects).toBe(0);
    const line = Math.floor((keep - 8 - HEAP_BASE) / BYTES_IN_LINE);
    expect(line).toBe(10);
    const lineStart = (l: number): number => HEAP_BASE + l * BYTES_IN_LINE;
    expect(allPoison(c.space.words, lineStart(0), 10 * BYTES_IN_LINE)).toBe(true);
    expect(allPoison(c.space.words, lineStart(12), 20 * BYTES_IN_LINE)).toBe(true);
    expect(rawMatches(c, keep, 5)).toBe(true); // its line stays
    expect(c.space.readWord(lineStart(11))).not.toBe(POISON_WORD_VALUE); // the spill line is unavailable: untouched
    expect(cycle.poisonedBytes).toBe((BYTES_IN_BLOCK / BYTES_IN_LINE - 2) * BYTES_IN_LINE);
  });

  it("poisons freed large objects", () => {
    const t = makeHeap({ poison: true });
    const { collector: c, mutator: m, scanner } = t;
    const large = m.alloc(0, 20_000);
    scanner.roots = [];
    const cycle = c.collect();
    expect(cycle.largeFreedBytes).toBeGreaterThan(0);
    expect(allPoison(c.space.words, large - 8, 20_008)).toBe(true);
  });

  it("the verifier names a root left pointing at a poisoned old copy; the next collection is refused", () => {
    const t = makeHeap({ stress: true, verify: true });
    const { collector: c, mutator: m, scanner } = t;
    const a = m.alloc(1, 16);
    const pinned = m.alloc(0, 16); // keeps block 0 in use: a's old copy is poisoned, not freed
    c.pin(pinned);
    scanner.roots = [a, pinned];
    scanner.skipUpdates = true;
    const cycle = c.collect();
    expect(cycle.verifyFailures).toBeGreaterThan(0);
    expect(c.verifyMessages.join("\n")).toMatch(
      /root #0: found 0x[0-9a-f]+ in poisoned memory \(an object an earlier collection evacuated or freed: a stale pointer\), expected a live object/,
    );
    scanner.skipUpdates = false;
    // The root is no object start by the allocation bitmap: refused before anything moves (verify: a failure).
    const refused = c.collect();
    expect(refused.reason).toMatch(/refused: 1 root no object's address$/);
    expect(refused.evacuatedObjects).toBe(0);
    expect(c.verifyMessages.join("\n")).toMatch(/^before: root #0: found 0x[0-9a-f]+ in poisoned memory/);
  });

  it("the verifier names the pattern itself stored into a live object", () => {
    const t = makeHeap({ poison: true, verify: true });
    const { collector: c, mutator: m, scanner } = t;
    const holder = m.alloc(1, 8);
    scanner.roots = [holder];
    c.collect();
    c.space.writeWord(holder, POISON_WORD_VALUE); // what a read through a stale pointer yields
    expect(c.verifyHeap().messages[0]).toMatch(/field \+0x0 of object 0x[0-9a-f]+: found .* the poison pattern 0xdeadbeecdeadbeec/);
    expect(String(catchError(() => c.collect()))).toMatch(/the poison pattern/);
  });
});
