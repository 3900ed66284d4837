/**
 * Finds the marker stores of the plimmix test programs in `llvm-objdump -d --no-show-raw-insn`
 * output (AT&T syntax).
 *
 * Every gc function of test/plimmix/ll stores, before its first call, a distinct constant
 * MARKER_BASE + (type << 12) + index into each of its gcroot slots. Where that store lands in the
 * machine code (`movq $imm, disp(%rsp|%rbp)`, or at -O0 `movl $imm, %eax; movq %rax, disp(...)`)
 * is the slot LLVM really uses for that root: the map's offset for the root must point there, and
 * its type must be the marker's.
 */

export const MARKER_BASE = 0x10000;
const MARKER_LIMIT = MARKER_BASE + (4 << 12);

export function isMarker(value: number): boolean {
  return value >= MARKER_BASE && value < MARKER_LIMIT;
}

export function markerType(value: number): number {
  return (value - MARKER_BASE) >> 12;
}

export interface MarkerStore {
  functionName: string;
  /** Offset of the store instruction from the function's start. */
  instructionOffset: number;
  mark: number;
  base: "rsp" | "rbp";
  displacement: number;
}

const REGISTER_ALIASES: Record<string, string> = {
  eax: "rax",
  ecx: "rcx",
  edx: "rdx",
  ebx: "rbx",
  esi: "rsi",
  edi: "rdi",
  ebp: "rbp",
  esp: "rsp",
};

function canonicalRegister(name: string): string {
  const bare = name.replace(/^%/, "");
  const alias = REGISTER_ALIASES[bare];
  if (alias !== undefined) return alias;
  const numbered = /^(r\d+)[dwb]?$/.exec(bare);
  return numbered !== null ? (numbered[1] as string) : bare;
}

/** "-16" (objdump 14) or "-0x10" (objdump 19): Number() alone gives NaN for a negative hex. */
function parseSignedNumber(text: string): number {
  return text.startsWith("-") ? -Number(text.slice(1)) : Number(text);
}

function parseImmediate(text: string): number | undefined {
  const match = /^\$(-?(?:0x[0-9a-f]+|\d+))$/i.exec(text);
  if (match === null) return undefined;
  return parseSignedNumber(match[1] as string);
}

function parseFrameOperand(text: string): { base: "rsp" | "rbp"; displacement: number } | undefined {
  const match = /^(-?(?:0x[0-9a-f]+|\d+))?\(%(rsp|rbp)\)$/i.exec(text);
  if (match === null) return undefined;
  return { base: match[2] as "rsp" | "rbp", displacement: match[1] === undefined ? 0 : parseSignedNumber(match[1]) };
}

export function markerStores(disassembly: string): MarkerStore[] {
  const stores: MarkerStore[] = [];
  let functionName: string | undefined;
  let functionStart = 0;
  const constants = new Map<string, number>();
  for (const line of disassembly.split("\n")) {
    const header = /^([0-9a-f]+) <([^>]+)>:$/.exec(line);
    if (header !== null) {
      functionName = header[2] as string;
      functionStart = Number.parseInt(header[1] as string, 16);
      constants.clear();
      continue;
    }
    const instruction = /^\s*([0-9a-f]+):\s+(\S+)\s*([^#]*)/.exec(line);
    if (instruction === null || functionName === undefined) continue;
    const address = Number.parseInt(instruction[1] as string, 16);
    const mnemonic = instruction[2] as string;
    const operands = (instruction[3] as string)
      .trim()
      .split(/,\s*(?![^()]*\))/)
      .filter((operand) => operand !== "");
    if (mnemonic.startsWith("call")) {
      constants.clear();
      continue;
    }
    const [source, destination] = operands;
    if (operands.length === 2 && source !== undefined && destination !== undefined && /^mov(l|q|absq)$/.test(mnemonic)) {
      const immediate = parseImmediate(source);
      const slot = parseFrameOperand(destination);
      if (immediate !== undefined && destination.startsWith("%")) {
        constants.set(canonicalRegister(destination), immediate);
        continue;
      }
      const value = immediate ?? (source.startsWith("%") ? constants.get(canonicalRegister(source)) : undefined);
      if (slot !== undefined && mnemonic === "movq" && value !== undefined && isMarker(value)) {
        stores.push({ functionName, instructionOffset: address - functionStart, mark: value, ...slot });
        continue;
      }
    }
    const written = operands[operands.length - 1];
    if (written !== undefined && written.startsWith("%")) constants.delete(canonicalRegister(written));
  }
  return stores;
}
