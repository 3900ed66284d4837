import { describe, expect, it } from "vitest";
import { X86_64 } from "../../src/arch/x86-64.js";
import { SimulatedMemory } from "../../src/memory/memory.js";
import type { RootScanReason } from "../../gc/root-scanning.js";
import { RegisterContext } from "../../walker/register-context.js";
import { StackRootScanner, type ThreadStack } from "../../walker/stack-root-scanner.js";
import type { ManagedChunk } from "../../walker/unwinder.js";
import { type SyntheticSafepoint, syntheticRegistry } from "./support/synthetic-stack.js";

/*
 * A thread's return-barrier skip point (ThreadStack.skipFromSp, set by the native runtime's
 * src/native/return-barriers.ts): a "nursery-collection" scan walks the frames below it only (SP
 * under skipFromSp), in whichever chunk it lies, and counts skippedFrames as skipped; its root
 * pairs are the whole walk's for those frames. Every other scan walks everything.
 */

const STACK = 0x7ff0_0000_0000;
const SAFEPOINTS: SyntheticSafepoint[] = [
  {
    ra: 0x2000,
    frameSizeBytes: 16,
    pairs: [
      [0, 0],
      [8, 8],
    ],
  },
  { ra: 0x3000, frameSizeBytes: 24, pairs: [[8, 8]], saved: { 0: -16 } },
];
const BOUNDARY = 0x7000;

/** Frames (ra 0x2000 / 0x3000 alternating) from `sp` up; the outermost returns to `end`. Returns each frame's SP. */
function frames(memory: SimulatedMemory, sp: number, count: number, end: number): number[] {
  const sps: number[] = [];
  for (let i = 0; i < count; i++) {
    const s = SAFEPOINTS[i % 2]!;
    sps.push(sp);
    for (let off = 0; off < s.frameSizeBytes; off += 8) memory.writeWord(sp + off, 0x5000_0000 + i * 0x100 + off);
    memory.writeWord(sp + s.frameSizeBytes, i + 1 < count ? SAFEPOINTS[(i + 1) % 2]!.ra : end);
    sp += s.frameSizeBytes + 8;
  }
  return sps;
}

/** One chunk of 40 frames, or two (20 frames to a boundary, then 20 more to the stack top). */
function thread(chunkCount: 1 | 2): { stack: ThreadStack; sps: number[] } {
  const memory = new SimulatedMemory(STACK, 0x4000);
  const registers = RegisterContext.from({ rbx: 7 }, X86_64);
  if (chunkCount === 1) {
    const sps = frames(memory, STACK + 0x100, 40, BOUNDARY);
    return { stack: { memory, chunks: [{ sp: sps[0]!, ra: 0x2000, boundaryRa: BOUNDARY, registers }] }, sps };
  }
  const inner = frames(memory, STACK + 0x100, 20, BOUNDARY);
  const outer = frames(memory, STACK + 0x2000, 20, 0x9999);
  const top = outer.at(-1)! + SAFEPOINTS[1]!.frameSizeBytes + 8;
  const chunks: ManagedChunk[] = [
    { sp: inner[0]!, ra: 0x2000, boundaryRa: BOUNDARY, registers },
    { sp: outer[0]!, ra: 0x2000, stackTop: top },
  ];
  return { stack: { memory, chunks }, sps: [...inner, ...outer] };
}

function scan(stack: ThreadStack, reason: RootScanReason): { scanner: StackRootScanner; slots: number[] } {
  const scanner = new StackRootScanner(syntheticRegistry(SAFEPOINTS), () => [stack]);
  scanner.walkStacks(reason);
  const pairs = scanner.lastWalkOf(0)!.pairs;
  return { scanner, slots: Array.from(pairs.baseSlots.subarray(0, pairs.count)) };
}

describe("a nursery scan stops at the thread's skip point", () => {
  it.each([
    ["one chunk", 1 as const, 13],
    ["two chunks, the skip point in the outer one", 2 as const, 27],
    ["two chunks, the skip point in the inner one", 2 as const, 7],
  ])("%s", (_, chunkCount, skipAt) => {
    const { stack, sps } = thread(chunkCount);
    const whole = scan(stack, "collection");
    expect(whole.scanner.framesScanned).toBe(40);
    stack.skipFromSp = sps[skipAt];
    stack.skippedFrames = 40 - skipAt;
    const nursery = scan(stack, "nursery-collection");
    expect(nursery.scanner.framesScanned).toBe(skipAt);
    expect(nursery.scanner.framesSkipped).toBe(40 - skipAt);
    // The pairs of the frames walked: those of the whole walk below the skip point.
    expect(nursery.slots).toEqual(whole.slots.filter((slot) => slot < sps[skipAt]!));
    // The chunks are left as they were, and other scans walk everything.
    expect(stack.chunks.at(-1)!.stackTop).toBe(chunkCount === 1 ? undefined : sps.at(-1)! + SAFEPOINTS[1]!.frameSizeBytes + 8);
    for (const reason of ["collection", "verification"] as const) expect(scan(stack, reason).scanner.framesScanned).toBe(40);
  });
});
