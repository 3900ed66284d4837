// The verifier catches broken heaps: a dangling pointer planted into free memory, a scanner that
// does not update its roots (pointers into evacuated memory), and a model that copies too little
// (the reachable graph's checksum changes across the collection).
import { describe, expect, it } from "vitest";
import { BYTES_IN_BLOCK } from "../../gc/heap-constants.js";
import { inspectGraph } from "../../gc/heap-verifier.js";
import { DefaultObjectModel, type HeapMemory } from "../../gc/object-model.js";
import { allocOneLineObjects, fillRaw, keepOnly, makeHeap } from "./support/mock-vm.js";

describe("verify catches a broken heap", () => {
  it("reports a pointer planted into a free line and into a free block", () => {
    const t = makeHeap({ defrag: "never", verify: true });
    const { collector: c, scanner } = t;
    const objects = allocOneLineObjects(t, 600); // blocks 0, 1 and part of 2
    const holder = t.mutator.alloc(2, 0); // block 2
    keepOnly(t, objects, [0]);
    scanner.roots.push(holder);
    expect(c.collect().verifyFailures).toBe(0);
    expect(c.verifyHeap().failures).toBe(0);

    const deadInFreeLine = objects[50]!; // block 0, its line is free now
    const deadInFreeBlock = objects[300]!; // block 1 holds nothing live: free
    c.writePointer(holder, 0, deadInFreeLine);
    c.writePointer(holder, 1, deadInFreeBlock);
    const report = c.verifyHeap();
    expect(report.failures).toBe(2);
    expect(report.messages[0]).toContain(`found 0x${deadInFreeLine.toString(16)} in a free line`);
    expect(report.messages[1]).toContain(`found 0x${deadInFreeBlock.toString(16)} in a free block`);
  });

  it("reports roots left pointing into evacuated memory by a scanner that skips updateRoots", () => {
    // Without poisoning (stress implies it) the old copy keeps its forwarding header.
    const t = makeHeap({ stress: true, poison: false, verify: true });
    const { collector: c, mutator: m, scanner } = t;
    const a = m.alloc(1, 16);
    c.writePointer(a, 0, m.alloc(0, 16));
    const pinned = m.alloc(0, 16); // keeps block 0 in use, so a's old copy is evacuated memory, not a free block
    c.pin(pinned);
    scanner.roots = [a, pinned];
    scanner.skipUpdates = true;
    const cycle = c.collect();
    expect(cycle.evacuatedObjects).toBe(2);
    expect(cycle.verifyFailures).toBeGreaterThan(0);
    expect(c.verifyMessages.join("\n")).toMatch(/root #0: found 0x[0-9a-f]+ in evacuated memory \(forwarded to 0x[0-9a-f]+\)/);
    expect(c.stats.totalVerifyFailures).toBe(cycle.verifyFailures);
  });

  it("reports a changed graph when objects are copied short", () => {
    class ShortCopyModel extends DefaultObjectModel {
      override sizeBytes(heap: HeapMemory, address: number): number {
        return super.sizeBytes(heap, address) - 8; // loses the last word of every copy
      }
    }
    const t = makeHeap({ stress: true, verify: true, model: new ShortCopyModel(), sizeBytes: 8 * BYTES_IN_BLOCK });
    const { collector: c, mutator: m, scanner } = t;
    const a = m.alloc(0, 32);
    fillRaw(c, a, 9);
    scanner.roots = [a];
    const cycle = c.collect();
    expect(cycle.verifyFailures).toBe(1);
    expect(c.verifyMessages[0]).toMatch(/^reachable graph changed: 1 objects, checksum [0-9a-f]{16} before; 1 objects, checksum [0-9a-f]{16} after$/);
  });

  it("reports a pointer into the middle of an object taken for an object (a derived pointer reported as a base)", () => {
    const t = makeHeap({ verify: true, poison: false });
    const { collector: c, mutator: m, scanner } = t;
    const buffer = m.alloc(0, 64);
    // Raw word 3 happens to look like a header (no pointer slots, 8 raw bytes): the word right
    // before buffer + 32, which a stack map wrongly reports as a base.
    c.space.writeWord(buffer + 24, 8 << 3);
    scanner.roots = [buffer, buffer + 32];
    const cycle = c.collect();
    // Found before the collection (the allocation bitmap has no object there), which is refused: nothing moved.
    expect(cycle.verifyFailures).toBe(1);
    expect(cycle.reason).toMatch(/refused/);
    // The failure names the root that holds the inner address (the second root) and the object it is inside.
    expect(c.verifyMessages).toEqual([
      `before: root #1: found 0x${(buffer + 32).toString(16)} not an object start: inside object 0x${buffer.toString(16)} (+0x20, which ends at 0x${(buffer + 64).toString(16)}), ` +
        "expected an object's address",
    ]);
    expect(c.verifyFailures[0]!).toMatchObject({
      location: { kind: "root", index: 1, description: undefined },
      expected: "an object's address",
      phase: "before",
    });
    scanner.roots = [buffer];
    expect(c.collect().verifyFailures).toBe(0);
  });

  it("a verification that throws midway (a root describer failing) leaves nothing behind for the next one", () => {
    const t = makeHeap({ poison: false });
    const { collector: c, mutator: m } = t;
    const buffer = m.alloc(0, 64);
    c.space.writeWord(buffer + 24, 8 << 3); // a header-like word: buffer + 32 passes as an object
    const throwingDescriber = (): string => {
      throw new Error("describer failed");
    };
    // buffer + 32 is reached (its start bit set), then the bad second root's failure throws.
    expect(() => inspectGraph(c.space, c.model, [buffer + 32, 8], false, 20, throwingDescriber)).toThrow("describer failed");
    // buffer + 32 is not reached now: a start bit left from the first traversal would put it inside buffer.
    const r = inspectGraph(c.space, c.model, [buffer], false);
    expect(r.messages).toEqual([]);
    expect(r.failures).toBe(0);
  });
});
