import { X86_64 } from "../../src/arch/x86-64.js";
import { describe, expect, it } from "vitest";
import { SimulatedMemory } from "../../src/memory/memory.js";
import { RegisterContext } from "../../walker/register-context.js";
import { walkStack } from "../../walker/walk-stack.js";
import { SpyMemory, syntheticRegistry } from "./support/synthetic-stack.js";

/*
 * managed (chunk B, outer) -> native code -> managed (chunk A, inner) -> safepoint.
 * The runtime records, for each entry into managed code, where the managed frames begin (SP,
 * return address, registers) and the return address into the runtime where they end. The walker
 * walks chunk A to its boundary, then chunk B; the native frames in between are never read.
 *
 *   0x..1000  +------------------+
 *             | chunk A frames   |  sp_A = 0x..1100: ra 0x2000 (16 B) -> ra 0x3000 (8 B) -> 0x7000
 *   0x..1200  | native frames    |  poison, never read
 *   0x..1800  | chunk B frames   |  sp_B = 0x..1800: ra 0x2000 (16 B) -> 0x7100
 *   0x..2000  +------------------+
 */
const BASE = 0x7ff0_0000_1000;
const NATIVE = { from: BASE + 0x200, to: BASE + 0x800 };

describe("managed chunks separated by native frames", () => {
  const registry = syntheticRegistry([
    {
      ra: 0x2000,
      frameSizeBytes: 16,
      pairs: [
        [0, 0],
        [0, 8],
      ],
    },
    { ra: 0x3000, frameSizeBytes: 8, pairs: [[0, 0]] },
  ]);
  const memory = new SpyMemory(new SimulatedMemory(BASE, 0x1000));
  const spA = BASE + 0x100;
  memory.writeWord(spA, 0x5000_0000);
  memory.writeWord(spA + 8, 0x5000_0010);
  memory.writeWord(spA + 16, 0x3000); // A0 -> A1
  memory.writeWord(spA + 24, 0x5100_0000);
  memory.writeWord(spA + 32, 0x7000); // A1 -> native (the boundary)
  const spB = BASE + 0x800;
  memory.writeWord(spB, 0x5200_0000);
  memory.writeWord(spB + 8, 0x5200_0040);
  memory.writeWord(spB + 16, 0x7100); // B0 -> runtime entry
  memory.reads.length = 0;

  it("walks both chunks in order and never reads the native frames", () => {
    const result = walkStack(
      registry.snapshot(),
      memory,
      [
        { sp: spA, ra: 0x2000, boundaryRa: 0x7000, registers: RegisterContext.from({ rbx: 1 }, X86_64) },
        { sp: spB, ra: 0x2000, boundaryRa: 0x7100, registers: RegisterContext.from({ rbx: 2 }, X86_64) },
      ],
      { mode: "strict" },
    );
    expect(result.frames.map((f) => [f.sp - BASE, f.ra])).toEqual([
      [0x100, 0x2000],
      [0x118, 0x3000],
      [0x800, 0x2000],
    ]);
    expect(result.roots.map((r) => r.value)).toEqual([0x5000_0000, 0x5000_0010, 0x5100_0000, 0x5200_0000, 0x5200_0040]);
    expect(result.stopReason).toBe("boundary");
    expect(memory.reads.filter((a) => a >= NATIVE.from && a < NATIVE.to)).toEqual([]);
  });

  it("without the chunk list, the first native return address is a typed error naming it", () => {
    expect(() => walkStack(registry.snapshot(), memory, { sp: spA, ra: 0x2000 }, { mode: "strict" })).toThrow(
      /frame #2 at 0x7000: return address 0x7000 .* has no safepoint; likely cause: a call from code without a stack map/,
    );
    const lenient = walkStack(registry.snapshot(), memory, { sp: spA, ra: 0x2000 }, { mode: "lenient" });
    expect(lenient.stopReason).toBe("unknown-return-address");
    expect(lenient.frames).toHaveLength(2);
  });

  it("a depth limit and a stuck stack end the walk with a typed error", () => {
    const loop = new SimulatedMemory(BASE, 0x1000);
    // A frame whose return address slot holds its own return address and an SP that does not move:
    // frame size 0 is impossible (the slot would be SP itself), so build a self-cycle of two frames.
    const cyc = syntheticRegistry([{ ra: 0x2000, frameSizeBytes: 0, pairs: [] }]);
    for (let a = BASE; a < BASE + 0x1000; a += 8) loop.writeWord(a, 0x2000);
    expect(() => walkStack(cyc.snapshot(), loop, { sp: BASE + 8, ra: 0x2000 }, { mode: "strict", maxDepth: 100 })).toThrow(/100 frames|outside the stack/);
  });
});
