import { describe, expect, it } from "vitest";
import { SimulatedMemory } from "../../src/memory/memory.js";
import { scanMemory } from "../../src/memory/scan-memory.js";
import { PRESIZED_PAIRS_BUDGET } from "../../walker/frame-roots.js";
import { StackRootScanner, type ThreadStack } from "../../walker/stack-root-scanner.js";
import { syntheticRegistry } from "./support/synthetic-stack.js";

/*
 * Room for a pair per slot of a live stack takes 4 bytes of columns per byte of stack (8 with the
 * doubling), 8 MiB per thread at MAX_PRESIZED_PAIRS. A native run may have up to 1,023 threads:
 * with hundreds of deep ones, presizing every thread took the whole 4 GiB scan memory and the
 * scan failed, though its roots needed a few KiB. Presizing stops at PRESIZED_PAIRS_BUDGET.
 */

const THREADS = 500;
/** 1.125 MiB of live stack per thread: 147,456 slots, presized to 2^18 pairs (8 MiB). */
const STACK_BYTES = 0x12_0000;
const BOUNDARY = 0x9999;

describe("presizing root pairs stops at a budget", () => {
  it("scans 500 threads of 1.125 MiB of live stack, one root each, in the scan memory", () => {
    const threads: ThreadStack[] = [];
    for (let t = 0; t < THREADS; t++) {
      const base = 0x7ff0_0000_0000 + t * 0x100_0000;
      // Not poisoned: only the two words written are touched, the rest stays reserved, not resident.
      const memory = new SimulatedMemory(base, STACK_BYTES, { poison: false });
      const sp = base + 0x100;
      memory.writeWord(sp, 0x5000_0000 + t);
      memory.writeWord(sp + 16, BOUNDARY);
      threads.push({ memory, chunks: [{ sp, ra: 0x2000, boundaryRa: BOUNDARY }] });
    }
    const stacksBytes = scanMemory().allocatedBytes;
    const scanner = new StackRootScanner(syntheticRegistry([{ ra: 0x2000, frameSizeBytes: 16, pairs: [[0, 0]] }]), () => threads, { crossCheck: false });
    scanner.walkStacks();
    expect(scanner.framesScanned).toBe(THREADS);
    expect(scanner.lastWalkOf(THREADS - 1)!.pairs.baseValues[0]).toBe(0x5000_0000 + THREADS - 1);
    let columnPairs = 0;
    for (let t = 0; t < THREADS; t++) columnPairs += scanner.lastWalkOf(t)!.pairs.baseSlots.length;
    // The budget, at most one thread's presize past it, and the others' initial columns.
    expect(columnPairs).toBeLessThanOrEqual(PRESIZED_PAIRS_BUDGET + 2 ** 18 + THREADS * 256);
    expect(scanMemory().allocatedBytes - stacksBytes).toBeLessThan(2 ** 30);
    for (const t of threads) (t.memory as SimulatedMemory).release();
  });
});
