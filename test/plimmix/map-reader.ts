import type { Location, ObjectFacts } from "./object-facts.js";

/**
 * Test-only decoders for the two frame tables the gcroot programs produce, written from the
 * format descriptions rather than from the plugin (and independent of src/stackmap/plimmix-map.ts):
 *
 * `_GC_MAP_` v1 (shared/notes/plimmix-format.md), little-endian, offsets from the label:
 *   +0 i32 version = 1, +4 u32 0, +8 i32 N, +12 u32 0,
 *   N x { u64 function, i32 frame words, i32 stack args, i32 R, i32 S, u64 x S safe points,
 *         (i32 offset, i32 type) x R },
 *   i32 G, u32 0, u64 x G global addresses.
 *
 * LLVM 14's ocaml frametable (`caml<Module>__frametable`, OcamlGCPrinter.cpp):
 *   u16 NumDescriptors, .p2align 3,
 *   NumDescriptors x { u64 return address, u16 frame size in BYTES (LLVM StackSize), u16 live
 *                      count, i16 x live offsets (GCRoot::StackOffset as is), .p2align 3 }.
 *   One descriptor per safe point; every root at every safe point.
 *
 * Every u64 address must be 0 in the object with an R_X86_64_64 relocation; it decodes to a
 * (section, offset) location.
 */

export interface V1Root {
  offsetBytes: number;
  type: number;
}

export interface V1Function {
  /** Offset of the record from the label. */
  recordOffset: number;
  address: Location & { symbol: string };
  frameWords: number;
  stackArguments: number;
  safepoints: Location[];
  roots: V1Root[];
}

export interface V1Map {
  label: string;
  section: string;
  /** Offset of the label in its section. */
  labelOffset: number;
  version: number;
  functions: V1Function[];
  /** Offset of G from the label. */
  globalsOffset: number;
  globals: (Location & { symbol: string })[];
  /** Bytes from the label to the end of the last global address. */
  sizeBytes: number;
  /** The four padding words (after version, after N, after G) are all zero. */
  paddingIsZero: boolean;
}

export function decodeV1Map(object: ObjectFacts, label: string): V1Map {
  const symbol = object.symbol(label);
  if (typeof symbol.sectionIndex !== "number") throw new Error(`${label} is undefined`);
  const section = object.sectionByIndex(symbol.sectionIndex);
  const bytes = object.sectionBytes(section.name);
  const base = symbol.value;
  const i32 = (offset: number): number => bytes.readInt32LE(base + offset);
  const reference = (offset: number): Location & { symbol: string } => object.u64Reference(section.name, base + offset);

  const version = i32(0);
  let paddingIsZero = i32(4) === 0 && i32(12) === 0;
  const count = i32(8);
  const functions: V1Function[] = [];
  let cursor = 16;
  for (let index = 0; index < count; index += 1) {
    const recordOffset = cursor;
    const address = reference(cursor);
    const frameWords = i32(cursor + 8);
    const stackArguments = i32(cursor + 12);
    const rootCount = i32(cursor + 16);
    const safepointCount = i32(cursor + 20);
    cursor += 24;
    const safepoints: Location[] = [];
    for (let s = 0; s < safepointCount; s += 1, cursor += 8) safepoints.push(reference(cursor));
    const roots: V1Root[] = [];
    for (let r = 0; r < rootCount; r += 1, cursor += 8) roots.push({ offsetBytes: i32(cursor), type: i32(cursor + 4) });
    functions.push({ recordOffset, address, frameWords, stackArguments, safepoints, roots });
  }
  const globalsOffset = cursor;
  const globalCount = i32(cursor);
  paddingIsZero &&= i32(cursor + 4) === 0;
  cursor += 8;
  const globals: (Location & { symbol: string })[] = [];
  for (let g = 0; g < globalCount; g += 1, cursor += 8) globals.push(reference(cursor));
  return {
    label,
    section: section.name,
    labelOffset: base,
    version,
    functions,
    globalsOffset,
    globals,
    sizeBytes: cursor,
    paddingIsZero,
  };
}

export interface OcamlDescriptor {
  returnAddress: Location;
  frameSizeBytes: number;
  liveOffsets: number[];
}

export function decodeOcamlFrametable(object: ObjectFacts, label: string): OcamlDescriptor[] {
  const symbol = object.symbol(label);
  if (typeof symbol.sectionIndex !== "number") throw new Error(`${label} is undefined`);
  const section = object.sectionByIndex(symbol.sectionIndex);
  const bytes = object.sectionBytes(section.name);
  const align8 = (offset: number): number => (offset + 7) & ~7;
  const count = bytes.readUInt16LE(symbol.value);
  let cursor = align8(symbol.value + 2);
  const descriptors: OcamlDescriptor[] = [];
  for (let index = 0; index < count; index += 1) {
    const returnAddress = object.u64Reference(section.name, cursor);
    const frameSizeBytes = bytes.readUInt16LE(cursor + 8);
    const liveCount = bytes.readUInt16LE(cursor + 10);
    const liveOffsets: number[] = [];
    for (let live = 0; live < liveCount; live += 1) liveOffsets.push(bytes.readInt16LE(cursor + 12 + 2 * live));
    descriptors.push({ returnAddress, frameSizeBytes, liveOffsets });
    cursor = align8(cursor + 12 + 2 * liveCount);
  }
  return descriptors;
}
