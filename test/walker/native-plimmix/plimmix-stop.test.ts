import { X86_64 } from "../../../src/arch/x86-64.js";
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { STT_FUNC } from "../../../src/elf/elf-constants.js";
import { ElfFile } from "../../../src/elf/elf-file.js";
import { MalformedInputError, RootwalkError, TruncatedInputError, UnsupportedInputError } from "../../../src/errors.js";
import { loadPlimmixFromElf, registerPlimmixBytes } from "../../../src/loader/plimmix-loader.js";
import { registerPlimmixFile } from "../../../src/loader/register-maps.js";
import { RangedMemory } from "../../../src/memory/memory.js";
import { FLAG_NO_UNWIND_INFO } from "../../../src/safepoints/frame-descriptors.js";
import { SafepointRegistry } from "../../../src/safepoints/registry.js";
import { PlimmixRootType, parsePlimmixBlob, plimmixMapLength, type PlimmixMap } from "../../../src/stackmap/plimmix-map.js";
import { findLlvmTool, runTool } from "../../../src/toolchain/llvm-toolchain.js";
import { RegisterContext } from "../../../walker/register-context.js";
import { relocateRootPairs } from "../../../walker/relocate-roots.js";
import { walkStack, type WalkResult } from "../../../walker/walk-stack.js";
import {
  GLOBAL_ROOT_OBJECT,
  PLIMMIX_CHAIN,
  PLIMMIX_MODULES,
  STACK_ARGS_CALLER,
  capturePlimmixStop,
  hasGdb,
  type Piece,
  type PlimmixStop,
} from "./plimmix-stop.js";

/*
 * `_GC_MAP_` end to end, on a real run: two plimmix modules register their maps with gc_init at
 * start; at a safepoint four frames deep (A -> B -> A -> B) the harness snapshots the stack, the
 * registers and, from each gc_init pointer, the live bytes up to the end of .data. The test finds
 * each map's length from the bare pointer (plimmixMapLength), registers the live bytes WITHOUT
 * unwind info (so the walker climbs by the recorded frame sizes alone), walks strictly to the
 * native boundary and checks every root against what the program stored.
 */

let stop: PlimmixStop;
let elf: ElfFile;

beforeAll(() => {
  stop = capturePlimmixStop();
  elf = ElfFile.parse(readFileSync(stop.executable));
});

function symbol(name: string): { value: number; size: number } {
  const found = elf.symbols().find((s) => s.name === name && s.definedSectionIndex !== undefined);
  if (found === undefined) throw new Error(`no symbol ${name} in ${stop.executable}`);
  return found;
}

/** The function (STT_FUNC symbol) containing `address`. */
function functionAt(address: number): string | undefined {
  return elf.symbols().find((s) => s.type === STT_FUNC && s.size > 0 && address >= s.value && address < s.value + s.size)?.name;
}

function hex(value: number): string {
  return `0x${value.toString(16)}`;
}

interface LiveMap {
  address: number;
  /** What plimmixMapLength found from the bare pointer. */
  length: number;
  /** The copy of the live bytes, `length` long (what gets registered). */
  bytes: Uint8Array;
  map: PlimmixMap;
}

/** From each gc_init pointer: the length by walking the counts in live memory, then the copy. */
function liveMaps(s: PlimmixStop): LiveMap[] {
  return s.maps.map((piece: Piece) => {
    const memory = RangedMemory.fromPieces([piece]);
    const length = plimmixMapLength((a) => memory.readWordBigInt(a), piece.base, piece.bytes.byteLength);
    const bytes = piece.bytes.slice(0, length);
    return { address: piece.base, length, bytes, map: parsePlimmixBlob(bytes) };
  });
}

/** Registers every live map as gc_init would: bytes only, no unwind info, load bias 0. */
function registerLive(s: PlimmixStop): { registry: SafepointRegistry; handles: number[]; maps: LiveMap[] } {
  const registry = new SafepointRegistry();
  const maps = liveMaps(s);
  const handles = maps.map((m) => registerPlimmixBytes(registry, m.bytes, { name: `gc_init@${hex(m.address)}` }));
  return { registry, handles, maps };
}

function walk(s: PlimmixStop, registry: SafepointRegistry): { result: WalkResult; memory: RangedMemory; registers: RegisterContext } {
  const memory = RangedMemory.fromPieces(s.memory);
  const registers = RegisterContext.from(s.registers, X86_64);
  const result = walkStack(registry.snapshot(), memory, [{ sp: s.sp, ra: s.ra, registers, boundaryRa: s.boundaryRa }], { mode: "strict" });
  return { result, memory, registers };
}

/** Function index in `map` of the record whose safepoints include `ra`. */
function functionOfSafepoint(map: PlimmixMap, ra: number): number {
  for (let f = 0; f < map.numFunctions; f++) {
    for (let s = 0; s < map.numSafepointsOf(f); s++) if (map.safepointAddress(f, s) === ra) return f;
  }
  return -1;
}

/** The map (by module source name) and function record of a walked frame's return address. */
function recordOf(maps: LiveMap[], ra: number): { module: string; map: PlimmixMap; f: number } {
  for (const [index, live] of maps.entries()) {
    const f = functionOfSafepoint(live.map, ra);
    if (f >= 0) return { module: PLIMMIX_MODULES[index] ?? "?", map: live.map, f };
  }
  throw new Error(`no live map has a safepoint at ${hex(ra)}`);
}

describe("gc_init: each module registers its own _GC_MAP_ label", () => {
  it("two distinct pointers from three calls (the repeat is ignored), and they are the two labels", () => {
    expect(stop.gcInitCalls).toBe(3);
    expect(stop.maps.map((m) => m.base)).toEqual(PLIMMIX_MODULES.map((name) => symbol(`_GC_MAP_${name}`).value));
    expect(new Set(stop.maps.map((m) => m.base)).size).toBe(2);
  });

  it("plimmixMapLength finds each map's end from the bare pointer; the live bytes are the linked file's map", () => {
    const live = liveMaps(stop);
    const file = loadPlimmixFromElf(readFileSync(stop.executable), stop.executable);
    expect(file?.modules.map((m) => m.sourceName)).toEqual([...PLIMMIX_MODULES]);
    live.forEach((m, index) => {
      const name = PLIMMIX_MODULES[index] ?? "?";
      // The dump was a bound (to the end of .data), the map is shorter: its label's .size.
      expect(m.length, name).toBe(symbol(`_GC_MAP_${name}`).size);
      expect(m.length, name).toBeLessThanOrEqual(stop.maps[index]?.bytes.byteLength ?? 0);
      expect(m.map.version).toBe(1);
      expect(m.bytes, name).toEqual(file?.maps[index]?.view.bytes);
    });
    // Module A's map is followed by B's: there the bound is strictly larger than the map.
    expect(live[0]!.length).toBeLessThan(stop.maps[0]!.bytes.byteLength);
  });

  it("registering both live maps gives two modules; registering the same bytes again is the same module", () => {
    const { registry, handles, maps } = registerLive(stop);
    expect(new Set(handles).size).toBe(2);
    expect(registry.snapshot().modules.size).toBe(2);
    const before = registry.snapshot().safepointCount;
    expect(before).toBe(maps.reduce((n, m) => n + m.map.numSafepoints, 0));
    expect(registerPlimmixBytes(registry, maps[0]!.bytes, { name: "gc_init again" })).toBe(handles[0]);
    expect(registry.snapshot().safepointCount).toBe(before);
  });

  it("module B's global root is listed by address and holds the object the program stored", () => {
    const maps = liveMaps(stop);
    const b = maps[1]!.map;
    expect(b.numGlobals).toBe(1);
    expect(b.globalAddress(0)).toBe(symbol("pb_global_root").value);
    expect(stop.globalRoot.address).toBe(b.globalAddress(0));
    expect(stop.globalRoot.value).toBe(stop.objects[GLOBAL_ROOT_OBJECT]);
    expect(maps[0]!.map.numGlobals).toBe(0);
  });
});

describe("the walk, by the recorded frame sizes only", () => {
  it("every safepoint of the live registration has no unwind info: the recorded size is the frame", () => {
    const { registry, maps } = registerLive(stop);
    const snapshot = registry.snapshot();
    for (const live of maps) {
      for (let f = 0; f < live.map.numFunctions; f++) {
        for (let s = 0; s < live.map.numSafepointsOf(f); s++) {
          const hit = snapshot.lookup(live.map.safepointAddress(f, s));
          expect(hit).toBeDefined();
          const flags = hit!.module.descriptors.flags[hit!.index]!;
          expect(flags & FLAG_NO_UNWIND_INFO).toBe(FLAG_NO_UNWIND_INFO);
          expect(hit!.module.descriptors.frameSizeBytes[hit!.index]).toBe(live.map.frameSizeBytes(f));
        }
      }
    }
  });

  it("climbs the chain A -> B -> A -> B, one frame per function, to the rw_enter boundary", () => {
    const { registry, maps } = registerLive(stop);
    const { result } = walk(stop, registry);
    expect(result.stopReason).toBe("boundary");
    expect(result.stoppedAt).toBe(stop.boundaryRa);
    expect(result.frames).toHaveLength(PLIMMIX_CHAIN.length);
    expect(result.frames[0]?.sp).toBe(stop.sp);
    expect(result.frames[0]?.ra).toBe(stop.ra);
    result.frames.forEach((frame, k) => {
      const expected = PLIMMIX_CHAIN[k]!;
      expect(functionAt(frame.ra), `frame ${k}`).toBe(expected.name);
      const rec = recordOf(maps, frame.ra);
      expect(rec.module, expected.name).toBe(expected.module);
      expect(rec.map.functionAddress(rec.f)).toBe(symbol(expected.name).value);
      expect(rec.map.stackArgCount(rec.f), expected.name).toBe(expected.stackArgs);
      expect(rec.map.hasDynamicFrame(rec.f)).toBe(false);
      // The caller's SP is this frame's SP + recorded size + the return address.
      const next = result.frames[k + 1];
      const callerSp = frame.sp + rec.map.frameSizeBytes(rec.f) + 8;
      if (next !== undefined) expect(next.sp, expected.name).toBe(callerSp);
      else expect(RangedMemory.fromPieces(stop.memory).readWord(callerSp - 8)).toBe(stop.boundaryRa);
    });
  });

  it("every POINTER root holds the value the program stored (null included); ATOMIC roots are not reported", () => {
    const { registry, maps } = registerLive(stop);
    const { result, memory } = walk(stop, registry);
    const atomicMarkers = PLIMMIX_CHAIN.map((frame) => frame.atomicValue);
    result.frames.forEach((frame, k) => {
      const expected = PLIMMIX_CHAIN[k]!;
      const rec = recordOf(maps, frame.ra);
      const frameEnd = frame.sp + rec.map.frameSizeBytes(rec.f);
      const ours = result.roots.filter((r) => r.frame === k);
      const onStack = ours.filter((r) => r.slot >= frame.sp && r.slot < frameEnd);
      const want = expected.pointerRoots.map((object) => (object === null ? 0 : stop.objects[object]!));
      expect(
        onStack.map((r) => r.value).sort((x, y) => x - y),
        expected.name,
      ).toEqual([...want].sort((x, y) => x - y));
      expect(ours, expected.name).toHaveLength(want.length + (expected.traitTarget === undefined ? 0 : 1));
      for (const r of ours) expect(r.baseSlot).toBe(r.slot);

      // The map does list the ATOMIC root, the slot does hold the program's marker, and no
      // reported root is that slot or that value.
      const atomicSlots: number[] = [];
      for (let r = 0; r < rec.map.numRootsOf(rec.f); r++) {
        if (rec.map.rootType(rec.f, r) === PlimmixRootType.Atomic) atomicSlots.push(frame.sp + rec.map.rootOffsetBytes(rec.f, r));
      }
      expect(atomicSlots, expected.name).toHaveLength(1);
      expect(memory.readWord(atomicSlots[0]!), expected.name).toBe(expected.atomicValue);
      for (const r of ours) {
        expect(atomicSlots).not.toContain(r.slot);
        expect(atomicMarkers).not.toContain(r.value);
      }
    });
    expect(result.roots).toHaveLength(PLIMMIX_CHAIN.reduce((n, f) => n + f.pointerRoots.length + (f.traitTarget === undefined ? 0 : 1), 0));
  });

  it("the TRAIT root resolves to the heap-pointer slot at +8 of the cell, which holds the object", () => {
    const { registry, maps } = registerLive(stop);
    const { result, memory } = walk(stop, registry);
    const k = PLIMMIX_CHAIN.findIndex((frame) => frame.traitTarget !== undefined);
    const frame = result.frames[k]!;
    const traits = result.roots.filter((r) => r.frame === k && r.slot === stop.traitCell + 8);
    expect(traits).toEqual([{ slot: stop.traitCell + 8, value: stop.objects[PLIMMIX_CHAIN[k]!.traitTarget!], baseSlot: stop.traitCell + 8, frame: k }]);
    // The frame's TRAIT slot (on the stack) holds the cell's address, which is not itself reported.
    const rec = recordOf(maps, frame.ra);
    const traitRoots = [...Array(rec.map.numRootsOf(rec.f)).keys()].filter((r) => rec.map.rootType(rec.f, r) === PlimmixRootType.Trait);
    expect(traitRoots).toHaveLength(1);
    const stackSlot = frame.sp + rec.map.rootOffsetBytes(rec.f, traitRoots[0]!);
    expect(memory.readWord(stackSlot)).toBe(stop.traitCell);
    expect(result.roots.some((r) => r.slot === stackSlot)).toBe(false);
    // No other frame has a TRAIT root.
    expect(result.roots.filter((r) => r.slot === stop.traitCell + 8)).toHaveLength(1);
  });

  it("the call with 8 arguments: stored into the reserved call frame (no pushes), read back at the caller's SP", () => {
    const { registry } = registerLive(stop);
    const { result, memory } = walk(stop, registry);
    const k = PLIMMIX_CHAIN.findIndex((frame) => frame.name === STACK_ARGS_CALLER);
    const callee = PLIMMIX_CHAIN[k - 1]!;
    expect(callee.stackArgs).toBe(2);
    // pa_deep(1, 2, 3, 4, 5, 6, O4, O5): its 7th and 8th arguments at pb_mid's SP and SP + 8.
    const sp = result.frames[k]!.sp;
    expect(memory.readWord(sp)).toBe(stop.objects[callee.pointerRoots[0]!]);
    expect(memory.readWord(sp + 8)).toBe(stop.objects[callee.pointerRoots[1]!]);
    // The plugin's -no-x86-call-frame-opt: no push between the prologue's `sub` and the epilogue.
    const text = runTool(findLlvmTool("llvm-objdump"), ["-d", "--no-show-raw-insn", `--disassemble-symbols=${STACK_ARGS_CALLER}`, stop.executable]);
    const code = text
      .split("\n")
      .map((line) => /^\s*[0-9a-f]+:\s+(.*)$/.exec(line)?.[1]?.trim() ?? "")
      .filter((line) => line !== "");
    const sub = code.findIndex((line) => /^subq\s+\$(?:0x[0-9a-f]+|\d+), %rsp/.test(line));
    const add = code.findIndex((line) => /^addq\s+\$(?:0x[0-9a-f]+|\d+), %rsp/.test(line));
    expect(sub).toBeGreaterThan(0);
    expect(add).toBeGreaterThan(sub);
    const body = code.slice(sub + 1, add);
    expect(body.some((line) => /^callq\s/.test(line) && line.includes("<pa_deep>"))).toBe(true);
    expect(body.filter((line) => /^push/.test(line))).toEqual([]);
  });

  it("relocation rewrites every root slot (stack slots and the TRAIT cell's +8) and nothing else", () => {
    const { registry } = registerLive(stop);
    const { result, memory } = walk(stop, registry);
    const shift = 0x1000_0000;
    const expected = new Map<number, number>();
    for (const r of result.roots) if (r.value !== 0) expected.set(r.slot, r.value + shift);
    relocateRootPairs(result.pairs, memory, result.contexts, (old) => old + shift);
    const changed = new Map<number, number>();
    for (const piece of stop.memory) {
      const before = RangedMemory.fromPieces([piece]);
      for (let at = piece.base; at + 8 <= piece.base + piece.bytes.byteLength; at += 8) {
        const value = memory.readWordBigInt(at);
        if (value !== before.readWordBigInt(at)) changed.set(at, Number(value));
      }
    }
    expect(changed).toEqual(expected);
    expect(changed.has(stop.traitCell + 8)).toBe(true);
    expect(changed.size).toBe(result.roots.filter((r) => r.value !== 0).length);
    // The null root stayed null.
    expect(result.roots.some((r) => r.value === 0 && memory.readWord(r.slot) === 0)).toBe(true);
  });
});

describe("cross-checks of the frame-size walk", () => {
  it("the executable's maps with .eh_frame give the same frames and roots", () => {
    const live = registerLive(stop);
    const ours = walk(stop, live.registry).result;
    const registry = new SafepointRegistry();
    registerPlimmixFile(registry, readFileSync(stop.executable), { path: stop.executable });
    const theirs = walk(stop, registry).result;
    expect(theirs.frames.map((f) => ({ sp: f.sp, ra: f.ra }))).toEqual(ours.frames.map((f) => ({ sp: f.sp, ra: f.ra })));
    expect(theirs.frames.map((f) => f.functionName)).toEqual(PLIMMIX_CHAIN.map((f) => f.name));
    expect(theirs.roots).toEqual(ours.roots);
  });

  it.skipIf(!hasGdb())("under gdb: the walker's frames are gdb's frames", () => {
    const underGdb = capturePlimmixStop({ gdb: true });
    const { registry } = registerLive(underGdb);
    const { result } = walk(underGdb, registry);
    expect(underGdb.gdb?.frames.map((f) => f.name)).toEqual(PLIMMIX_CHAIN.map((f) => f.name));
    expect(result.frames.map((f) => ({ pc: f.ra, sp: f.sp }))).toEqual(underGdb.gdb?.frames.map((f) => ({ pc: f.pc, sp: f.sp })));
    expect(underGdb.gdb?.boundary.name).toBe("rw_enter");
    expect(underGdb.gdb?.boundary.pc).toBe(result.stoppedAt);
  });
});

describe("a corrupted copy of a live map", () => {
  function corrupt(index: number, at: number, value: number): Uint8Array {
    const bytes = liveMaps(stop)[index]!.bytes.slice();
    new DataView(bytes.buffer).setInt32(at, value, true);
    return bytes;
  }

  function rejection(bytes: Uint8Array): RootwalkError {
    const registry = new SafepointRegistry();
    let caught: unknown;
    try {
      registerPlimmixBytes(registry, bytes, { name: "corrupt" });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(RootwalkError);
    expect(registry.snapshot().safepointCount).toBe(0);
    return caught as RootwalkError;
  }

  it("a changed version is a typed error at offset 0x0", () => {
    const unsupported = rejection(corrupt(0, 0, 2));
    expect(unsupported).toBeInstanceOf(UnsupportedInputError);
    expect((unsupported as UnsupportedInputError).offset).toBe(0);
    expect(unsupported.message).toMatch(/_GC_MAP_ version at offset 0x0: found 2/);
    const malformed = rejection(corrupt(1, 0, 0));
    expect(malformed).toBeInstanceOf(MalformedInputError);
    expect(malformed.message).toMatch(/at offset 0x0: found 0/);
  });

  it("a root type out of range names the root's type field", () => {
    const live = liveMaps(stop)[1]!;
    const at = live.map.rootFieldOffset(0, 0) + 4;
    const error = rejection(corrupt(1, at, 9));
    expect(error).toBeInstanceOf(MalformedInputError);
    expect((error as MalformedInputError).offset).toBe(at);
    expect(error.message).toContain(`at offset ${hex(at)}: found 9`);
  });

  it("a function count the bound cannot hold: plimmixMapLength on live memory stops at the bound", () => {
    const piece = stop.maps[0]!;
    const bytes = piece.bytes.slice();
    new DataView(bytes.buffer).setInt32(8, 1000, true);
    const memory = RangedMemory.fromPieces([{ base: piece.base, bytes }]);
    let caught: unknown;
    try {
      plimmixMapLength((a) => memory.readWordBigInt(a), piece.base, bytes.byteLength);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(TruncatedInputError);
    expect((caught as TruncatedInputError).offset).toBe(16);
  });
});
