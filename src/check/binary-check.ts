import { readFileSync } from "node:fs";
import { describeFile } from "../loader/describe-file.js";
import { RootwalkError, withContext } from "../errors.js";
import type { MapDescription } from "../loader/describe-safepoints.js";
import { findLlvmTool, runTool } from "../toolchain/llvm-toolchain.js";
import { activeLlvm, type LlvmSelection } from "../toolchain/llvm-selection.js";
import { COLLECTING_RUNTIME_ENTRY_POINTS } from "./collecting-runtime.js";
import type { CheckFinding } from "./finding-kinds.js";

/**
 * `rootwalk check` on a compiled object or shared library: the weaker check for a user who has
 * only the binary. Every direct call of a function that can collect (the runtime's entry points
 * that can stop for a collection, the names given with --collects, and to a fixed point any
 * function of the file that calls one) must have a safepoint record (LLVM stack map or plimmix
 * map) at its return address; a call without one is a frame the collector cannot walk or update.
 * The machine code says nothing about which values are live, so a helper without a GC strategy
 * that calls the collector holding nothing is reported as well; the report says so.
 *
 * Calls are read from `llvm-objdump -d -r`: the callee of a `.o` call is its PLT32/PC32
 * relocation's symbol, of a linked call the `<name@plt>` or `<name>` objdump prints. Indirect
 * calls are not followed (their target is unknown in the binary).
 */
export interface BinaryCheckOptions {
  collects?: readonly string[];
  llvm?: LlvmSelection;
}

interface DisassembledCall {
  function: string;
  /** Offset of the call instruction in its function. */
  callOffset: number;
  /** Offset of the next instruction (the return address) in the function. */
  returnOffset: number;
  callee: string;
}

export function checkBinary(path: string, options: BinaryCheckOptions = {}): CheckFinding[] {
  const recorded = new Set<string>();
  let maps: MapDescription[];
  try {
    maps = describeFile(readFileSync(path), path);
  } catch (error) {
    throw error instanceof RootwalkError && !error.message.startsWith(path) ? withContext(error, path) : error;
  }
  for (const map of maps) for (const s of map.safepoints) if (s.function !== null) recorded.add(`${s.function}+${s.instructionOffset}`);
  const calls = disassembledCalls(path, options.llvm ?? activeLlvm());
  const collecting = new Set<string>([...COLLECTING_RUNTIME_ENTRY_POINTS, ...(options.collects ?? [])]);
  for (let changed = true; changed;) {
    changed = false;
    for (const call of calls) {
      if (collecting.has(call.callee) && !collecting.has(call.function)) {
        collecting.add(call.function);
        changed = true;
      }
    }
  }
  return calls
    .filter((call) => collecting.has(call.callee) && !recorded.has(`${call.function}+${call.returnOffset}`))
    .map((call) => ({
      kind: "call-without-safepoint" as const,
      file: path,
      function: call.function,
      where: `+0x${call.callOffset.toString(16)}`,
      line: null,
      value: null,
      call: `@${call.callee}`,
    }));
}

const FUNCTION_LINE = /^([0-9a-f]+) <(.+)>:$/;
const INSTRUCTION_LINE = /^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$/;
const RELOCATION_LINE = /^\s+[0-9a-f]+:\s+R_X86_64_(?:PLT32|PC32)\s+(\S+?)(?:[-+]0x[0-9a-f]+)?$/;
const CALL_TARGET = /<([^<>+]+?)(?:@plt)?>\s*$/;

function disassembledCalls(path: string, llvm: LlvmSelection): DisassembledCall[] {
  const text = runTool(findLlvmTool("llvm-objdump", llvm), ["-d", "-r", "--no-show-raw-insn", path]);
  const calls: DisassembledCall[] = [];
  let fn: { name: string; start: number } | undefined;
  let pending: { call: DisassembledCall; address: number } | undefined;
  for (const line of text.split("\n")) {
    const header = FUNCTION_LINE.exec(line);
    if (header !== null) {
      fn = { name: header[2]!, start: parseInt(header[1]!, 16) };
      pending = undefined;
      continue;
    }
    const relocation = RELOCATION_LINE.exec(line);
    if (relocation !== null) {
      if (pending !== undefined) pending.call.callee = relocation[1]!;
      continue;
    }
    const instruction = INSTRUCTION_LINE.exec(line);
    if (instruction === null || fn === undefined) continue;
    const address = parseInt(instruction[1]!, 16);
    if (pending !== undefined) {
      pending.call.returnOffset = address - fn.start;
      if (pending.call.callee !== "") calls.push(pending.call);
      pending = undefined;
    }
    if (!instruction[2]!.startsWith("call") || instruction[3]!.startsWith("*")) continue;
    const target = CALL_TARGET.exec(instruction[3]!);
    pending = { address, call: { function: fn.name, callOffset: address - fn.start, returnOffset: -1, callee: target?.[1] ?? "" } };
  }
  return calls;
}
