import { describe, expect, it } from "vitest";
import { RootNotObjectError } from "../../gc/collector-error.js";
import { BYTES_IN_BLOCK } from "../../gc/heap-constants.js";
import { catchError } from "../support/catch-error.js";
import { makeHeap } from "./support/mock-vm.js";

/*
 * The allocation bitmap (gc/allocation-bits.ts): an object's address has its bit from allocation
 * until a sweep frees it; an evacuated object's old address loses it and its new one has it. The
 * verifier tests every pointer field against it (issue 29, item 1): a field pointing into the
 * middle of an object is named with that object even when nothing else reaches it.
 */

describe("the allocation bitmap", () => {
  it("is set by every allocation (small, medium, large) and kept only for what a collection kept", () => {
    const t = makeHeap({ stress: true });
    const { collector: c, mutator: m, scanner } = t;
    const bits = c.space.allocationBits;
    const at = (address: number): boolean => bits.isSet(address - c.space.base);
    const small = m.alloc(1, 8);
    const medium = m.alloc(0, 1000);
    const large = m.alloc(0, 10_000);
    const dead = m.alloc(0, 8);
    for (const o of [small, medium, large, dead]) expect(at(o)).toBe(true);
    expect(at(small + 8)).toBe(false);
    scanner.roots = [small, medium, large];
    c.collect();
    const [small2, medium2, large2] = scanner.roots as [number, number, number];
    expect(small2).not.toBe(small); // stress moved them
    expect(medium2).not.toBe(medium);
    expect(large2).toBe(large); // large objects never move
    for (const o of [small2, medium2, large2]) expect(at(o)).toBe(true);
    for (const o of [small, medium, dead]) expect(at(o)).toBe(false);
    scanner.roots = [small2];
    c.collect();
    expect(at(large)).toBe(false); // its pages freed
  });

  it("the verifier names a field pointing into an object nothing else reaches", () => {
    const t = makeHeap({ verify: true, poison: false });
    const { collector: c, mutator: m, scanner } = t;
    scanner.roots = [m.alloc(1, 0), m.alloc(0, 24)];
    c.collect(); // both kept (no stress: not moved)
    const [holder, hidden] = scanner.roots as [number, number];
    c.writePointer(holder, 0, hidden + 16);
    scanner.roots = [holder];
    expect(c.verifyHeap().messages).toEqual([
      `field +0x0 of object 0x${holder.toString(16)}: found 0x${(hidden + 16).toString(16)} not an object start: inside object 0x${hidden.toString(16)} (+0x10, which ends at 0x${(hidden + 24).toString(16)}), expected an object's address`,
    ]);
  });

  it("with verify, a heap filled while every collection is refused names the root, not a heap exhausted", () => {
    const t = makeHeap({ verify: true, sizeBytes: 4 * BYTES_IN_BLOCK });
    const { collector: c, mutator: m, scanner } = t;
    const object = m.alloc(0, 32);
    scanner.roots = [object + 16];
    const error = catchError(() => {
      for (let i = 0; i < 100_000; i++) m.alloc(0, 64);
    });
    expect(error).toBeInstanceOf(RootNotObjectError);
    expect((error as Error).message).toMatch(/^collection refused, nothing moved: root #0: found 0x[0-9a-f]+ not an object start: inside object /);
    expect(c.stats.totalVerifyFailures).toBeGreaterThan(0);
  });
});
