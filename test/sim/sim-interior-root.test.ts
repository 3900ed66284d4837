import { describe, expect, it } from "vitest";
import { RootNotObjectError } from "../../gc/collector-error.js";
import { ImmixCollector } from "../../gc/immix-collector.js";
import { SimThread, loadFrameTemplates } from "../../src/cli/sim/sim-thread.js";
import { StackRootScanner, type ThreadStack } from "../../walker/stack-root-scanner.js";
import { catchError } from "../support/catch-error.js";

/*
 * Issue 29, item 1, in `rootwalk sim`: the same collector over simulated stacks walked by the real
 * walker. A frame's root slot holding a pointer 16 bytes into a 32-byte object is tested against
 * the allocation bitmap before anything moves: with verify a verification failure naming the root
 * (thread, frame function+offset, stack slot) and the object it points into, the collection
 * refused; without verify a RootNotObjectError with the same words. Nothing moves either way.
 */

async function simWithInteriorRoot(verify: boolean) {
  const { registry, templates } = await loadFrameTemplates();
  const sizeBytes = 4 * 1024 * 1024;
  const collector = new ImmixCollector({ heap: { base: 0x2000_0000_0000, buffer: new ArrayBuffer(sizeBytes), sizeBytes }, options: { verify, stress: true } });
  const thread = new SimThread(0, collector.newMutator(), 1024 * 1024);
  collector.addRootScanner(new StackRootScanner(registry, () => [thread.threadStack()].filter((s): s is ThreadStack => s !== undefined)));
  const template = [...templates.values()].find((t) => t.slots.length > 0)!;
  const frame = thread.push(template);
  const object = thread.mutator.alloc(0, 32);
  collector.space.writeWord(object + 16, 7);
  frame.set(0, object + 16);
  return { collector, frame, object, template };
}

const INSIDE = (object: number): RegExp =>
  new RegExp(
    `found 0x${(object + 16).toString(16)} not an object start: inside object 0x${object.toString(16)} \\(\\+0x10, which ends at 0x${(object + 32).toString(16)}\\)`,
  );

describe("rootwalk sim: a root that is no object start", () => {
  it("with verify: a verification failure naming the root, the collection refused, nothing moved", async () => {
    const { collector, frame, object, template } = await simWithInteriorRoot(true);
    const cycle = collector.collect();
    expect(cycle.verifyFailures).toBe(1);
    expect(cycle.evacuatedObjects).toBe(0);
    expect(collector.verifyMessages[0]).toMatch(
      new RegExp(`^before: root #0 \\(thread #0, frame #0 ${template.function}\\+0x[0-9a-f]+ .*stack slot 0x[0-9a-f]+`),
    );
    expect(collector.verifyMessages[0]).toMatch(INSIDE(object));
    expect(frame.get(0)).toBe(object + 16);
    expect(collector.space.readWord(object + 16)).toBe(7);
  });

  it("without verify: the collection is refused with the same words", async () => {
    const { collector, frame, object } = await simWithInteriorRoot(false);
    const error = catchError(() => collector.collect());
    expect(error).toBeInstanceOf(RootNotObjectError);
    expect((error as Error).message).toMatch(/^collection refused, nothing moved: root #0 \(thread #0, frame #0 /);
    expect((error as Error).message).toMatch(INSIDE(object));
    expect(frame.get(0)).toBe(object + 16);
  });
});
