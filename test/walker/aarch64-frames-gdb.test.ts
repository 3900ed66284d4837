import { locationDwarfReg, LocationKind, locationKind } from "../../src/location/location-word.js";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AARCH64 } from "../../src/arch/aarch64.js";
import { loadObjectStackMaps } from "../../src/loader/object-file.js";
import { type FrameDescriptors } from "../../src/safepoints/frame-descriptors.js";
import { registerFile } from "../../src/loader/register-maps.js";
import { SimulatedMemory } from "../../src/memory/memory.js";
import { SafepointRegistry } from "../../src/safepoints/registry.js";
import { walkStack } from "../../walker/walk-stack.js";
import { compileCorpusEntry, corpusEntry } from "../ll/corpus.js";
import { run } from "../support/run-cli.js";

/*
 * AArch64 frames as rootwalk decodes them, against a live stack: the call-chain corpus entries
 * (main -> chain_f0 -> chain_f1 -> chain_f2 -> gc_safepoint_poll), built with llc for AArch64 and
 * linked statically with a C harness by the cross gcc, stop under qemu-aarch64 at
 * gc_safepoint_poll; gdb-multiarch (the ground truth) prints each frame's SP, PC, CFA ("frame
 * at"), saved registers and saved PC, and dumps the stack. For every chain frame, rootwalk's
 * descriptor at that PC must give: CFA = SP + frame size; each saved register (x19-x30) at the
 * address gdb names; the caller's PC in the x30 save slot (the return-address column's rule), the
 * caller's SP = the CFA; and roots whose values are the harness's objects.
 *
 * Then the walker walks the dumped stack itself (cross-checked) and must give gdb's frames and
 * the same roots; test/walker/aarch64-core.test.ts checks its walk of AArch64 cores against gdb.
 */

const HARNESS = `#include <stdio.h>
#include <stdint.h>
int64_t chain_f0(int64_t *a, int64_t *b, int64_t *c);
int64_t A[2] = {1, 2}, B[2] = {3, 4}, C[2] = {5, 6};
volatile int polls;
__attribute__((noinline)) void gc_safepoint_poll(void) { polls++; }
int main(void) {
  printf("%ld\\n", (long)chain_f0(A, B, C));
  return 0;
}
`;
const STACK_DUMP_BYTES = 1024;

interface GdbFrame {
  sp: number;
  pc: number;
  cfa: number;
  savedPc: number;
  saved: Map<string, number>;
}

/** Runs `program` under qemu-aarch64 -g and gdb-multiarch to gc_safepoint_poll; frames 1..3 and the stack. */
async function stopAtPoll(dir: string, program: string): Promise<{ frames: GdbFrame[]; stack: Buffer; stackBase: number; objects: number[] }> {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const qemu = spawn("qemu-aarch64", ["-g", String(port), program], { stdio: "ignore" });
  try {
    await new Promise((r) => setTimeout(r, 300));
    const perFrame = [1, 2, 3].flatMap((k) => ["-ex", `frame ${k}`, "-ex", "info frame", "-ex", 'printf "SP=%lx PC=%lx\\n", $sp, $pc']);
    const stackFile = join(dir, "stack.bin");
    const text = execFileSync(
      "gdb-multiarch",
      [
        "-q",
        "-batch",
        "-ex",
        `target remote :${port}`,
        "-ex",
        "break gc_safepoint_poll",
        "-ex",
        "continue",
        ...perFrame,
        "-ex",
        "frame 1",
        "-ex",
        `dump binary memory ${stackFile} $sp $sp+${STACK_DUMP_BYTES}`,
        "-ex",
        'printf "BASE=%lx\\n", $sp',
        "-ex",
        'printf "OBJ=%lx %lx %lx\\n", &A, &B, &C',
        "-ex",
        "kill",
        program,
      ],
      { encoding: "utf8", timeout: 60_000 },
    );
    const frames = text
      .split(/^Stack level /m)
      .slice(1)
      .map((chunk): GdbFrame => {
        const saved = new Map<string, number>();
        for (const m of chunk.matchAll(/\b(x\d+) at 0x([0-9a-f]+)/g)) saved.set(m[1]!, parseInt(m[2]!, 16));
        return {
          cfa: parseInt(/frame at 0x([0-9a-f]+)/.exec(chunk)![1]!, 16),
          savedPc: parseInt(/saved pc = 0x([0-9a-f]+)/.exec(chunk)![1]!, 16),
          sp: parseInt(/SP=([0-9a-f]+)/.exec(chunk)![1]!, 16),
          pc: parseInt(/PC=([0-9a-f]+)/.exec(chunk)![1]!, 16),
          saved,
        };
      });
    const objects = /OBJ=([0-9a-f]+) ([0-9a-f]+) ([0-9a-f]+)/
      .exec(text)!
      .slice(1)
      .map((h) => parseInt(h, 16));
    return { frames, stack: readFileSync(stackFile), stackBase: parseInt(/BASE=([0-9a-f]+)/.exec(text)![1]!, 16), objects };
  } finally {
    qemu.kill();
  }
}

describe.each(["call-chain", "call-chain-frame-pointer"])("AArch64 %s stopped under qemu: rootwalk's frames are gdb-multiarch's", (name) => {
  it("CFA, saved registers, return address and roots of every chain frame", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rootwalk-a64-"));
    const object = compileCorpusEntry(corpusEntry(name), { mtriple: "aarch64-linux-gnu" });
    writeFileSync(join(dir, "harness.c"), HARNESS);
    const program = join(dir, "prog");
    execFileSync("aarch64-linux-gnu-gcc", ["-static", "-O1", join(dir, "harness.c"), object, "-o", program]);
    const { frames, stack, stackBase, objects } = await stopAtPoll(dir, program);
    expect(frames.length).toBe(3);

    // The executable itself: non-PIE, so link-time addresses are run-time addresses.
    const loaded = loadObjectStackMaps(readFileSync(program), program)!;
    const d = loaded.descriptors;
    expect(d.architecture).toBe(AARCH64);
    const word = (address: number): number => Number(stack.readBigUInt64LE(address - stackBase));
    const n = AARCH64.calleeSavedDwarf.length;
    const rootValues = new Set<number>();
    frames.forEach((frame, k) => {
      const i = [...d.returnAddress].indexOf(frame.pc);
      expect(i, `frame ${k + 1}: a safepoint at pc ${frame.pc.toString(16)}`).toBeGreaterThanOrEqual(0);
      const cfa = frame.sp + d.frameSizeBytes[i]!;
      expect(cfa, `frame ${k + 1}: CFA`).toBe(frame.cfa);
      const ours = new Map<string, number>();
      for (let r = 0; r < n; r++) {
        const offset = d.savedRegOffsets[i * n + r]!;
        if (offset !== 0) ours.set(AARCH64.calleeSavedNames[r]!, cfa + offset);
      }
      expect(ours, `frame ${k + 1}: saved registers`).toEqual(frame.saved);
      // Column 30's rule: the caller's PC is in x30's save slot; the caller's SP is the CFA.
      expect(word(ours.get("x30")!), `frame ${k + 1}: return address`).toBe(frame.savedPc);
      if (k + 1 < frames.length) expect(frames[k + 1]!.sp).toBe(cfa);
      for (let p = 0; p < d.pairCount[i]!; p++) {
        const loc = d.pairs[(d.pairStart[i]! + p) * 2 + 1]!;
        const w0 = d.locations[loc * 2]!;
        expect([locationKind(w0), locationDwarfReg(w0)]).toEqual([LocationKind.Indirect, AARCH64.dwarf.sp]);
        rootValues.add(word(frame.sp + d.locations[loc * 2 + 1]!));
      }
    });
    expect(rootValues).toEqual(new Set(objects));

    // The walker itself over the dumped stack, from chain_f2's safepoint to the return into main,
    // cross-checked (no AArch64 frame is fast: the general unwinder takes them all): gdb's
    // frames, SP, PC and CFA, and the roots read above.
    const registry = new SafepointRegistry();
    registerFile(registry, readFileSync(program), { path: program });
    const memory = new SimulatedMemory(stackBase, STACK_DUMP_BYTES);
    for (let at = 0; at < STACK_DUMP_BYTES; at += 8) memory.writeWordBigInt(stackBase + at, stack.readBigUInt64LE(at));
    const walk = walkStack(registry.snapshot(), memory, [{ sp: frames[0]!.sp, ra: frames[0]!.pc, boundaryRa: frames.at(-1)!.savedPc }], {
      mode: "strict",
      crossCheck: true,
    });
    expect(walk.stopReason).toBe("boundary");
    expect(walk.frames.map((f) => [f.sp, f.ra, f.cfa])).toEqual(frames.map((f) => [f.sp, f.pc, f.cfa]));
    expect(new Set(walk.roots.map((r) => r.value))).toEqual(new Set(objects));
    expect(walk.roots.length).toBe(frames.reduce((sum, f) => sum + d.pairCount[[...d.returnAddress].indexOf(f.pc)]!, 0));

    // The same stack as a walk snapshot (docs/snapshot-format.md, architecture AArch64): `rootwalk
    // walk` finds the same roots and stops at the return into main, which is no call site.
    const snapshotPath = join(dir, "snapshot.json");
    writeFileSync(snapshotPath, JSON.stringify(aarch64Snapshot(d, stack, stackBase, frames[0]!)));
    const walked = await run("walk", snapshotPath, "--json");
    expect(walked.code, walked.stderr).toBe(0);
    const out = JSON.parse(walked.stdout) as { roots: { slot: string; value: string }[]; frames: number; stoppedAt: string };
    expect(out.frames).toBe(frames.length);
    expect(out.roots.map((r) => [parseInt(r.slot, 16), parseInt(r.value, 16)])).toEqual(walk.roots.map((r) => [r.slot, r.value]));
    expect(parseInt(out.stoppedAt, 16)).toBe(frames.at(-1)!.savedPc);
    // What an AArch64 snapshot must say, each refused in one line (exit 1).
    const good = aarch64Snapshot(d, stack, stackBase, frames[0]!) as Record<string, unknown>;
    const refusals: [Record<string, unknown>, RegExp][] = [
      [
        { ...good, entrySp: undefined },
        /snapshot field entrySp .*found none, expected the innermost frame's SP \(AArch64: the call pushes no return address\)/,
      ],
      [{ ...good, architecture: "riscv" }, /snapshot field architecture .*found riscv, expected "x86-64" or "AArch64"/],
      [
        { ...good, functions: (good["functions"] as object[]).map((f) => ({ ...f, raCfaOffset: undefined })) },
        /raCfaOffset .*found undefined, expected where it saved x30, a negative offset from its CFA \(AArch64\)/,
      ],
    ];
    for (const [bad, message] of refusals) {
      writeFileSync(snapshotPath, JSON.stringify(bad));
      const r = await run("walk", snapshotPath);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(message);
    }
  });
});

/**
 * A walk snapshot of a stopped AArch64 stack: the dumped stack, each function's frame size and
 * x30 save offset from its descriptors, and the innermost return address (still in the leaf
 * gc_safepoint_poll's x30 at the stop: gdb's pc of frame 1) in a word of its own below the stack.
 */
function aarch64Snapshot(d: FrameDescriptors, stack: Buffer, stackBase: number, innermost: GdbFrame): object {
  const n = AARCH64.calleeSavedDwarf.length;
  const x30 = AARCH64.calleeSavedNames.indexOf("x30");
  const hex = (v: number): string => `0x${v.toString(16)}`;
  const firstSafepoint = (fi: number): number => [...d.functionIndex].indexOf(fi);
  const raWord = Buffer.alloc(8);
  raWord.writeBigUInt64LE(BigInt(innermost.pc));
  return {
    architecture: "AArch64",
    memory: [
      { base: hex(stackBase), hex: stack.toString("hex") },
      { base: hex(stackBase - 16), hex: raWord.toString("hex") },
    ],
    functions: d.functions.map((f, fi) => ({
      name: f.name,
      addr: hex(f.address),
      stackSize: d.frameSizeBytes[firstSafepoint(fi)]!,
      raCfaOffset: d.savedRegOffsets[firstSafepoint(fi) * n + x30]!,
    })),
    callsites: [...d.returnAddress].map((ra, i) => ({
      ra: hex(ra),
      fn: hex(d.functions[d.functionIndex[i]!]!.address),
      rootSpOffsets: Array.from({ length: d.pairCount[i]! }, (_, p) => d.locations[d.pairs[(d.pairStart[i]! + p) * 2 + 1]! * 2 + 1]!),
    })),
    entryRaSlot: hex(stackBase - 16),
    entrySp: hex(innermost.sp),
  };
}
