import { X86_64 } from "../../src/arch/x86-64.js";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { registerObjectFile } from "../../src/loader/register-maps.js";
import { RangedMemory } from "../../src/memory/memory.js";
import { SafepointRegistry } from "../../src/safepoints/registry.js";
import { FLAG_DYNAMIC_FRAME, FLAG_FRAME_SIZE_DIFFERS } from "../../src/safepoints/frame-descriptors.js";
import { RegisterContext } from "../../walker/register-context.js";
import { relocateRootPairs } from "../../walker/relocate-roots.js";
import { readSlot } from "../../walker/slot.js";
import { walkStack } from "../../walker/walk-stack.js";
import { NATIVE_STOP_VARIANTS, captureNativeStop, isObjectPointer, oracleRoots, type NativeStop } from "./native/native-stop.js";

/*
 * Real stops of llc -O2 code (default options) at a safepoint, captured by the C harness in
 * test/walker/native/ (stack bytes and callee-saved registers exactly as the CPU left them) and
 * unwound by gdb in the same run. The walker, starting from the same SP, return address and
 * registers over the same bytes, must produce gdb's frames and every root value the program put
 * there (read independently through llvm-readobj's records with gdb's per-frame registers).
 */

function walkNative(stop: NativeStop) {
  const registry = new SafepointRegistry();
  registerObjectFile(registry, readFileSync(stop.executable), { path: stop.executable, loadBias: 0 });
  const memory = RangedMemory.fromPieces(stop.memory);
  const registers = RegisterContext.from(stop.exactRegisters, X86_64);
  const result = walkStack(registry.snapshot(), memory, [{ sp: stop.sp, ra: stop.ra, registers, boundaryRa: stop.boundaryRa }], { mode: "strict" });
  return { registry, memory, registers, result };
}

describe.each(NATIVE_STOP_VARIANTS)("native stop %s", (variant) => {
  const stop = captureNativeStop(variant);

  it("the walker's frames are gdb's frames: same return addresses, same SPs, ending at the boundary", () => {
    const { result } = walkNative(stop);
    expect(result.frames.map((f) => ({ pc: f.ra, sp: f.sp, name: f.functionName }))).toEqual(stop.gdbFrames.map((g) => ({ pc: g.pc, sp: g.sp, name: g.name })));
    expect(result.stopReason).toBe("boundary");
    expect(result.stoppedAt).toBe(stop.boundaryRa);
  });

  it("every root holds the value the program put there", () => {
    const { result, memory, registers } = walkNative(stop);
    const oracle = oracleRoots(stop);
    oracle.forEach((frame, index) => {
      const ours = result.roots.filter((r) => r.frame === index);
      const pairs = ours.map((r) => ({ base: readSlot(r.baseSlot, memory, [registers]), derived: r.value }));
      expect(pairs, `${frame.name}`).toEqual(frame.roots.map((p) => ({ base: p.base, derived: p.derived })));
    });
    for (const frame of stop.expectedRoots) {
      const index = stop.info.frames.indexOf(frame.name);
      const values = result.roots.filter((r) => r.frame === index).map((r) => r.value);
      for (const must of frame.mustInclude) expect(values, frame.name).toContain(must.derived);
    }
    expect(result.roots.length).toBeGreaterThan(0);
    for (const r of result.roots) expect(isObjectPointer(stop, r.value), `0x${r.value.toString(16)}`).toBe(true);
  });

  it("relocation moves every root, derived pointers keep their offsets, registers go to the context", () => {
    const { result, memory, registers } = walkNative(stop);
    const before = result.roots.map((r) => ({ slot: r.slot, value: r.value, base: readSlot(r.baseSlot, memory, [registers]) }));
    const shift = 0x10_0000;
    relocateRootPairs(result.pairs, memory, result.contexts, (old) => old + shift);
    before.forEach((r) => expect(readSlot(r.slot, memory, [registers])).toBe(r.value === 0 ? 0 : r.value + shift));
  });
});

describe("what the native variants exercise", () => {
  it("an outer frame at a call site with pushed arguments (frame size != StackSize)", () => {
    const stop = captureNativeStop("chain-args");
    const { registry, result } = walkNative(stop);
    const snapshot = registry.snapshot();
    const flagged = result.frames.filter((f) => {
      const hit = snapshot.lookup(f.ra)!;
      return (hit.module.descriptors.flags[hit.index]! & FLAG_FRAME_SIZE_DIFFERS) !== 0;
    });
    expect(flagged.map((f) => f.functionName)).toEqual(stop.info.pushedArgsFrames);
    expect(flagged[0]!.index).toBeGreaterThan(0);
  });

  it("a dynamic frame climbed by its frame pointer", () => {
    const stop = captureNativeStop("chain-dynamic");
    const { registry, result } = walkNative(stop);
    const dynamic = result.frames.filter((f) => {
      const hit = registry.snapshot().lookup(f.ra)!;
      return (hit.module.descriptors.flags[hit.index]! & FLAG_DYNAMIC_FRAME) !== 0;
    });
    expect(dynamic.map((f) => f.functionName)).toEqual(stop.info.dynamicFrames);
  });

  it("roots in callee-saved registers of outer frames resolve to their callees' save slots", () => {
    const stop = captureNativeStop("chain-csr");
    const { result } = walkNative(stop);
    const outer = result.roots.filter((r) => r.frame > 0);
    expect(outer.length).toBeGreaterThan(0);
    // Some live in their callees' stack save slots; a register no inner frame saved is still in
    // the innermost context.
    expect(outer.some((r) => r.slot >= 0)).toBe(true);
    expect(result.roots.some((r) => r.frame === 0 && r.slot < 0)).toBe(true); // innermost: the context
  });

  it("without the register context, a frame that needs one is a typed error, not a wrong answer", () => {
    const stop = captureNativeStop("chain-csr");
    const registry = new SafepointRegistry();
    registerObjectFile(registry, readFileSync(stop.executable), { path: stop.executable });
    expect(() =>
      walkStack(registry.snapshot(), RangedMemory.fromPieces(stop.memory), [{ sp: stop.sp, ra: stop.ra, boundaryRa: stop.boundaryRa }], { mode: "strict" }),
    ).toThrow(/cannot be resolved/);
  });
});
