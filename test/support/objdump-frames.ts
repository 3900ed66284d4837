import { objdumpDisassembly, readobjStackmap, sectionSizes } from "./llvm-tools.js";

/**
 * An oracle for frame sizes that does not use the stack map: it reads the machine code.
 *
 * From `llvm-objdump -d -r --no-show-raw-insn` (AT&T syntax) it computes, for every instruction
 * of every function, how far RSP is below the function's return-address slot when that
 * instruction starts. At a call this is the *effective frame size at its return address*: with
 * SP = the value right after the call returns, the return-address slot is at SP + size. It is
 * split into
 *
 *   baseBytes      the fixed frame: prologue pushes (RBP, callee-saved registers) and `sub rsp`;
 *                  this is what the stack map's StackSize counts;
 *   pushedArgBytes outgoing stack arguments pushed (and alignment `sub`s) after the prologue
 *                  for a call (X86CallFrameOptimization); StackSize does not count them.
 *
 *   frameSizeBytes = baseBytes + pushedArgBytes
 *
 * Stack pointer effects: `push` +8, `pop` -8, `sub $N,%rsp` +N, `add $N,%rsp` -N (releases
 * pushed arguments first), `lea N(%rsp),%rsp` -N. A push or sub counts as prologue (base) while
 * no outgoing arguments are pending and either nothing is on the frame yet (this also catches
 * shrink-wrapped prologues that start after an early-exit test) or the previous instruction on
 * the path was itself prologue (push reg, sub, `mov %rsp,%rbp`); pushes of immediates or memory
 * are always arguments.
 *
 * Control flow: states propagate along fall-through and direct jumps inside the function (a
 * worklist, first state wins; a disagreeing second state marks the instruction as a conflict,
 * with no size). Blocks reached only indirectly (jump tables, landing pads) are simulated
 * linearly from the post-prologue state, as LLVM lays them out. `ret`, `ud2` and jumps out of the
 * function (tail calls) end a path.
 *
 * A function is `dynamic` if it sets RSP from a register or from RBP (`sub %reg,%rsp`,
 * `mov %reg,%rsp`, `lea -N(%rbp),%rsp`, `and $-N,%rsp`, `leave`): its frame size is not static
 * and is reported as undefined everywhere. `framePointer` means `push %rbp; mov %rsp,%rbp`.
 */

export interface FrameState {
  /** baseBytes + pushedArgBytes; undefined in dynamic functions and at path conflicts. */
  frameSizeBytes: number | undefined;
  /** The fixed part (what StackSize counts); undefined like frameSizeBytes. */
  baseBytes: number | undefined;
  pushedArgBytes: number;
}

export interface ObjdumpCallSite extends FrameState {
  /** Offset of the call instruction, relative to the function start. */
  callOffset: number;
  /** Offset of the instruction after the call (the return address), relative to the function start. */
  returnOffset: number;
  /** The relocation symbol or `<symbol>` objdump names, else the operand text (`*%r11`). */
  target: string;
}

export interface ObjdumpFunction {
  name: string;
  section: string;
  /** Offset of the function's first instruction in its section. */
  startOffset: number;
  /** Bytes up to the next function in the section (or the section end). */
  sizeBytes: number;
  callSites: ObjdumpCallSite[];
  framePointer: boolean;
  dynamic: boolean;
  /** State at the start of each instruction, keyed by offset relative to the function start. */
  frameAt: Map<number, FrameState>;
  /** Offsets (relative) where two control-flow paths arrived with different states. */
  conflicts: number[];
}

interface Instruction {
  address: number;
  /** Address of the next instruction in the section (or the section end). */
  nextAddress: number;
  mnemonic: string;
  operands: string[];
  operandText: string;
  /** Symbol of a relocation applied inside this instruction, without its addend. */
  relocationSymbol: string | undefined;
}

interface RawFunction {
  name: string;
  section: string;
  startOffset: number;
  instructions: Instruction[];
}

type Effect =
  | { kind: "push"; operand: "register" | "immediate" | "memory"; register: string | undefined }
  | { kind: "pop" }
  | { kind: "grow"; bytes: number }
  | { kind: "shrink"; bytes: number }
  | { kind: "dynamic" }
  | { kind: "set-frame-pointer" }
  | { kind: "call"; target: string }
  | { kind: "return" }
  | { kind: "stop" }
  | { kind: "jump"; conditional: boolean; target: number | undefined; external: boolean }
  | { kind: "other" };

/** Splits AT&T operands at top-level commas: "8(%rsp,%rax,8), %rdi" -> two operands. */
function splitOperands(text: string): string[] {
  const operands: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of text) {
    if (char === "(") depth += 1;
    if (char === ")") depth -= 1;
    if (char === "," && depth === 0) {
      operands.push(current.trim());
      current = "";
    } else {
      current += char;
    }
  }
  if (current.trim() !== "") operands.push(current.trim());
  return operands;
}

function parseImmediate(operand: string): number | undefined {
  const match = /^\$(-?(?:0x[0-9a-f]+|\d+))$/i.exec(operand);
  if (match === null) return undefined;
  const text = match[1] as string;
  const negative = text.startsWith("-");
  const magnitude = negative ? text.slice(1) : text;
  const value = magnitude.startsWith("0x") ? Number.parseInt(magnitude.slice(2), 16) : Number.parseInt(magnitude, 10);
  return negative ? -value : value;
}

/** "0x33 <early_exit+0x33>" -> 0x33 */
function parseBranchTarget(operand: string): number | undefined {
  const match = /^(0x[0-9a-f]+|[0-9a-f]+)(?:\s+<[^>]*>)?$/i.exec(operand);
  if (match === null) return undefined;
  const text = match[1] as string;
  return Number.parseInt(text.startsWith("0x") ? text.slice(2) : text, 16);
}

/** Mnemonics that write their last operand (when it is %rsp we cannot follow the value). */
const WRITES_DESTINATION = /^(mov|lea|add|sub|and|or|xor|cmov|xchg|imul|shl|shr|sar|neg|not|inc|dec|adc|sbb)/;

function classify(instruction: Instruction, functionStart: number, functionEnd: number): Effect {
  const base = instruction.mnemonic.replace(/^(rex64|data16|notrack|bnd)\s+/, "");
  const { operands } = instruction;
  const stem = base.replace(/[qlw]$/, "");
  const last = operands[operands.length - 1];
  const first = operands[0];

  if (base === "pushq" || base === "push") {
    const operand = first ?? "";
    if (operand.startsWith("%")) return { kind: "push", operand: "register", register: operand };
    return { kind: "push", operand: operand.startsWith("$") ? "immediate" : "memory", register: undefined };
  }
  if (base === "popq" || base === "pop") return first === "%rsp" ? { kind: "dynamic" } : { kind: "pop" };
  if (base === "callq" || base === "call") {
    const operand = instruction.operandText;
    const named = /<([^>+]+)(?:\+0x[0-9a-f]+)?>/.exec(operand);
    return { kind: "call", target: instruction.relocationSymbol ?? named?.[1] ?? operand };
  }
  if (base === "retq" || base === "ret" || base === "retl") return { kind: "return" };
  if (base === "ud2" || base === "hlt" || base === "int3") return { kind: "stop" };
  if (base === "leave" || base === "leaveq") return { kind: "dynamic" };
  if (base === "jmp" || base === "jmpq") {
    if (first === undefined || first.startsWith("*")) return { kind: "jump", conditional: false, target: undefined, external: true };
    const target = parseBranchTarget(first);
    const external = instruction.relocationSymbol !== undefined || target === undefined || target < functionStart || target >= functionEnd;
    return { kind: "jump", conditional: false, target, external };
  }
  if (/^j[a-z]+$/.test(base)) {
    const target = first === undefined ? undefined : parseBranchTarget(first);
    const external = instruction.relocationSymbol !== undefined || target === undefined || target < functionStart || target >= functionEnd;
    return { kind: "jump", conditional: true, target, external };
  }
  if (last === "%rsp" && operands.length === 2 && first !== undefined) {
    if (stem === "sub" || stem === "add") {
      const immediate = parseImmediate(first);
      if (immediate === undefined) return { kind: "dynamic" }; // sub %rax, %rsp
      const grow = stem === "sub" ? immediate : -immediate;
      return grow >= 0 ? { kind: "grow", bytes: grow } : { kind: "shrink", bytes: -grow };
    }
    if (stem === "lea") {
      // lea N(%rsp), %rsp is a static adjustment; any other base register is not.
      const match = /^(-?(?:0x[0-9a-f]+|\d+))?\(%rsp\)$/i.exec(first);
      if (match === null) return { kind: "dynamic" };
      const text = match[1] ?? "0";
      const negative = text.startsWith("-");
      const magnitude = negative ? text.slice(1) : text;
      const value = magnitude.startsWith("0x") ? Number.parseInt(magnitude.slice(2), 16) : Number.parseInt(magnitude, 10);
      const offset = negative ? -value : value;
      return offset <= 0 ? { kind: "grow", bytes: -offset } : { kind: "shrink", bytes: offset };
    }
    if (WRITES_DESTINATION.test(stem)) return { kind: "dynamic" };
  }
  if (stem === "mov" && first === "%rsp" && last === "%rbp") return { kind: "set-frame-pointer" };
  return { kind: "other" };
}

interface PathState {
  baseBytes: number;
  argBytes: number;
  /** The previous instruction on this path was part of a prologue. */
  afterPrologue: boolean;
}

/** Parses objdump text into functions with their instructions. */
function parseDisassembly(text: string, sectionSizeBytes: ReadonlyMap<string, number>): RawFunction[] {
  const functions: RawFunction[] = [];
  const bySection = new Map<string, Instruction[]>();
  let section = "";
  let current: RawFunction | undefined;
  for (const line of text.split("\n")) {
    const sectionMatch = /^Disassembly of section (\S+):$/.exec(line);
    if (sectionMatch !== null) {
      section = sectionMatch[1] as string;
      current = undefined;
      continue;
    }
    const functionMatch = /^([0-9a-f]+) <(.+)>:$/.exec(line);
    if (functionMatch !== null) {
      current = { name: functionMatch[2] as string, section, startOffset: Number.parseInt(functionMatch[1] as string, 16), instructions: [] };
      functions.push(current);
      continue;
    }
    const relocationMatch = /^\s+([0-9a-f]+):\s+(R_X86_64_\S+)\s+(\S+)$/.exec(line);
    if (relocationMatch !== null) {
      const instruction = current?.instructions[current.instructions.length - 1];
      if (instruction !== undefined) instruction.relocationSymbol = (relocationMatch[3] as string).replace(/[+-]0x[0-9a-f]+$/, "");
      continue;
    }
    const instructionMatch = /^\s*([0-9a-f]+):\s+(\S+)(?:\s+(.*))?$/.exec(line);
    if (instructionMatch !== null && current !== undefined) {
      const operandText = (instructionMatch[3] ?? "").replace(/\s+#.*$/, "").trim();
      const instruction: Instruction = {
        address: Number.parseInt(instructionMatch[1] as string, 16),
        nextAddress: Number.NaN,
        mnemonic: instructionMatch[2] as string,
        operands: splitOperands(operandText),
        operandText,
        relocationSymbol: undefined,
      };
      current.instructions.push(instruction);
      let list = bySection.get(section);
      if (list === undefined) bySection.set(section, (list = []));
      list.push(instruction);
    }
  }
  for (const [name, list] of bySection) {
    for (let index = 0; index < list.length; index += 1) {
      const instruction = list[index] as Instruction;
      instruction.nextAddress = list[index + 1]?.address ?? sectionSizeBytes.get(name) ?? instruction.address + 1;
    }
  }
  return functions;
}

function analyseFunction(raw: RawFunction, endOffset: number): ObjdumpFunction {
  const { instructions } = raw;
  const effects = instructions.map((instruction) => classify(instruction, raw.startOffset, endOffset));
  const indexOfAddress = new Map(instructions.map((instruction, index) => [instruction.address, index]));
  const states: (PathState | undefined)[] = new Array<PathState | undefined>(instructions.length).fill(undefined);
  const conflicts = new Set<number>();
  let framePointer = false;
  let dynamic = false;

  effects.forEach((effect, index) => {
    if (effect.kind === "dynamic") dynamic = true;
    const previous = effects[index - 1];
    if (effect.kind === "set-frame-pointer" && previous?.kind === "push" && previous.register === "%rbp") framePointer = true;
  });

  const step = (effect: Effect, state: PathState): PathState => {
    const inPrologue = state.argBytes === 0 && (state.baseBytes === 0 || state.afterPrologue);
    const release = (bytes: number): PathState => {
      const fromArgs = Math.min(bytes, state.argBytes);
      return { baseBytes: state.baseBytes - (bytes - fromArgs), argBytes: state.argBytes - fromArgs, afterPrologue: false };
    };
    switch (effect.kind) {
      case "push":
        if (effect.operand === "register" && inPrologue) return { ...state, baseBytes: state.baseBytes + 8, afterPrologue: true };
        return { ...state, argBytes: state.argBytes + 8, afterPrologue: false };
      case "grow":
        if (inPrologue) return { ...state, baseBytes: state.baseBytes + effect.bytes, afterPrologue: true };
        return { ...state, argBytes: state.argBytes + effect.bytes, afterPrologue: false };
      case "shrink":
        return release(effect.bytes);
      case "pop":
        return release(8);
      case "set-frame-pointer":
        return { ...state, afterPrologue: true };
      case "dynamic":
        // `andq $-64, %rsp` realigns inside a prologue; the `sub` after it is still prologue.
        return { ...state, afterPrologue: inPrologue };
      default:
        return { ...state, afterPrologue: false };
    }
  };

  const successors = (index: number): number[] => {
    const effect = effects[index] as Effect;
    const next = index + 1 < instructions.length ? [index + 1] : [];
    switch (effect.kind) {
      case "return":
      case "stop":
        return [];
      case "jump": {
        const target = effect.external || effect.target === undefined ? undefined : indexOfAddress.get(effect.target);
        const taken = target === undefined ? [] : [target];
        return effect.conditional ? [...taken, ...next] : taken;
      }
      default:
        return next;
    }
  };

  const propagate = (seed: number, state: PathState): void => {
    states[seed] = state;
    const worklist = [seed];
    while (worklist.length > 0) {
      const index = worklist.pop() as number;
      const out = step(effects[index] as Effect, states[index] as PathState);
      for (const successor of successors(index)) {
        const existing = states[successor];
        if (existing === undefined) {
          states[successor] = out;
          worklist.push(successor);
        } else if (existing.baseBytes !== out.baseBytes || existing.argBytes !== out.argBytes) {
          conflicts.add(successor);
        }
      }
    }
  };

  if (instructions.length > 0) propagate(0, { baseBytes: 0, argBytes: 0, afterPrologue: false });
  // Post-prologue state for blocks reached only indirectly: the fixed frame at the first call
  // reached above, else the deepest fixed frame seen.
  let postPrologueBytes: number | undefined;
  let deepest = 0;
  effects.forEach((effect, index) => {
    const state = states[index];
    if (state === undefined) return;
    if (effect.kind === "call" && postPrologueBytes === undefined) postPrologueBytes = state.baseBytes;
    deepest = Math.max(deepest, state.baseBytes);
  });
  for (let index = 0; index < instructions.length; index += 1) {
    if (states[index] === undefined) {
      propagate(index, { baseBytes: postPrologueBytes ?? deepest, argBytes: 0, afterPrologue: false });
    }
  }

  const frameAt = new Map<number, FrameState>();
  const callSites: ObjdumpCallSite[] = [];
  instructions.forEach((instruction, index) => {
    const state = states[index] as PathState;
    const known = !dynamic && !conflicts.has(index);
    const frame: FrameState = {
      frameSizeBytes: known ? state.baseBytes + state.argBytes : undefined,
      baseBytes: known ? state.baseBytes : undefined,
      pushedArgBytes: state.argBytes,
    };
    frameAt.set(instruction.address - raw.startOffset, frame);
    const effect = effects[index] as Effect;
    if (effect.kind === "call") {
      callSites.push({
        ...frame,
        callOffset: instruction.address - raw.startOffset,
        returnOffset: instruction.nextAddress - raw.startOffset,
        target: effect.target,
      });
    }
  });
  return {
    name: raw.name,
    section: raw.section,
    startOffset: raw.startOffset,
    sizeBytes: endOffset - raw.startOffset,
    callSites,
    framePointer,
    dynamic,
    frameAt,
    conflicts: [...conflicts].map((index) => (instructions[index] as Instruction).address - raw.startOffset).sort((a, b) => a - b),
  };
}

/**
 * Analyses disassembly text (`llvm-objdump -d -r --no-show-raw-insn`; `-r` lets tail calls to
 * other symbols be told apart from jumps inside the function). `sectionSizeBytes` gives the end
 * of the last instruction of each section.
 */
export function parseObjdumpFrames(disassembly: string, sectionSizeBytes: ReadonlyMap<string, number> = new Map()): Map<string, ObjdumpFunction> {
  const raw = parseDisassembly(disassembly, sectionSizeBytes);
  const result = new Map<string, ObjdumpFunction>();
  raw.forEach((fn, index) => {
    const following = raw[index + 1];
    const lastInstruction = fn.instructions[fn.instructions.length - 1];
    const endOffset =
      following !== undefined && following.section === fn.section
        ? following.startOffset
        : (sectionSizeBytes.get(fn.section) ?? lastInstruction?.nextAddress ?? fn.startOffset);
    result.set(fn.name, analyseFunction(fn, endOffset));
  });
  return result;
}

/** Disassembles `objPath` and returns every function's call sites and frame facts, by name. */
export function objdumpCallSites(objPath: string): Map<string, ObjdumpFunction> {
  return parseObjdumpFrames(objdumpDisassembly(objPath), sectionSizes(objPath));
}

export { readobjStackmap };
