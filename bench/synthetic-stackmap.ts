/*
 * Synthetic `.llvm_stackmaps` v3 sections of any size, for the benchmarks: one statepoint record
 * per call site, each with the three statepoint header constants (cc 0, flags 0, 0 deopt values)
 * and `rootsPerRecord` (base, derived) pairs, every location Indirect: pair k's base at [rsp + 8k]
 * (what LLVM emits for spilled gc pointers), its derived pointer at [rsp + 8k + derivedOffsetBytes]
 * (the same slot by default, a plain root). Written with plain DataView writes in field order, independently of
 * the decoder (layout: src/stackmap/llvm-stackmap.ts, LLVM's StackMaps.rst).
 *
 * Geometry (deterministic, so both sides of a comparison see the same addresses):
 *   function f      address FUNCTION_BASE + f * FUNCTION_SPACING_BYTES,
 *                   stack size 32 + 8 * (f % 4) bytes (always room for 4 roots at rsp+0..24)
 *   record r of f   instruction offset 16 + r * 48
 */

export const FUNCTION_BASE = 0x40_0000;
export const FUNCTION_SPACING_BYTES = 0x1000;
export const STATEPOINT_ID = 0xabcdef00n;
const DWARF_RSP = 7;
const KIND_INDIRECT = 3;
const KIND_CONSTANT = 4;

export interface SyntheticMapSpec {
  functions: number;
  recordsPerFunction: number;
  rootsPerRecord: number;
  /**
   * Derived slot - base slot of every pair (default 0: base and derived share a slot). Non-zero
   * gives each pair a derived slot of its own, so a reference that records the base slot twice
   * is caught (test/bench/walk-reference.test.ts); it must stay inside the smallest frame (32 bytes).
   */
  derivedOffsetBytes?: number;
}

/** One call site as a C runtime would index it: return address -> frame size and root offsets. */
export interface CallSite {
  ra: number;
  frameSizeBytes: number;
  /** Pair k's base slot and derived slot, as offsets from SP. */
  rootOffsets: number[];
  derivedOffsets: number[];
}

export function functionStackSizeBytes(f: number): number {
  return 32 + 8 * (f % 4);
}
export function instructionOffset(r: number): number {
  return 16 + r * 48;
}

/** Bytes of one record: header, locations, padding, live-out header (none), padding. */
function recordSizeBytes(locations: number): number {
  let size = 16 + 12 * locations;
  size = (size + 7) & ~7;
  size += 4;
  return (size + 7) & ~7;
}

export function encodeSyntheticStackMap(spec: SyntheticMapSpec): Uint8Array {
  const { functions, recordsPerFunction, rootsPerRecord } = spec;
  if (recordsPerFunction * 48 + 16 > FUNCTION_SPACING_BYTES) throw new Error("too many records per function for the spacing");
  const derivedOffset = spec.derivedOffsetBytes ?? 0;
  if (derivedOffset % 8 !== 0 || 8 * (rootsPerRecord - 1) + derivedOffset + 8 > functionStackSizeBytes(0))
    throw new Error("derived slots outside the smallest frame");
  const locations = 3 + 2 * rootsPerRecord;
  const records = functions * recordsPerFunction;
  const bytes = new Uint8Array(16 + 24 * functions + records * recordSizeBytes(locations));
  const dv = new DataView(bytes.buffer);
  dv.setUint8(0, 3);
  dv.setUint32(4, functions, true);
  dv.setUint32(8, 0, true);
  dv.setUint32(12, records, true);
  let at = 16;
  for (let f = 0; f < functions; f++) {
    dv.setBigUint64(at, BigInt(FUNCTION_BASE + f * FUNCTION_SPACING_BYTES), true);
    dv.setBigUint64(at + 8, BigInt(functionStackSizeBytes(f)), true);
    dv.setBigUint64(at + 16, BigInt(recordsPerFunction), true);
    at += 24;
  }
  for (let f = 0; f < functions; f++) {
    for (let r = 0; r < recordsPerFunction; r++) {
      dv.setBigUint64(at, STATEPOINT_ID, true);
      dv.setUint32(at + 8, instructionOffset(r), true);
      dv.setUint16(at + 14, locations, true);
      at += 16;
      for (let c = 0; c < 3; c++) {
        dv.setUint8(at, KIND_CONSTANT);
        dv.setUint16(at + 2, 8, true);
        at += 12; // offset/constant 0
      }
      for (let k = 0; k < rootsPerRecord; k++) {
        for (let side = 0; side < 2; side++) {
          dv.setUint8(at, KIND_INDIRECT);
          dv.setUint16(at + 2, 8, true);
          dv.setUint16(at + 4, DWARF_RSP, true);
          dv.setInt32(at + 8, 8 * k + side * derivedOffset, true);
          at += 12;
        }
      }
      at = (at + 7) & ~7;
      at += 4; // padding u16, NumLiveOuts u16 = 0
      at = (at + 7) & ~7;
    }
  }
  if (at !== bytes.length) throw new Error(`synthetic stack map: wrote ${at} of ${bytes.length} bytes`);
  return bytes;
}

/** The call sites of a synthetic map, derived from the spec (not from rootwalk's decoder). */
export function callSitesOf(spec: SyntheticMapSpec): CallSite[] {
  const sites: CallSite[] = [];
  for (let f = 0; f < spec.functions; f++) {
    for (let r = 0; r < spec.recordsPerFunction; r++) {
      sites.push({
        ra: FUNCTION_BASE + f * FUNCTION_SPACING_BYTES + instructionOffset(r),
        frameSizeBytes: functionStackSizeBytes(f),
        rootOffsets: Array.from({ length: spec.rootsPerRecord }, (_, k) => 8 * k),
        derivedOffsets: Array.from({ length: spec.rootsPerRecord }, (_, k) => 8 * k + (spec.derivedOffsetBytes ?? 0)),
      });
    }
  }
  return sites;
}

/** A small deterministic PRNG (mulberry32), so every run builds the same corpus. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
