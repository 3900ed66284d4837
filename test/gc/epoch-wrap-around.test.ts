// Line marks are epochs: no clearing pass per collection, and a wrap-around after 255
// collections that clears once, so that a mark left long ago never looks current.
import { describe, expect, it } from "vitest";
import { LINES_IN_BLOCK, MAX_LINE_EPOCH } from "../../gc/heap-constants.js";
import { allocOneLineObjects, keepOnly, lineOf, makeHeap } from "./support/mock-vm.js";

describe("epoch wrap-around", () => {
  it("keeps live lines live and stale lines free across the wrap", () => {
    const t = makeHeap({ defrag: "never" });
    const { collector: c } = t;
    const objects = allocOneLineObjects(t, 256);
    const live = objects[0]!;
    const dropped = objects[100]!;
    keepOnly(t, objects, [0, 100]);
    c.collect(); // epoch 2: lines 0 and 100 marked with 2
    expect(c.epoch).toBe(2);
    const droppedLine = lineOf(dropped);
    expect(c.space.lineMarks[droppedLine]).toBe(2);
    t.scanner.roots = [live];

    const epochs: number[] = [];
    for (let i = 0; i < MAX_LINE_EPOCH + 3; i++) {
      c.collect();
      epochs.push(c.epoch);
      // The dropped object's line keeps its old mark (2) until the wrap clears it, and is never live.
      expect(c.space.lineMarks[droppedLine] === c.epoch).toBe(false);
      expect(c.space.lineMarks[lineOf(live)]).toBe(c.epoch);
    }
    expect(epochs.slice(250, 258)).toEqual([253, 254, 255, 1, 2, 3, 4, 5]);
    expect(c.space.epochWraps).toBe(1);
    // Epoch 2 came round again: without the clearing, the dropped object's line would be live.
    expect(c.space.lineMarks[droppedLine]).toBe(0);
    // Block 0 has line 0 live and the rest free: a single hole from line 2.
    expect(c.space.blockHoles[0]).toBe(1);
    expect(c.space.blockUnavailableLines[0]).toBe(2);
    expect(lineOf(t.mutator.alloc(0, 8))).toBe(2);
    expect(c.space.firstUnavailableLine(2, LINES_IN_BLOCK)).toBe(LINES_IN_BLOCK);
  });
});
