// The growth policy: the reservation is the maximum; the usable limit starts at initialSizeBytes
// and doubles whenever a collection leaves it more than 70 % full; an allocation that does not
// fit after a collection grows the heap to fit, up to the reservation, then fails.
import { describe, expect, it } from "vitest";
import { CollectorError } from "../../gc/collector-error.js";
import { BYTES_IN_BLOCK } from "../../gc/heap-constants.js";
import { ImmixCollector, type ImmixCollectorConfig } from "../../gc/immix-collector.js";
import { InvalidArgumentError } from "../../src/errors.js";
import { catchError } from "../support/catch-error.js";
import { makeHeap } from "./support/mock-vm.js";

const BLOCK = BYTES_IN_BLOCK;

describe("heap growth", () => {
  it("grows when live data fills the heap, and not for garbage", () => {
    const t = makeHeap({ sizeBytes: 64 * BLOCK, initialSizeBytes: 4 * BLOCK, verify: true });
    const { collector: c, mutator: m, scanner } = t;
    expect(c.heapLimitBytes).toBe(4 * BLOCK);
    expect(c.space.headroomBytes).toBe(BLOCK); // 2.5 % of 4 blocks, rounded up to a block

    // Garbage only: collections, no growth.
    for (let i = 0; i < 20 * 256; i++) m.alloc(0, 120);
    expect(c.stats.collections).toBeGreaterThan(4);
    expect(c.heapLimitBytes).toBe(4 * BLOCK);
    expect(c.stats.cycles.every((cy) => cy.grewToBytes === 0)).toBe(true);

    // Live data: each collection that leaves > 70 % used doubles the limit.
    const limits = new Set<number>();
    for (let i = 0; i < 40 * 256; i++) {
      scanner.roots.push(m.alloc(0, 120));
      limits.add(c.heapLimitBytes);
    }
    const grown = c.stats.cycles.filter((cy) => cy.grewToBytes > 0).map((cy) => cy.grewToBytes / BLOCK);
    expect(grown).toEqual([8, 16, 32, 64]);
    expect([...limits].map((l) => l / BLOCK)).toEqual([4, 8, 16, 32, 64]);
    expect(c.stats.totalVerifyFailures).toBe(0);

    // At the reservation: the next allocations that cannot fit fail with OUT_OF_MEMORY.
    const error = catchError(() => {
      for (;;) scanner.roots.push(m.alloc(0, 120));
    });
    expect(error).toBeInstanceOf(CollectorError);
    expect((error as CollectorError).kind).toBe("OUT_OF_MEMORY");
    expect((error as CollectorError).message).toMatch(
      /^heap exhausted: \d+ live bytes of 2097152 \(an allocation of 128 bytes did not fit after a full collection\)$/,
    );
    // The collector is still usable: drop the roots and allocate again.
    scanner.roots = [];
    expect(() => m.alloc(0, 120)).not.toThrow();
  });

  it("grows at once to fit an allocation bigger than the free space", () => {
    const t = makeHeap({ sizeBytes: 64 * BLOCK, initialSizeBytes: 2 * BLOCK });
    const big = t.mutator.alloc(0, 10 * BLOCK);
    t.scanner.roots = [big];
    expect(t.collector.heapLimitBytes).toBeGreaterThanOrEqual(11 * BLOCK);
    expect(t.collector.stats.collections).toBe(1);
  });
});

describe("a heap size to start with that is no size", () => {
  // It was clamped to one block without a word (0, -1, a fraction, NaN); a size above the
  // reservation is still capped at it, as growth is.
  it.each([0, -4096, BLOCK + 0.5, Number.NaN])("initialSizeBytes %s is an InvalidArgumentError naming it", (initialSizeBytes) => {
    const error = catchError(() => makeHeap({ sizeBytes: 8 * BLOCK, initialSizeBytes }));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toBe(
      `options.initialSizeBytes: found ${initialSizeBytes}, expected a whole number of bytes above 0 (rounded up to whole blocks, at most heap.sizeBytes)`,
    );
  });

  it("no heap region at all is one too, not a TypeError", () => {
    const error = catchError(() => new ImmixCollector({} as ImmixCollectorConfig));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toBe("heap: found undefined, expected a HeapRegion { base, buffer, sizeBytes }");
  });

  it("a size above the reservation starts at the reservation", () => {
    expect(makeHeap({ sizeBytes: 8 * BLOCK, initialSizeBytes: 100 * BLOCK }).collector.heapLimitBytes).toBe(8 * BLOCK);
  });
});
