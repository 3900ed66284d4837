// A precise collector cannot skip a value it does not understand: roots and slots that are not
// objects of this heap are reported with the address, and the collector stays usable.
import { describe, expect, it } from "vitest";
import { CollectorError, RootNotObjectError } from "../../gc/collector-error.js";
import { BYTES_IN_BLOCK } from "../../gc/heap-constants.js";
import { catchError } from "../support/catch-error.js";
import { makeHeap } from "./support/mock-vm.js";

describe("bad pointers and reentrancy", () => {
  it("rejects a root outside the heap", () => {
    const t = makeHeap();
    const ok = t.mutator.alloc(0, 8);
    t.scanner.roots = [ok, t.collector.space.base - 64];
    const error = catchError(() => t.collector.collect());
    expect(error).toBeInstanceOf(CollectorError);
    expect((error as CollectorError).kind).toBe("BAD_POINTER");
    expect((error as CollectorError).message).toBe(
      "pointer traced at 0x7f1233ffffc0: found an address outside the heap, expected an object in [0x7f1234000000, 0x7f1234100000)",
    );
    t.scanner.roots = [ok];
    expect(t.collector.collect().markedObjects).toBe(1);
  });

  // Roots inside the heap are tested against the allocation bitmap before anything is traced:
  // the collection is refused, naming the object such a root points into (issue 29, item 1).
  it.each([
    ["misaligned", (base: number) => base + 12, "inside object 0x7f1234000008 (+0x4, which ends at 0x7f1234000010)"],
    ["in a free block", (base: number) => base + 3 * BYTES_IN_BLOCK + 8, "in free block 3"],
    ["between large objects", (base: number) => base + 32 * BYTES_IN_BLOCK - 4096 + 16, "inside object 0x7f12340fd008 (+0x2008, which ends at 0x7f12340ff718)"],
  ] as const)("refuses to collect with a root %s, nothing moved", (_name, address, found) => {
    const t = makeHeap({ stress: true });
    const ok = t.mutator.alloc(0, 8);
    const big = t.mutator.alloc(0, 10_000); // the last three pages of the heap
    const bad = address(t.collector.space.base);
    t.scanner.roots = [ok, big, bad];
    const error = catchError(() => t.collector.collect());
    expect(error).toBeInstanceOf(RootNotObjectError);
    expect((error as CollectorError).kind).toBe("BAD_POINTER");
    expect((error as CollectorError).message).toMatch(
      new RegExp(
        `^collection refused, nothing moved: root #2: found 0x${bad.toString(16)} not an object start: ${found.replace(/[()+]/g, "\\$&")}, expected an object's address`,
      ),
    );
    expect(t.scanner.roots).toEqual([ok, big, bad]); // stress would have moved `ok`: nothing moved
    expect(t.collector.stats.collections).toBe(0);
    // Still usable once the bad root is gone.
    t.scanner.roots = [ok, big];
    expect(t.collector.collect().markedObjects).toBe(2);
  });

  it("leaves foreign pointers alone when allowed", () => {
    const t = makeHeap({ allowForeignPointers: true });
    const a = t.mutator.alloc(1, 0);
    t.collector.writePointer(a, 0, 0x1000); // a static object outside the heap
    t.scanner.roots = [a, 0x2000];
    expect(t.collector.collect().markedObjects).toBe(1);
    expect(t.scanner.roots[1]).toBe(0x2000);
    expect(t.collector.readPointer(t.scanner.roots[0]!, 0)).toBe(0x1000);
  });

  it("refuses a collection from inside a collection", () => {
    const t = makeHeap();
    t.collector.addRootScanner({
      scanRoots: () => {
        t.collector.collect();
      },
      updateRoots: () => {},
    });
    const error = catchError(() => t.collector.collect());
    expect((error as CollectorError).kind).toBe("REENTRANT");
  });

  it("refuses an allocation from inside a collection", () => {
    const t = makeHeap();
    t.collector.addRootScanner({
      scanRoots: () => {
        t.mutator.alloc(0, 8);
      },
      updateRoots: () => {},
    });
    const error = catchError(() => t.collector.collect());
    expect((error as CollectorError).kind).toBe("REENTRANT");
    expect((error as CollectorError).message).toMatch(/^allocation of 16 bytes at 0x7f1234000000: found a collection in progress/);
  });
});
