import { describe, expect, it } from "vitest";
import { encodeSyntheticStackMap } from "../../bench/synthetic-stackmap.js";
import { InvalidArgumentError, ReleasedModuleError, SafepointRegistry, registerStackMapBytes } from "../../src/index.js";
import { SimulatedMemory } from "../../src/memory/memory.js";
import type { RegistrySnapshot } from "../../src/safepoints/registry.js";
import { pooledBuffers, sizeClassBytes } from "../../src/safepoints/registration-pool.js";
import { walkStack } from "../../walker/walk-stack.js";

/*
 * `unregister(handle, { release: true })` hands a kernel-indexed module's memory to the next
 * registration (src/safepoints/registration-pool.ts). A snapshot taken before it must then give
 * its old answers (what it copied out: its `find` index, its scan layout) or refuse with a
 * ReleasedModuleError: never an answer read from memory the next registration rewrote. Sections A
 * and B are the same size (so B reuses A's buffers) with every function moved: every return
 * address differs.
 */
const RECORDS = 2000;
const SHIFT = 0x40_0000;
const sectionA = encodeSyntheticStackMap({ functions: RECORDS / 10, recordsPerFunction: 10, rootsPerRecord: 4 });
const sectionB = movedFunctions(sectionA, SHIFT);
const BASE = 0x7ff0_0000_0000;
const BOUNDARY = 0x7100;

function movedFunctions(section: Uint8Array, shift: number): Uint8Array {
  const moved = section.slice();
  const dv = new DataView(moved.buffer);
  for (let f = 0; f < dv.getUint32(4, true); f++) dv.setBigUint64(16 + 24 * f, dv.getBigUint64(16 + 24 * f, true) + BigInt(shift), true);
  return moved;
}

/** Every safepoint's return address, through the snapshot's own descriptors. */
function returnAddresses(snapshot: RegistrySnapshot): number[] {
  return Array.from({ length: snapshot.safepointCount }, (_, i) => snapshot.returnAddressAt(i));
}

/** A one-frame stack at safepoint `index` of `snapshot` whose roots hold distinct values, and the walk's roots. */
function walkOneFrame(snapshot: RegistrySnapshot, memory: SimulatedMemory, ra: number, frameSizeBytes: number): number[] {
  const sp = BASE + 0x100;
  for (let k = 0; k < frameSizeBytes; k += 8) memory.writeWord(sp + k, 0x5000_0000 + k);
  memory.writeWord(sp + frameSizeBytes, BOUNDARY);
  const result = walkStack(snapshot, memory, [{ sp, ra, boundaryRa: BOUNDARY }], { mode: "strict" });
  return result.roots.map((r) => r.value);
}

describe("releasing a registration's memory for reuse", () => {
  it("registration reuses the released buffers; the old snapshot keeps its find answers and refuses everything else", () => {
    const registry = new SafepointRegistry();
    const a = registerStackMapBytes(registry, sectionA, { name: "A" });
    const old = registry.snapshot();
    expect(old.moduleBySlot[0]!.lease).toBeDefined(); // the kernel index took it
    const addressesA = returnAddresses(old);
    const indicesA = addressesA.map((ra) => old.find(ra)); // builds old's find index
    const oldKeys = old.table.keys.buffer;
    const memory = new SimulatedMemory(BASE, 0x1000);
    const frame = old.frameSizeBytesAt(7);
    const rootsA = walkOneFrame(old, memory, addressesA[7]!, frame);
    expect(rootsA.length).toBeGreaterThan(0);

    registry.unregister(a, { release: true });
    registerStackMapBytes(registry, sectionB, { name: "B" });
    const now = registry.snapshot();
    // B lies in A's memory: what the old snapshot's table, recipes and section were.
    expect(now.table.keys.buffer).toBe(oldKeys);
    expect(now.find(addressesA[0]!)).toBe(-1);
    expect(now.find(addressesA[0]! + SHIFT)).toBe(indicesA[0]);

    // The old snapshot's find index is its own copy: the old answers.
    expect(addressesA.map((ra) => old.find(ra))).toEqual(indicesA);
    expect(old.find(addressesA[0]! + SHIFT)).toBe(-1);
    // Everything that would read the reused memory is refused with the typed error.
    for (const read of [
      () => old.table,
      () => old.lookup(addressesA[0]!),
      () => old.frameSizeBytesAt(0),
      () => old.returnAddressAt(0),
      () => old.scanRecipes,
      () => old.moduleBySlot[0]!.recipes,
      () => old.moduleBySlot[0]!.descriptors,
      () => old.moduleBySlot[0]!.deferred!.descriptorsOf(0),
      () => walkOneFrame(old, memory, addressesA[7]!, frame),
    ]) {
      expect(read).toThrow(ReleasedModuleError);
    }
    expect(() => old.lookup(addressesA[0]!)).toThrow(/module "A" \(handle 1\).*unregister\(1, \{ release: true \}\)/);
    expect(new ReleasedModuleError("A", 1)).toBeInstanceOf(InvalidArgumentError);
    // The new snapshot walks B's frame as the old one walked A's.
    expect(walkOneFrame(now, memory, addressesA[7]! + SHIFT, frame)).toEqual(rootsA);
  });

  it("a snapshot that scanned before the release keeps its scan layout only behind the same refusal", () => {
    const registry = new SafepointRegistry();
    const a = registerStackMapBytes(registry, sectionA, { name: "A" });
    const old = registry.snapshot();
    void old.scanLayout;
    registry.unregister(a, { release: true });
    registerStackMapBytes(registry, sectionB, { name: "B" });
    expect(() => old.scanLayout).toThrow(ReleasedModuleError);
  });

  it("without release, an old snapshot keeps every answer after a new registration (nothing is reused)", () => {
    const registry = new SafepointRegistry();
    const a = registerStackMapBytes(registry, sectionA, { name: "A" });
    const old = registry.snapshot();
    const addressesA = returnAddresses(old);
    const memory = new SimulatedMemory(BASE, 0x1000);
    const frame = old.frameSizeBytesAt(7);
    const rootsA = walkOneFrame(old, memory, addressesA[7]!, frame);
    registry.unregister(a);
    registerStackMapBytes(registry, sectionB, { name: "B" });
    expect(registry.snapshot().table.keys.buffer).not.toBe(old.table.keys.buffer);
    expect(returnAddresses(old)).toEqual(addressesA);
    expect(old.lookup(addressesA[3]!)?.index).toBe(3);
    expect(walkOneFrame(old, memory, addressesA[7]!, frame)).toEqual(rootsA);
  });

  it("the pool stays bounded: at most four buffers and twice the last registration released", () => {
    const registry = new SafepointRegistry();
    const big = encodeSyntheticStackMap({ functions: 2000, recordsPerFunction: 10, rootsPerRecord: 4 });
    for (const section of [big, sectionA, big, sectionA, sectionB, sectionA]) {
      const handle = registerStackMapBytes(registry, section, { name: "m" });
      const snapshot = registry.snapshot();
      const heldBytes = snapshot.table.keys.buffer.byteLength + snapshot.moduleBySlot[0]!.recipes.frameBytes.buffer.byteLength;
      registry.unregister(handle, { release: true });
      const pool = pooledBuffers();
      expect(pool.buffers).toBeLessThanOrEqual(4);
      expect(pool.bytes).toBeLessThanOrEqual(2 * heldBytes);
      expect(pool.bytes).toBeGreaterThanOrEqual(heldBytes); // the last registration's buffers are kept
    }
    expect(sizeClassBytes(100)).toBe(112);
    expect(sizeClassBytes(1 << 20)).toBe(1 << 20);
    expect(sizeClassBytes((1 << 20) + 1)).toBe((1 << 20) + (1 << 18));
  });
});
