import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SPLIT_STACK_FIXTURE } from "../support/fixtures.js";
import { loadStackSnapshot, type StackSnapshotJson, type WalkMethod } from "../../walker/stack-snapshot.js";
import { walkStack } from "../../walker/walk-stack.js";

/*
 * ../shared/fixtures/split-stack/fixture_d300.json: a real split-stack run (recursion depth 300,
 * 3 stacklet crossings, 302 roots). Each method must find every expected root in order; a walk
 * that knows nothing of stacklets stops at the first return into __morestack.
 */
const fixture = JSON.parse(readFileSync(SPLIT_STACK_FIXTURE, "utf8")) as StackSnapshotJson;
const expected = fixture.expectedRoots!.map((r) => ({ slot: Number(r.slot), value: Number(r.value) }));

function walk(method: WalkMethod) {
  const loaded = loadStackSnapshot(fixture);
  const split = loaded.splitStacks(method);
  return walkStack(loaded.registry.snapshot(), loaded.memory, loaded.start, { mode: "lenient", ...(split ? { splitStacks: split } : {}) });
}

describe("the split-stack fixture", () => {
  for (const method of ["segments", "find-ranges", "geometry"] as const) {
    it(`${method}: all ${expected.length} roots in order, ${fixture.expectedMorestackTransitions} stacklet crossings`, () => {
      const result = walk(method);
      expect(result.roots.map((r) => ({ slot: r.slot, value: r.value }))).toEqual(expected);
      expect(result.transitions).toBe(fixture.expectedMorestackTransitions);
      // The walk ends at the return address into the code that called managed_entry.
      expect(result.stopReason).toBe("unknown-return-address");
      expect(result.frames.at(-1)?.functionName).toBe("managed_entry");
    });
  }

  it("naive (no stacklet support) falls short at the first return into __morestack", () => {
    const result = walk("naive");
    expect(result.roots.length).toBeLessThan(expected.length);
    expect(result.roots.length).toBe(24);
    expect(result.roots.map((r) => r.slot)).toEqual(expected.slice(0, 24).map((r) => r.slot));
    const morestack = Number(fixture.morestackStart);
    expect(result.stoppedAt).toBeGreaterThanOrEqual(morestack);
    expect(result.stoppedAt).toBeLessThan(morestack + Number(fixture.morestackSize));
  });

  it("an inconsistent stacklet list is a typed error in strict mode", () => {
    const loaded = loadStackSnapshot(fixture);
    const split = loaded.splitStacks("segments")!;
    const broken = { ...split, stacklets: [split.stacklets![0]!, { ...split.stacklets![2]! }, split.stacklets![1]!] };
    expect(() => walkStack(loaded.registry.snapshot(), loaded.memory, loaded.start, { mode: "strict", splitStacks: broken })).toThrow(
      /old_stack 0x7f3a4ca15ee0 of stacklet #0 is not in stacklet #1/,
    );
  });
});
