import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { findLlvmTool, repoRoot, runTool } from "../../../src/toolchain/llvm-toolchain.js";
import {
  CALLEE_SAVED_NAMES,
  NATIVE_STOP_VARIANTS,
  captureNativeStop,
  isObjectPointer,
  oracleRoots,
  readStopWord,
  type NativeStop,
  type NativeStopVariant,
  type OracleFrame,
} from "./native-stop.js";

/**
 * Sanity of the native-stop producer's own output (not of the walker):
 * - the program ran to completion (exit 0) and gdb saw the same stop the handler recorded;
 * - gdb's unwind names the chain's functions, and every frame's return address is where the
 *   x86-64 call put it: for gdb frame k (innermost managed frame k = 0), pc_k is the return
 *   address INTO frame k, which its callee's `call` pushed at the callee's entry SP, i.e. at
 *   sp_k - 8 (sp_k = the callee's CFA). So word[sp_k - 8] === pc_k for every k, and also for the
 *   rw_enter boundary frame (word[boundary.sp - 8] === boundaryRa);
 * - the objects show the feature each variant exists for (pushed args, CSR roots, dynamic frame);
 * - reading each frame's statepoint record with gdb's registers gives exactly object pointers,
 *   including the roots the IR uses after each call.
 */

const UINT64_MAX = 18446744073709551615n;

const stops = new Map<NativeStopVariant, NativeStop>();
const oracles = new Map<NativeStopVariant, OracleFrame[]>();

function stopOf(variant: NativeStopVariant): NativeStop {
  const stop = stops.get(variant);
  if (stop === undefined) throw new Error(`no stop captured for ${variant}`);
  return stop;
}

beforeAll(() => {
  for (const variant of NATIVE_STOP_VARIANTS) {
    const stop = captureNativeStop(variant);
    stops.set(variant, stop);
    oracles.set(variant, oracleRoots(stop));
  }
});

/** The function's disassembly from `llvm-objdump -d`, one instruction text per line. */
function disassembly(objectPath: string, functionName: string): string[] {
  const text = runTool(findLlvmTool("llvm-objdump"), ["-d", "--no-show-raw-insn", objectPath]);
  const start = text.indexOf(`<${functionName}>:\n`);
  if (start < 0) throw new Error(`${functionName} not in objdump output`);
  const body = text.slice(start).split("\n\n")[0] ?? "";
  return body
    .split("\n")
    .slice(1)
    .map((line) => /^\s*[0-9a-f]+:\s+(.*)$/.exec(line)?.[1]?.trim() ?? "")
    .filter((line) => line !== "");
}

describe.each(NATIVE_STOP_VARIANTS)("native stop %s", (variant) => {
  it("ran to completion under gdb, and natively", () => {
    const stop = stopOf(variant);
    expect(stop.exitCode).toBe(0);
    // Also outside gdb (ASLR on): the program must not depend on gdb's environment.
    const runs = join(repoRoot(), ".cache", "native-stop", "runs");
    mkdirSync(runs, { recursive: true });
    const snapshot = join(runs, `native-${variant}-${process.pid}.json`);
    try {
      const result = spawnSync(stop.executable, [snapshot], { encoding: "utf8" });
      expect(result.stderr).toBe("");
      expect(result.status).toBe(0);
    } finally {
      rmSync(snapshot, { force: true });
    }
  });

  it("gdb's frames are the managed chain, innermost first, and match the snapshot", () => {
    const stop = stopOf(variant);
    expect(stop.gdbFrames.map((frame) => frame.name)).toEqual(stop.info.frames);
    expect(stop.gdbFrames.length).toBeGreaterThanOrEqual(3);
    const innermost = stop.gdbFrames[0];
    expect(innermost?.pc).toBe(stop.ra);
    expect(innermost?.sp).toBe(stop.sp);
    // At the stop, frame 0's callee-saved registers are the live ones the trampoline saved.
    for (const name of CALLEE_SAVED_NAMES) expect(innermost?.registers[name]).toBe(stop.exactRegisters[name]);
    expect(stop.boundaryFrame.name).toBe("rw_enter");
    expect(stop.boundaryFrame.pc).toBe(stop.boundaryRa);
    // Frames grow toward higher addresses strictly.
    const sps = [...stop.gdbFrames.map((frame) => frame.sp), stop.boundaryFrame.sp];
    for (let k = 1; k < sps.length; k += 1) expect(sps[k] as number).toBeGreaterThan(sps[k - 1] as number);
  });

  it("memory covers every frame, and [sp_k - 8] holds pc_k (the return address into frame k)", () => {
    const stop = stopOf(variant);
    const chunk = stop.memory[0];
    expect(stop.memory).toHaveLength(1);
    expect(chunk?.base).toBe(stop.sp - 256);
    expect((chunk?.base ?? 0) + (chunk?.bytes.byteLength ?? 0)).toBe(stop.stackTop);
    for (const frame of [...stop.gdbFrames, stop.boundaryFrame]) {
      expect(frame.sp).toBeGreaterThanOrEqual(stop.sp);
      expect(frame.sp).toBeLessThan(stop.stackTop);
      expect(readStopWord(stop, frame.sp - 8)).toBe(BigInt(frame.pc));
    }
    expect(stop.objects).toHaveLength(4);
    for (const object of stop.objects) expect(object % 64).toBe(0);
  });

  it("each frame's statepoint roots (read with gdb's registers) are object pointers, including the expected ones", () => {
    const stop = stopOf(variant);
    const oracle = oracles.get(variant) ?? [];
    expect(oracle.map((frame) => frame.name)).toEqual(stop.info.frames);
    for (const [index, frame] of oracle.entries()) {
      expect(frame.roots.length, `${frame.name} has roots`).toBeGreaterThan(0);
      for (const root of frame.roots) {
        expect(isObjectPointer(stop, root.base), `${frame.name} base 0x${root.base.toString(16)}`).toBe(true);
        expect(stop.objects).toContain(root.base);
        expect(isObjectPointer(stop, root.derived), `${frame.name} derived 0x${root.derived.toString(16)}`).toBe(true);
      }
      const expected = stop.expectedRoots[index];
      expect(expected?.name).toBe(frame.name);
      for (const pair of expected?.mustInclude ?? []) expect(frame.roots).toContainEqual(pair);
      expect(frame.stackSize === UINT64_MAX).toBe(stop.info.dynamicFrames.includes(frame.name));
      expect(frame.locations.some((text) => text.startsWith("Register R#"))).toBe(stop.info.csrRootFrames.includes(frame.name));
    }
  });
});

describe("variant features in the compiled objects", () => {
  it("chain-args: rw_args_f1 pushes stack arguments right before its call, and keeps a derived pointer", () => {
    const stop = stopOf("chain-args");
    const code = disassembly(stop.object, "rw_args_f1");
    const call = code.findIndex((line) => line.startsWith("callq"));
    expect(call).toBeGreaterThan(0);
    expect(code[call - 1]).toMatch(/^pushq\s/);
    expect(code.filter((line) => /^pushq\s/.test(line)).length).toBeGreaterThanOrEqual(2);
    const f1 = oracles.get("chain-args")?.find((frame) => frame.name === "rw_args_f1");
    expect(f1?.roots.some((root) => root.derived !== root.base)).toBe(true);
    // The pushed-args frame is an OUTER frame at the stop.
    expect(stop.gdbFrames.findIndex((frame) => frame.name === "rw_args_f1")).toBeGreaterThan(0);
  });

  it("chain-csr: statepoint records hold GC roots in callee-saved registers, outer frames included", () => {
    const stop = stopOf("chain-csr");
    const text = runTool(findLlvmTool("llvm-readobj"), ["--stackmap", stop.object]);
    expect(text).toMatch(/Register R#(3|12|13|14|15),/);
    const outer = oracles.get("chain-csr")?.slice(1) ?? [];
    expect(outer.some((frame) => frame.locations.some((l) => l.startsWith("Register R#")))).toBe(true);
  });

  it("chain-dynamic: a middle frame has StackSize UINT64_MAX", () => {
    const stop = stopOf("chain-dynamic");
    const text = runTool(findLlvmTool("llvm-readobj"), ["--stackmap", stop.object]);
    expect(text).toContain("stack size: 18446744073709551615");
    const index = stop.gdbFrames.findIndex((frame) => frame.name === "rw_dyn_f2");
    expect(index).toBeGreaterThan(0);
    expect(index).toBeLessThan(stop.gdbFrames.length - 1);
  });

  it("chain-fp: every managed function sets up a frame pointer", () => {
    const stop = stopOf("chain-fp");
    for (const name of stop.info.frames) {
      expect(disassembly(stop.object, name).slice(0, 2)).toEqual(["pushq\t%rbp", "movq\t%rsp, %rbp"]);
    }
  });
});
