import { encodeLocationWord0, LocationKind } from "../src/location/location-word.js";
import { InvalidArgumentError, MalformedInputError } from "../src/errors.js";
import { RangedMemory } from "../src/memory/memory.js";
import type { Architecture } from "../src/arch/architecture.js";
import { TRAMPOLINE_SYMBOL } from "../src/core/return-barrier-table.js";
import { AARCH64 } from "../src/arch/aarch64.js";
import { X86_64 } from "../src/arch/x86-64.js";
import { FLAG_NO_UNWIND_INFO, FrameDescriptorBuilder, NO_CFA_RULE, calleeSavedIndex } from "../src/safepoints/frame-descriptors.js";
import type { FrameDescriptors } from "../src/safepoints/frame-descriptors.js";
import { SafepointRegistry } from "../src/safepoints/registry.js";
import type { SplitStackMethod, SplitStacks } from "./split-stacks.js";
import type { WalkStart } from "./unwinder.js";

/*
 * A recorded stack: the format of test/fixtures/split-stack/fixture_d300.json, written down as
 * a JSON Schema in schemas/stack-snapshot.schema.json (shipped in the package, with an example).
 * Numbers are hex strings or JSON numbers.
 *   memory[]            {base, hex}: every stack range's bytes
 *   functions[]         {name, addr, stackSize}
 *   callsites[]         {ra, fn, rootSpOffsets[]}: the safepoints (roots are SP-relative slots)
 *   entryRaSlot         the slot holding the innermost return address (the walk starts above it)
 *   entrySp             the innermost frame's SP, when not entryRaSlot + 8 (required on AArch64)
 *   architecture        "x86-64" (default) or "AArch64": on AArch64 a function's stackSize is
 *                       SP to its CFA and functions[].raCfaOffset says where it saved x30 (its
 *                       caller's return address); split stacks are x86-64 only
 *   segments[]          {header, lo, hi, oldStack}: libgcc's stacklets, innermost first
 *   splitstackFindRanges[]  {lo, hi, nextSp}: what __splitstack_find returned
 *   morestackStart, morestackSize   where __morestack's code is
 *   expectedRoots[]     {fn, slot, value} in walk order; expectedMorestackTransitions
 */
export interface StackSnapshotJson {
  memory: { base: string; hex: string }[];
  functions: { name: string; addr: string; stackSize: number | string; raCfaOffset?: number }[];
  callsites: { ra: string; fn: string; rootSpOffsets: (number | string)[] }[];
  entryRaSlot: string;
  entrySp?: string;
  architecture?: string;
  segments?: { header?: string; lo: string; hi: string; oldStack: string }[];
  splitstackFindRanges?: { lo: string; hi: string; nextSp: string }[];
  morestackStart?: string;
  morestackSize?: number | string;
  expectedRoots?: { fn: string; slot: string; value: string }[];
  expectedMorestackTransitions?: number;
}

/** Where a person finds the format: the README section and the JSON Schema shipped in the package. */
export const SNAPSHOT_FORMAT_REFERENCE = "(the stack snapshot format: docs/snapshot-format.md and schemas/stack-snapshot.schema.json in the package)";

export type WalkMethod = SplitStackMethod | "naive";

export interface LoadedSnapshot {
  memory: RangedMemory;
  registry: SafepointRegistry;
  start: WalkStart;
  splitStacks(method: WalkMethod): SplitStacks | undefined;
  /**
   * The address of the function the snapshot names rw_return_barrier_trampoline (the native
   * runtime's return barrier), if any: a return address equal to it ends the walk with
   * "return-barrier" naming its slot (a snapshot has no barrier table to restore it from).
   */
  returnBarrierTrampoline: number | undefined;
}

function num(value: string | number | undefined, what: string): number {
  const n = typeof value === "number" ? value : value === undefined ? Number.NaN : Number(value);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new MalformedInputError(`snapshot field ${what}`, 0, String(value), "a non-negative integer (hex string or number)");
  return n;
}

/** What a JSON value is, in the words of an error message. */
function jsonKind(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
}

/** Every element of `list` (a field of the snapshot) must be an object: JSON may hold anything. */
function checkObjects(list: unknown, field: string, optional: boolean): void {
  if (list === undefined && optional) return;
  if (!Array.isArray(list)) throw new MalformedInputError(`snapshot field ${field}`, 0, jsonKind(list), "an array");
  list.forEach((item, i) => {
    if (typeof item !== "object" || item === null || Array.isArray(item))
      throw new MalformedInputError(`snapshot ${field}[${i}]`, 0, jsonKind(item), "an object");
  });
}

/** The snapshot's machine: x86-64 unless `architecture` names AArch64. */
function snapshotArchitecture(json: StackSnapshotJson): Architecture {
  const name = json.architecture ?? X86_64.name;
  const found = [X86_64, AARCH64].find((a) => a.name === name);
  if (found === undefined) throw new MalformedInputError("snapshot field architecture", 0, String(name), `"${X86_64.name}" or "${AARCH64.name}"`);
  return found;
}

/**
 * A function's savedRegOffsets: on AArch64 only where it saved x30 (raCfaOffset, from the CFA);
 * x86-64 snapshots save nothing (the call pushed the return address at CFA - 8).
 */
function savedReturnAddress(architecture: Architecture, f: StackSnapshotJson["functions"][number]): Int16Array {
  const saved = new Int16Array(architecture.calleeSavedDwarf.length);
  if (architecture.returnAddressCfaOffsetBytes !== undefined) return saved;
  const offset = f.raCfaOffset;
  if (typeof offset !== "number" || !Number.isInteger(offset) || offset >= 0 || offset < -0x8000)
    throw new MalformedInputError(
      `snapshot function ${f.name}.raCfaOffset`,
      0,
      String(offset),
      `where it saved x30, a negative offset from its CFA (${architecture.name})`,
    );
  saved[calleeSavedIndex(architecture.dwarf.returnAddress, architecture)] = offset;
  return saved;
}

/**
 * A recorded stack ready to walk: its memory, a registry of its safepoints, where the walk starts
 * and its split-stack description per method. Every field is checked first: the file is
 * untrusted JSON, and a bad field is a MalformedInputError naming it.
 */
export function loadStackSnapshot(json: StackSnapshotJson): LoadedSnapshot {
  checkSnapshotShape(json);
  const memory = snapshotMemory(json);
  const architecture = snapshotArchitecture(json);
  const registry = new SafepointRegistry();
  registry.register({ name: "snapshot", format: "llvm-v3", descriptors: snapshotDescriptors(json, architecture), contentKey: "snapshot" });
  const start = snapshotStart(json, architecture, memory);
  const morestack =
    json.morestackStart === undefined ? [] : [{ start: num(json.morestackStart, "morestackStart"), sizeBytes: num(json.morestackSize, "morestackSize") }];
  const trampoline = json.functions.find((f) => f.name === TRAMPOLINE_SYMBOL);
  const returnBarrierTrampoline = trampoline === undefined ? undefined : num(trampoline.addr, `function ${trampoline.name}.addr`);
  return { memory, registry, start, splitStacks: (method) => snapshotSplitStacks(json, method, morestack), returnBarrierTrampoline };
}

/** The untrusted JSON's shape: an object with the three required arrays, every element an object. */
function checkSnapshotShape(json: StackSnapshotJson): void {
  const value: unknown = json;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError("snapshot", jsonKind(value), `a JSON object with memory, functions and callsites ${SNAPSHOT_FORMAT_REFERENCE}`);
  }
  // Each required array by name: the one missing, not the three it might be.
  for (const field of ["memory", "functions", "callsites"] as const) {
    if (json[field] === undefined) throw new InvalidArgumentError("snapshot", `no ${field}`, `a ${field} array ${SNAPSHOT_FORMAT_REFERENCE}`);
  }
  checkObjects(json.memory, "memory", false);
  checkObjects(json.functions, "functions", false);
  checkObjects(json.callsites, "callsites", false);
  checkObjects(json.segments, "segments", true);
  checkObjects(json.splitstackFindRanges, "splitstackFindRanges", true);
  json.callsites.forEach((c, r) => {
    if (!Array.isArray(c.rootSpOffsets)) throw new MalformedInputError(`snapshot callsites[${r}].rootSpOffsets`, 0, jsonKind(c.rootSpOffsets), "an array");
  });
}

/** The stack's bytes: one range per memory[] entry. */
function snapshotMemory(json: StackSnapshotJson): RangedMemory {
  return RangedMemory.fromPieces(
    json.memory.map((m, i) => {
      if (typeof m.hex !== "string" || m.hex.length % 2 !== 0 || !/^[0-9a-f]*$/i.test(m.hex)) {
        throw new MalformedInputError(`snapshot memory[${i}].hex`, 0, `${String(m.hex).slice(0, 16)}…`, "an even number of hex digits");
      }
      return { base: num(m.base, `memory[${i}].base`), bytes: Uint8Array.from(Buffer.from(m.hex, "hex")) };
    }),
  );
}

/** One frame descriptor per callsite: a static frame of its function's size, roots SP-relative. */
function snapshotDescriptors(json: StackSnapshotJson, architecture: Architecture): FrameDescriptors {
  const builder = new FrameDescriptorBuilder({ architecture });
  const functionIndex = new Map<number, number>();
  const savedByFunction = new Map<number, Int16Array>();
  for (const f of json.functions) {
    const address = num(f.addr, `function ${f.name}.addr`);
    const fi = builder.addFunction({ name: f.name, address, stackSizeBytes: num(f.stackSize, `function ${f.name}.stackSize`) });
    functionIndex.set(address, fi);
    savedByFunction.set(fi, savedReturnAddress(architecture, f));
  }
  json.callsites.forEach((c, r) => {
    const fnAddress = num(c.fn, `callsites[${r}].fn`);
    const fi = functionIndex.get(fnAddress);
    if (fi === undefined) throw new MalformedInputError(`callsites[${r}].fn`, 0, c.fn, "the address of a listed function");
    const stackSize = builder.functions[fi]!.stackSizeBytes;
    const locStart = builder.nextLocationIndex;
    const pairStart = builder.nextPairIndex;
    for (const off of c.rootSpOffsets) {
      const loc = builder.addLocation(encodeLocationWord0(LocationKind.Indirect, 0, architecture.dwarf.sp, 8), num(off, `callsites[${r}].rootSpOffsets`));
      builder.addPair(loc, loc);
    }
    builder.addSafepoint({
      returnAddress: num(c.ra, `callsites[${r}].ra`),
      frameSizeBytes: stackSize,
      stackSizeBytes: stackSize,
      cfaRegister: NO_CFA_RULE,
      cfaOffsetBytes: 0,
      savedRegOffsets: savedByFunction.get(fi)!,
      flags: FLAG_NO_UNWIND_INFO,
      functionIndex: fi,
      blobIndex: 0,
      recordIndex: r,
      locStart,
      deoptCount: 0,
      pairStart,
      pairCount: c.rootSpOffsets.length,
      allocaCount: 0,
    });
  });
  return builder.finish();
}

/** The innermost frame: SP (entrySp, else just above entryRaSlot on x86-64) and the return address read from entryRaSlot. */
function snapshotStart(json: StackSnapshotJson, architecture: Architecture, memory: RangedMemory): WalkStart {
  const entryRaSlot = num(json.entryRaSlot, "entryRaSlot");
  if (json.entrySp === undefined && architecture.returnAddressCfaOffsetBytes === undefined)
    throw new MalformedInputError("snapshot field entrySp", 0, "none", `the innermost frame's SP (${architecture.name}: the call pushes no return address)`);
  if (architecture !== X86_64 && (json.segments !== undefined || json.splitstackFindRanges !== undefined || json.morestackStart !== undefined))
    throw new MalformedInputError("snapshot split stacks", 0, `segments on ${architecture.name}`, "split stacks on x86-64 only");
  return { sp: json.entrySp === undefined ? entryRaSlot + 8 : num(json.entrySp, "entrySp"), ra: memory.readWord(entryRaSlot) };
}

/** The snapshot's split stacks as one method sees them (none for "naive"). */
function snapshotSplitStacks(json: StackSnapshotJson, method: WalkMethod, morestack: SplitStacks["morestack"]): SplitStacks | undefined {
  switch (method) {
    case "naive":
      return undefined;
    case "segments":
      return {
        method,
        morestack,
        stacklets: (json.segments ?? []).map((s, i) => ({
          lo: num(s.lo, `segments[${i}].lo`),
          hi: num(s.hi, `segments[${i}].hi`),
          oldStack: num(s.oldStack, `segments[${i}].oldStack`),
        })),
      };
    case "find-ranges":
      return {
        method,
        morestack,
        findRanges: (json.splitstackFindRanges ?? []).map((s, i) => ({
          lo: num(s.lo, `ranges[${i}].lo`),
          hi: num(s.hi, `ranges[${i}].hi`),
          nextSp: num(s.nextSp, `ranges[${i}].nextSp`),
        })),
      };
    case "geometry":
      // Geometry alone: neither the stacklet list nor where __morestack is.
      return { method, morestack: [] };
  }
}
