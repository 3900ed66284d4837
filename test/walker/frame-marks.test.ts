import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ROOT_TYPE_ATOMIC, ROOT_TYPE_POINTER } from "../../src/location/location-word.js";
import { SimulatedMemory } from "../../src/memory/memory.js";
import { scanStackRoots } from "../../walker/fast-scan.js";
import { FrameMarks } from "../../walker/frame-marks.js";
import { RootPairs } from "../../walker/frame-roots.js";
import { ScanKernel } from "../../walker/kernel-binding.js";
import { Unwinder } from "../../walker/unwinder.js";
import { type SyntheticSafepoint, syntheticRegistry } from "./support/synthetic-stack.js";

/*
 * A collection's scan records the frames at depths 1, 2, 4, ... (walker/frame-marks.ts: where the
 * native runtime puts its return barriers), the scan kernel stopping at each such depth and the
 * general unwinder taking the frames it hands over. On random stacks mixing frames the kernel
 * takes with frames it hands over: the marks are exactly frame k's SP, return address and the slot
 * that holds it (x86-64: SP - 8), read from a walk of the general unwinder, and marking changes
 * nothing in the scan (frames, root pairs, values).
 */

const BASE = 0x7ffe_0000_0000;
const SIZE = 1 << 20;
const BOUNDARY = 0x9999_0000;
const SAFEPOINTS: SyntheticSafepoint[] = [
  { ra: 0x401010, frameSizeBytes: 40, pairs: [[0, 0]] },
  { ra: 0x402020, frameSizeBytes: 24, pairs: [[0, 16]], saved: { 0: -16 } },
  {
    ra: 0x404040,
    frameSizeBytes: 32,
    pairs: [
      [0, 0],
      [8, 8],
    ],
    types: [ROOT_TYPE_POINTER, ROOT_TYPE_ATOMIC],
  }, // typed roots: the general unwinder's
  { ra: 0x406060, frameSizeBytes: 0, pairs: [] },
];

/** Frames of `sites` from BASE + 256 up, the outermost returning to BOUNDARY. */
function buildStack(sites: readonly number[]): { memory: SimulatedMemory; sp: number; ra: number } {
  const memory = new SimulatedMemory(BASE, SIZE);
  let sp = BASE + 256;
  const start = sp;
  for (let f = 0; f < sites.length; f++) {
    const s = SAFEPOINTS[sites[f]!]!;
    for (let off = 0; off < s.frameSizeBytes; off += 8) memory.writeWord(sp + off, 0x10_0000_0000 + f * 64 + off);
    const next = sites[f + 1];
    memory.writeWord(sp + s.frameSizeBytes, next === undefined ? BOUNDARY : SAFEPOINTS[next]!.ra);
    sp += s.frameSizeBytes + 8;
  }
  return { memory, sp: start, ra: SAFEPOINTS[sites[0]!]!.ra };
}

describe("frame marks at depths 1, 2, 4, ...", () => {
  const registry = syntheticRegistry(SAFEPOINTS);

  it("are frame k's SP, return address and return-address slot, on either path, and change nothing in the scan", () => {
    const site = fc.integer({ min: 0, max: SAFEPOINTS.length - 1 });
    const kernel = new ScanKernel();
    const marks = new FrameMarks();
    fc.assert(
      fc.property(fc.array(site, { minLength: 1, maxLength: 700 }), (sites) => {
        const { memory, sp, ra } = buildStack(sites);
        const chunks = [{ sp, ra, boundaryRa: BOUNDARY }];
        const snapshot = registry.snapshot();
        // What the general unwinder says each frame is.
        const frameSps: number[] = [];
        const frameRas: number[] = [];
        const u = new Unwinder(snapshot, memory, { mode: "strict" });
        for (u.init(chunks); u.valid(); u.next()) {
          frameSps.push(u.sp);
          frameRas.push(u.ra);
        }
        const plain = new RootPairs();
        const plainFrames = scanStackRoots(new Unwinder(snapshot, memory, { mode: "strict" }), chunks, plain, kernel);
        const marked = new RootPairs();
        marks.reset();
        const frames = scanStackRoots(new Unwinder(snapshot, memory, { mode: "strict" }), chunks, marked, kernel, undefined, marks);
        marks.finish(frames, 0);

        expect(frames).toBe(plainFrames);
        expect(frames).toBe(sites.length);
        expect(Array.from(marked.baseSlots.subarray(0, marked.count))).toEqual(Array.from(plain.baseSlots.subarray(0, plain.count)));
        expect(Array.from(marked.baseValues.subarray(0, marked.count))).toEqual(Array.from(plain.baseValues.subarray(0, plain.count)));
        // Depths 1, 2, 4, ... up to the walk's last frame, and one more: the caller of the last
        // frame walked (the boundary's frame) is marked at its callee, but its return address is
        // no safepoint, so it is not recorded.
        const depths: number[] = [];
        for (let k = 1; k < frames; k *= 2) depths.push(k);
        expect(Array.from(marks.indexes.subarray(0, marks.count))).toEqual(depths);
        expect(Array.from(marks.sps.subarray(0, marks.count))).toEqual(depths.map((k) => frameSps[k]));
        expect(Array.from(marks.ras.subarray(0, marks.count))).toEqual(depths.map((k) => frameRas[k]));
        expect(Array.from(marks.slots.subarray(0, marks.count))).toEqual(depths.map((k) => frameSps[k]! - 8));
      }),
      { numRuns: 150 },
    );
  });
});
