/**
 * A parser for `llvm-readobj --stackmap` text (LLVM 14 format), so tests can compare rootwalk's
 * decoder with the reference tool field by field. All u64 fields are bigint (exact); this is
 * test code, not a hot path.
 *
 *   LLVM StackMap Version: 3
 *   Num Functions: F
 *     Function address: <u64>, stack size: <u64>, callsite record count: <u64>
 *   Num Constants: C
 *     #<1-based>: <u64>
 *   Num Records: R
 *     Record ID: <u64>, instruction offset: <u32>
 *       <N> locations:
 *         #<1-based>: <loc>, size: <u16>
 *       <L> live-outs: [ R#<reg> (<size>-bytes) ... ]
 */

export type ReadobjLocation =
  | { kind: "Register"; dwarfReg: number; sizeBytes: number; text: string }
  | { kind: "Direct"; dwarfReg: number; offset: number; sizeBytes: number; text: string }
  | { kind: "Indirect"; dwarfReg: number; offset: number; sizeBytes: number; text: string }
  /** `value` as printed: the sign-extended 32-bit constant, printed unsigned. */
  | { kind: "Constant"; value: number; sizeBytes: number; text: string }
  | { kind: "ConstantIndex"; index: number; value: bigint; sizeBytes: number; text: string };

export interface ReadobjLiveOut {
  dwarfReg: number;
  sizeBytes: number;
}

export interface ReadobjFunction {
  address: bigint;
  stackSize: bigint;
  recordCount: bigint;
}

export interface ReadobjRecord {
  id: bigint;
  instructionOffset: number;
  locations: ReadobjLocation[];
  liveOuts: ReadobjLiveOut[];
}

export interface ReadobjStackMap {
  version: number;
  functions: ReadobjFunction[];
  constants: bigint[];
  records: ReadobjRecord[];
}

/** StackSize of functions with dynamic allocas or stack realignment. */
export const DYNAMIC_STACK_SIZE = 0xffff_ffff_ffff_ffffn;

function parseLocation(text: string, sizeBytes: number): ReadobjLocation {
  let match = /^Register R#(\d+)$/.exec(text);
  if (match !== null) return { kind: "Register", dwarfReg: Number(match[1]), sizeBytes, text };
  match = /^Direct R#(\d+) \+ (-?\d+)$/.exec(text);
  if (match !== null) return { kind: "Direct", dwarfReg: Number(match[1]), offset: Number(match[2]), sizeBytes, text };
  match = /^Indirect \[R#(\d+) \+ (-?\d+)\]$/.exec(text);
  if (match !== null) return { kind: "Indirect", dwarfReg: Number(match[1]), offset: Number(match[2]), sizeBytes, text };
  match = /^Constant (\d+)$/.exec(text);
  if (match !== null) return { kind: "Constant", value: Number(match[1]), sizeBytes, text };
  match = /^ConstantIndex #(\d+) \((\d+)\)$/.exec(text);
  if (match !== null) return { kind: "ConstantIndex", index: Number(match[1]), value: BigInt(match[2] as string), sizeBytes, text };
  throw new Error(`unrecognised readobj location: ${text}`);
}

/** Parses the whole output of `llvm-readobj --stackmap`. Throws on lines it does not expect. */
export function parseReadobjStackmap(output: string): ReadobjStackMap {
  const result: ReadobjStackMap = { version: -1, functions: [], constants: [], records: [] };
  let record: ReadobjRecord | undefined;
  for (const rawLine of output.split("\n")) {
    const line = rawLine.trim();
    if (line === "") continue;
    let match: RegExpExecArray | null;
    if ((match = /^LLVM StackMap Version: (\d+)$/.exec(line)) !== null) {
      result.version = Number(match[1]);
    } else if ((match = /^Function address: (\d+), stack size: (\d+), callsite record count: (\d+)$/.exec(line)) !== null) {
      result.functions.push({
        address: BigInt(match[1] as string),
        stackSize: BigInt(match[2] as string),
        recordCount: BigInt(match[3] as string),
      });
    } else if ((match = /^Record ID: (\d+), instruction offset: (\d+)$/.exec(line)) !== null) {
      record = { id: BigInt(match[1] as string), instructionOffset: Number(match[2]), locations: [], liveOuts: [] };
      result.records.push(record);
    } else if ((match = /^#(\d+): (.*), size: (\d+)$/.exec(line)) !== null) {
      if (record === undefined) throw new Error(`location outside a record: ${line}`);
      record.locations.push(parseLocation(match[2] as string, Number(match[3])));
    } else if ((match = /^#(\d+): (\d+)$/.exec(line)) !== null) {
      result.constants.push(BigInt(match[2] as string));
    } else if ((match = /^(\d+) live-outs: \[(.*)\]$/.exec(line)) !== null) {
      if (record === undefined) throw new Error(`live-outs outside a record: ${line}`);
      for (const liveOut of (match[2] as string).matchAll(/R#(\d+) \((\d+)-bytes\)/g)) {
        record.liveOuts.push({ dwarfReg: Number(liveOut[1]), sizeBytes: Number(liveOut[2]) });
      }
    } else if (
      /^(File|Format|Arch|AddressSize|LoadName):/.test(line) ||
      /^Num (Functions|Constants|Records): \d+$/.test(line) ||
      /^\d+ locations:$/.test(line)
    ) {
      // Header lines and counts: the counts are implied by the lists.
    } else {
      throw new Error(`unrecognised readobj line: ${line}`);
    }
  }
  return result;
}

/** The records of function `functionIndex` (records are grouped by function, in table order). */
export function recordsOfFunction(map: ReadobjStackMap, functionIndex: number): ReadobjRecord[] {
  let first = 0;
  for (let index = 0; index < functionIndex; index += 1) first += Number(map.functions[index]?.recordCount ?? 0n);
  const count = Number(map.functions[functionIndex]?.recordCount ?? 0n);
  return map.records.slice(first, first + count);
}

/**
 * Statepoint records recognised by shape: three leading Constants (calling convention, flags,
 * deopt count D) with 3 + D <= N. Returns D and the pairs region, or undefined.
 */
export function statepointShape(
  record: ReadobjRecord,
): { callingConvention: number; flags: number; deoptCount: number; gcLocations: ReadobjLocation[] } | undefined {
  const [cc, flags, deopt] = record.locations;
  if (cc?.kind !== "Constant" || flags?.kind !== "Constant" || deopt?.kind !== "Constant") return undefined;
  if (3 + deopt.value > record.locations.length) return undefined;
  return {
    callingConvention: cc.value,
    flags: flags.value,
    deoptCount: deopt.value,
    gcLocations: record.locations.slice(3 + deopt.value),
  };
}
