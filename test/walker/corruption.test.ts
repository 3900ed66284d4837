import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { RootwalkError } from "../../src/errors.js";
import { registerObjectFile } from "../../src/loader/register-maps.js";
import { RangedMemory } from "../../src/memory/memory.js";
import { X86_64 } from "../../src/arch/x86-64.js";

const CALLEE_SAVED_NAMES = X86_64.calleeSavedNames; // the native stops are x86-64 programs
const CALLEE_SAVED_COUNT = CALLEE_SAVED_NAMES.length;
import { SafepointRegistry, type RegistrySnapshot } from "../../src/safepoints/registry.js";
import { RegisterContext } from "../../walker/register-context.js";
import { loadStackSnapshot, type StackSnapshotJson } from "../../walker/stack-snapshot.js";
import type { ManagedChunk, UnwinderOptions } from "../../walker/unwinder.js";
import { walkStack, type WalkResult } from "../../walker/walk-stack.js";
import { Rng } from "../fuzz/mutate.js";
import { SPLIT_STACK_FIXTURE } from "../support/fixtures.js";
import { NATIVE_STOP_VARIANTS, captureNativeStop } from "./native/native-stop.js";
import { SpyMemory } from "./support/synthetic-stack.js";

/*
 * Random damage to real stacks (the native stops and the split-stack fixture): a return address,
 * a callee-saved register's save slot, any other stack word, the starting SP, or a captured
 * register. Every walk must end in a RootwalkError or a correct result, must never touch memory
 * outside the valid ranges, and must terminate. Damage to a word the walk does not depend on
 * must leave frames and root slots exactly as they were.
 */
const CASES_PER_STACK = Number(process.env.ROOTWALK_CORRUPTION_CASES ?? 400);

interface Subject {
  name: string;
  pieces: { base: number; bytes: Uint8Array }[];
  snapshot: RegistrySnapshot;
  chunk: ManagedChunk;
  options: UnwinderOptions;
}

function subjects(): Subject[] {
  const list: Subject[] = NATIVE_STOP_VARIANTS.map((variant) => {
    const stop = captureNativeStop(variant);
    const registry = new SafepointRegistry();
    registerObjectFile(registry, readFileSync(stop.executable), { path: stop.executable });
    return {
      name: variant,
      pieces: stop.memory,
      snapshot: registry.snapshot(),
      chunk: { sp: stop.sp, ra: stop.ra, registers: RegisterContext.from(stop.exactRegisters, X86_64), boundaryRa: stop.boundaryRa },
      options: { mode: "strict" },
    };
  });
  const fixture = JSON.parse(readFileSync(SPLIT_STACK_FIXTURE, "utf8")) as StackSnapshotJson;
  const loaded = loadStackSnapshot(fixture);
  list.push({
    name: "split-stack fixture",
    pieces: fixture.memory.map((m) => ({ base: Number(m.base), bytes: Uint8Array.from(Buffer.from(m.hex, "hex")) })),
    snapshot: loaded.registry.snapshot(),
    chunk: loaded.start,
    options: { mode: "lenient", splitStacks: loaded.splitStacks("segments")! },
  });
  return list;
}

/** Stack words the walk's path depends on: return-address slots and register save slots. */
function structuralSlots(result: WalkResult, snapshot: RegistrySnapshot): Set<number> {
  const slots = new Set<number>();
  result.frames.forEach((f, i) => {
    slots.add(f.sp - 8);
    const hit = snapshot.lookup(f.ra);
    if (hit === undefined) return;
    const d = hit.module.descriptors;
    const next = result.frames[i + 1];
    const cfa = next?.sp ?? Number.NaN;
    for (let k = 0; k < CALLEE_SAVED_COUNT; k++) {
      const off = d.savedRegOffsets[hit.index * CALLEE_SAVED_COUNT + k]!;
      if (off !== 0) slots.add(cfa + off);
    }
  });
  if (result.frames.length > 0) slots.add(result.frames.at(-1)!.sp + 0x10000); // the boundary's own slot is covered by sp-8 of the next
  return slots;
}

const interesting = (rng: Rng, s: Subject, baseline: WalkResult): bigint => {
  switch (rng.int(7)) {
    case 0:
      return BigInt(rng.int(256));
    case 1:
      return (1n << 60n) + BigInt(rng.int(1000)); // not an address; above 2^53
    case 2:
      return BigInt(baseline.frames[rng.int(baseline.frames.length)]!.ra); // another valid return address
    case 3:
      return BigInt(baseline.frames[rng.int(baseline.frames.length)]!.sp + (rng.int(64) - 32) * 8); // a stack address
    case 4:
      return BigInt(s.pieces[0]!.base - 8 * (1 + rng.int(100))); // just below the stack
    case 5:
      return BigInt(baseline.frames[0]!.ra + 1 + rng.int(16)); // near, but not, a safepoint
    default:
      return BigInt(Math.floor(rng.next() * 2 ** 47));
  }
};

describe.each(subjects())("damaged stacks: $name", (s) => {
  const walk = (memory: SpyMemory, chunk: ManagedChunk) => walkStack(s.snapshot, memory, [chunk], s.options);
  const baseline = walk(new SpyMemory(RangedMemory.fromPieces(s.pieces)), s.chunk);
  const structural = structuralSlots(baseline, s.snapshot);
  const rootSlots = new Set(baseline.roots.map((r) => r.slot));

  it(`${CASES_PER_STACK} damaged copies: a typed error or a correct result, never outside memory`, () => {
    expect(baseline.frames.length).toBeGreaterThan(2);
    const outcomes = { errors: 0, lenientStops: 0, identical: 0, otherCompleted: 0 };
    for (let c = 0; c < CASES_PER_STACK; c++) {
      const rng = new Rng(1000 + c);
      const memory = new SpyMemory(RangedMemory.fromPieces(s.pieces));
      let chunk: ManagedChunk = { ...s.chunk };
      let damaged: number | undefined;
      const kind = rng.int(5);
      if (kind === 0) {
        damaged = baseline.frames[rng.int(baseline.frames.length)]!.sp - 8; // a return address
      } else if (kind === 1 && structural.size > 0) {
        damaged = [...structural][rng.int(structural.size)]!; // a save slot or return address
      } else if (kind === 2) {
        const frame = baseline.frames[rng.int(baseline.frames.length)]!;
        damaged = frame.sp + 8 * rng.int(64); // any word near a frame
      } else if (kind === 3) {
        chunk = { ...chunk, sp: chunk.sp + (rng.int(2) ? (rng.int(64) - 32) * 8 : 1 + rng.int(7)) };
      } else if (chunk.registers !== undefined) {
        const regs = RegisterContext.from(
          { ...chunk.registers.toObject(), [CALLEE_SAVED_NAMES[rng.int(CALLEE_SAVED_COUNT)]!]: interesting(rng, s, baseline) },
          X86_64,
        );
        chunk = { ...chunk, registers: regs };
      }
      if (damaged !== undefined && memory.contains(damaged, 8)) memory.inner.writeWordBigInt(damaged, interesting(rng, s, baseline));
      let result: WalkResult | undefined;
      try {
        result = walk(memory, chunk);
      } catch (e) {
        if (!(e instanceof RootwalkError)) throw e;
        outcomes.errors++;
      }
      expect(memory.outOfRange, `case ${c}`).toEqual([]);
      if (result === undefined) continue;
      const sameFrames = JSON.stringify(result.frames) === JSON.stringify(baseline.frames);
      if (damaged !== undefined && !structural.has(damaged) && kind === 2) {
        // Not a word the walk's path depends on: the same frames and the same root slots.
        expect(sameFrames, `case ${c}: damage at 0x${damaged.toString(16)}`).toBe(true);
        expect(result.roots.map((r) => r.slot)).toEqual(baseline.roots.map((r) => r.slot));
        if (!rootSlots.has(damaged)) expect(result.roots.map((r) => r.value)).toEqual(baseline.roots.map((r) => r.value));
      }
      if (sameFrames) outcomes.identical++;
      else if (s.options.mode === "lenient") outcomes.lenientStops++;
      else {
        outcomes.otherCompleted++;
        expect(result.frames.length).toBeLessThan(1_000_000);
        if (s.options.mode === "strict") expect(result.stopReason).toBe("boundary");
        // Only damage that leaves a self-consistent stack (a valid return address written over
        // another, a register or SP moved onto other live words) can complete differently.
        expect(kind === 2 && !structural.has(damaged!), `case ${c}: unrelated damage changed the walk`).toBe(false);
      }
    }
    console.log(`${s.name}: ${JSON.stringify(outcomes)}`);
    expect(outcomes.errors + outcomes.lenientStops).toBeGreaterThan(CASES_PER_STACK / 10);
  });
});
