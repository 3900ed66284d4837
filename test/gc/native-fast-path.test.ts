// The native fast path: compiled code bump-allocates inside the mutator's hole by itself
// (writing default-layout headers into zeroed memory) and calls back only when it runs out.
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import { catchError } from "../support/catch-error.js";
import { makeHeap } from "./support/mock-vm.js";

describe("native fast-path allocation in the exposed hole", () => {
  it("accepts objects bumped into [cursor, limit) by the caller and continues after them", () => {
    const t = makeHeap({ verify: true, stress: true });
    const { collector: c, mutator: m, scanner } = t;
    const first = m.alloc(1, 0); // opens a hole
    let { cursor, limit } = m.hole();
    // "Native" allocation: 16-byte objects with one pointer slot, header = 1 slot, 0 raw bytes.
    const natives: number[] = [];
    for (let i = 0; i < 10; i++) {
      expect(cursor + 16).toBeLessThanOrEqual(limit);
      c.space.writeWord(cursor, 1 * 2 ** 32 + 0); // header: slots in the high half
      c.space.allocationBits.set(cursor + 8 - c.space.base); // what runtime.c's fast path sets too
      natives.push(cursor + 8);
      cursor += 16;
    }
    natives.forEach((o, i) => c.writePointer(o, 0, natives[i + 1] ?? first));
    m.setCursor(cursor); // hand the rest of the hole back before calling into the runtime
    const after = m.alloc(0, 8);
    expect(after).toBe(cursor + 8);

    scanner.roots = [natives[0]!];
    const cycle = c.collect();
    expect(cycle.verifyFailures).toBe(0);
    expect(cycle.markedObjects).toBe(11);
    let o = scanner.roots[0]!;
    for (let i = 0; i < 10; i++) o = c.readPointer(o, 0);
    expect(c.pointerSlotCount(o)).toBe(1); // `first`, wherever it moved
    ({ cursor, limit } = m.hole());
    expect([cursor, limit]).toEqual([0, 0]); // holes are stale after a collection: ask again after alloc
  });

  it("rejects a cursor outside the current hole", () => {
    const { mutator: m } = makeHeap();
    m.alloc(0, 8);
    const { cursor, limit } = m.hole();
    expect(catchError(() => m.setCursor(cursor - 8))).toBeInstanceOf(InvalidArgumentError);
    expect(catchError(() => m.setCursor(limit + 8))).toBeInstanceOf(InvalidArgumentError);
    expect(catchError(() => m.setCursor(cursor + 4))).toBeInstanceOf(InvalidArgumentError);
    m.setCursor(limit);
    expect(m.hole().cursor).toBe(limit);
  });
});
