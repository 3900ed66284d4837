import { locationDwarfReg, LocationKind, locationKind, locationRootType } from "../location/location-word.js";
import {
  FLAG_DYNAMIC_FRAME,
  FLAG_FRAME_POINTER_CFA,
  FLAG_FRAME_SIZE_DIFFERS,
  FLAG_STATEPOINT,
  FrameDescriptors,
  NO_CFA_RULE,
} from "../safepoints/frame-descriptors.js";
import { requireArgument } from "../errors.js";
import type { MapFormat } from "../safepoints/registry.js";
import { spellLocation } from "../stackmap/location-spelling.js";
import { type StackMapBlob } from "../stackmap/llvm-stackmap.js";
import { decodeStatepoint } from "../stackmap/statepoint.js";

/**
 * What `rootwalk dump --format json` prints for one safepoint (and `text` shows). u64 values are
 * decimal strings, addresses hex strings, locations spelled as `[sp+16]`, `rbx`, `const 0`.
 */
export interface SafepointDescription {
  returnAddress: string;
  function: string | null;
  /** "section+offset" for a .o, the hex address otherwise. */
  functionAddress: string;
  instructionOffset: number;
  id: string | null;
  kind: "statepoint" | "stackmap" | "gcroot";
  /** As recorded (LLVM StackSize, plimmix words * 8), decimal; UINT64_MAX for dynamic frames. */
  stackSizeBytes: string;
  /** SP at the safepoint to the return-address slot; null when not static (see frameRule). */
  frameSizeBytes: number | null;
  /** How the walker finds the return-address slot: "sp+N" or "rbp+8" (N = frame size). */
  frameRule: string;
  /** The effective frame size differs from the recorded one (pushed call arguments). */
  frameSizeDiffers: boolean;
  dynamicFrame: boolean;
  /** CFA rule from .eh_frame at the safepoint, e.g. "sp+32", or null without unwind info. */
  cfa: string | null;
  /** Callee-saved registers this frame saved: name -> offset from the CFA. */
  savedRegisters: Record<string, number>;
  callingConvention?: number;
  statepointFlags?: number;
  deopt: string[];
  roots: { base: string; derived: string; type?: string }[];
  allocas: string[];
  liveOuts: string[];
}

export interface MapDescription {
  file: string;
  format: MapFormat;
  blob: number;
  sectionOffset: string;
  functions: number;
  records: number;
  safepoints: SafepointDescription[];
}

const ROOT_TYPE_NAMES = ["", "atomic", "trait", "complex", "pointer"];

/** One MapDescription per blob; `sectionName` names .o functions' sections (`.text+0x10`). */
export function describeLlvmMaps(
  file: string,
  blobs: readonly StackMapBlob[],
  descriptors: FrameDescriptors,
  functionLabel: (blobIndex: number, functionIndex: number) => string,
): MapDescription[] {
  requireArgument(Array.isArray(blobs), "blobs", blobs, "an array of StackMapBlob (from parseStackMapSection)");
  requireArgument(descriptors instanceof FrameDescriptors, "descriptors", descriptors, "FrameDescriptors (from buildLlvmDescriptors)");
  const maps: MapDescription[] = blobs.map((blob, b) => ({
    file,
    format: "llvm-v3",
    blob: b,
    sectionOffset: `0x${blob.sectionOffset.toString(16)}`,
    functions: blob.numFunctions,
    records: blob.numRecords,
    safepoints: [],
  }));
  for (let i = 0; i < descriptors.count; i++) {
    const b = descriptors.blobIndex[i]!;
    const r = descriptors.recordIndex[i]!;
    const blob = blobs[b]!;
    const f = blob.functionOfRecord(r);
    const fn = descriptors.functions[descriptors.functionIndex[i]!]!;
    const constantOf = (word1: number) => blob.constantLong(word1 >>> 0).toString();
    const desc = describeDescriptor(descriptors, i, (loc) => spellDescriptorLocation(descriptors, loc, constantOf));
    const statepoint = (descriptors.flags[i]! & FLAG_STATEPOINT) !== 0 ? decodeStatepoint(blob, r) : undefined;
    const liveOuts: string[] = [];
    for (let k = 0; k < blob.numLiveOuts(r); k++)
      liveOuts.push(`${descriptors.architecture.registerName(blob.liveOutDwarfReg(r, k))} (${blob.liveOutSizeBytes(r, k)} bytes)`);
    maps[b]!.safepoints.push({
      returnAddress: `0x${descriptors.returnAddress[i]!.toString(16)}`,
      function: fn.name ?? null,
      functionAddress: functionLabel(b, f),
      instructionOffset: blob.instructionOffset(r),
      id: blob.recordIdLong(r).toString(),
      kind: statepoint ? "statepoint" : "stackmap",
      stackSizeBytes: blob.stackSizeLong(f).toString(),
      ...desc,
      ...(statepoint ? { callingConvention: statepoint.callingConvention, statepointFlags: statepoint.flags } : {}),
      liveOuts,
    });
  }
  return maps;
}

/**
 * One MapDescription per map of a gcroot format (plimmix `_GC_MAP_`, OCaml frame table), from the
 * descriptors alone: these formats have no record IDs, constants or live-outs. `mapOf(i)` says
 * which map safepoint i belongs to, `functionLabel` how to print a function's address.
 */
export function describeGcrootMaps(
  file: string,
  format: "plimmix-v1" | "ocaml",
  maps: readonly { sectionOffset: number; safepoints: number }[],
  descriptors: FrameDescriptors,
  functionLabel: (functionIndex: number) => string,
): MapDescription[] {
  const functionsOf = maps.map(() => new Set<number>());
  for (let i = 0; i < descriptors.count; i++) functionsOf[descriptors.blobIndex[i]!]?.add(descriptors.functionIndex[i]!);
  const out: MapDescription[] = maps.map((m, b) => ({
    file,
    format,
    blob: b,
    sectionOffset: `0x${m.sectionOffset.toString(16)}`,
    functions: functionsOf[b]!.size,
    records: m.safepoints,
    safepoints: [],
  }));
  for (let i = 0; i < descriptors.count; i++) {
    const fi = descriptors.functionIndex[i]!;
    const fn = descriptors.functions[fi]!;
    const spell = (loc: number) => spellDescriptorLocation(descriptors, loc, (w1) => String(w1));
    out[descriptors.blobIndex[i]!]?.safepoints.push({
      returnAddress: `0x${descriptors.returnAddress[i]!.toString(16)}`,
      function: fn.name ?? null,
      functionAddress: functionLabel(fi),
      instructionOffset: descriptors.returnAddress[i]! - fn.address,
      id: null,
      kind: "gcroot",
      stackSizeBytes: descriptors.stackSizeBytes[i]! < 0 ? "18446744073709551615" : String(descriptors.stackSizeBytes[i]),
      ...describeDescriptor(descriptors, i, spell),
      liveOuts: [],
    });
  }
  return out;
}

/** The format-independent part of a safepoint's description. */
export function describeDescriptor(
  d: FrameDescriptors,
  i: number,
  spell: (locationIndex: number) => string,
): Pick<SafepointDescription, "frameSizeBytes" | "frameRule" | "frameSizeDiffers" | "dynamicFrame" | "cfa" | "savedRegisters" | "deopt" | "roots" | "allocas"> {
  const flags = d.flags[i]!;
  const frameSize = d.frameSizeBytes[i]!;
  const arch = d.architecture;
  const savedCount = arch.calleeSavedNames.length;
  const savedRegisters: Record<string, number> = {};
  for (let k = 0; k < savedCount; k++) {
    const off = d.savedRegOffsets[i * savedCount + k]!;
    if (off !== 0) savedRegisters[arch.calleeSavedNames[k]!] = off;
  }
  const cfa = d.cfaRegister[i] === NO_CFA_RULE ? null : `${arch.registerName(d.cfaRegister[i]!)}${signed(d.cfaOffsetBytes[i]!)}`;
  // Like `sp+N` (N = frame size: SP to the return-address slot on x86-64, to the CFA on AArch64),
  // relative to the frame pointer when only that gives the frame.
  const fpRule = `${arch.registerName(arch.dwarf.fp)}${signed(d.cfaOffsetBytes[i]! - arch.callPushBytes)}`;
  const frameRule = frameSize >= 0 ? `sp+${frameSize}` : (flags & FLAG_FRAME_POINTER_CFA) !== 0 ? fpRule : "unknown";
  const locStart = d.locStart[i]!;
  const deopt: string[] = [];
  for (let k = 0; k < d.deoptCount[i]!; k++) deopt.push(spell(locStart + k));
  const roots: SafepointDescription["roots"] = [];
  for (let p = 0; p < d.pairCount[i]!; p++) {
    const base = d.pairs[(d.pairStart[i]! + p) * 2]!;
    const derived = d.pairs[(d.pairStart[i]! + p) * 2 + 1]!;
    const type = ROOT_TYPE_NAMES[locationRootType(d.locations[derived * 2]!)];
    roots.push({ base: spell(base), derived: spell(derived), ...(type ? { type } : {}) });
  }
  const allocas: string[] = [];
  const allocaStart = locStart + d.deoptCount[i]! + 2 * d.pairCount[i]!;
  for (let k = 0; k < d.allocaCount[i]!; k++) allocas.push(spell(allocaStart + k));
  return {
    frameSizeBytes: frameSize >= 0 ? frameSize : null,
    frameRule,
    frameSizeDiffers: (flags & FLAG_FRAME_SIZE_DIFFERS) !== 0,
    dynamicFrame: (flags & FLAG_DYNAMIC_FRAME) !== 0,
    cfa,
    savedRegisters,
    deopt,
    roots,
    allocas,
  };
}

export function spellDescriptorLocation(d: FrameDescriptors, loc: number, constantOf: (word1: number) => string): string {
  const w0 = d.locations[loc * 2]!;
  const w1 = d.locations[loc * 2 + 1]!;
  const kind = locationKind(w0);
  const constant = kind === LocationKind.ConstantIndex ? constantOf(w1) : String(w1);
  return spellLocation(d.architecture, kind, locationDwarfReg(w0), w1, constant);
}

function signed(n: number): string {
  return n >= 0 ? `+${n}` : `${n}`;
}
