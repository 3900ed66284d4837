// A precise collector cannot skip a value it does not understand: roots and slots that are not
// objects of this heap are reported with the address, and the collector stays usable.
import { describe, expect, it } from "vitest";
import { CollectorError } from "../../gc/collector-error.js";
import { BYTES_IN_BLOCK } from "../../gc/heap-constants.js";
import { catchError } from "../support/catch-error.js";
import { makeHeap } from "./support/mock-vm.js";

describe("bad pointers and reentrancy", () => {
  it.each([
    ["outside the heap", (base: number) => base - 64, "an address outside the heap"],
    ["misaligned", (base: number) => base + 12, "a misaligned address"],
    ["in a free block", (base: number) => base + 3 * BYTES_IN_BLOCK + 8, "an address in free block 3"],
    ["between large objects", (base: number) => base + 32 * BYTES_IN_BLOCK - 4096 + 16, "an address that is not a large object"],
  ] as const)("rejects a root %s", (_name, address, found) => {
    const t = makeHeap();
    const ok = t.mutator.alloc(0, 8);
    const big = t.mutator.alloc(0, 10_000); // the last three pages of the heap
    const bad = address(t.collector.space.base);
    t.scanner.roots = [ok, big, bad];
    const error = catchError(() => t.collector.collect());
    expect(error).toBeInstanceOf(CollectorError);
    expect((error as CollectorError).kind).toBe("BAD_POINTER");
    expect((error as CollectorError).message).toBe(
      `pointer traced at 0x${bad.toString(16)}: found ${found}, expected an object in [0x7f1234000000, 0x7f1234100000)`,
    );
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
