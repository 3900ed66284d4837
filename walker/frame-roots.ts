import {
  locationDwarfReg,
  LocationKind,
  locationKind,
  locationRootType,
  ROOT_TYPE_ATOMIC,
  ROOT_TYPE_COMPLEX,
  ROOT_TYPE_TRAIT,
} from "../src/location/location-word.js";
import { hex } from "../src/errors.js";
import { OwnedRegion } from "../src/memory/owned-region.js";
import { scanMemory } from "../src/memory/scan-memory.js";
import { LOCATION_SHAPE_MASK, isFastRootLocation } from "../src/safepoints/fast-frame-rule.js";
import { DWARF_CFA, calleeSavedIndex } from "../src/safepoints/frame-descriptors.js";
import { UNKNOWN_SLOT, readSlot } from "./slot.js";
import { WalkError, type Unwinder } from "./unwinder.js";

/*
 * The roots of one frame as slots (walker/slot.ts), appended to a RootPairs buffer.
 *
 * How each location kind of a (base, derived) pair resolves in a frame at its safepoint:
 *   Indirect [reg + off]  the slot at reg + off; reg = sp (x86-64 R#7, AArch64 R#31) is the
 *                         frame's SP, DWARF_CFA its CFA, any other register (rbp, or rbx in
 *                         realigned frames; x29) is that register's value in this frame
 *   Register reg          the register's slot: the innermost frame's captured context, or the save
 *                         slot where a callee stored it (only callee-saved registers survive a call)
 *   Direct reg + off      an address, not a slot: a pair cannot be relocated through it; a gc
 *                         alloca's Direct location is the slot of the pointer stored in the alloca
 *   Constant, ConstantIndex   not relocatable (null is `Constant 0`)
 * plimmix typed roots: POINTER is the slot itself; TRAIT is the heap-pointer slot at +8 of the
 * two-word object the slot points to (none when the slot is null); COMPLEX is reported with its
 * visitor (the first word of the structure it points to), not relocated here; ATOMIC is skipped.
 */

/**
 * Bytes per pair in a RootPairs region: base slot, derived slot, base value (f64 each), and one
 * frame record (frame index, first pair: i32 each). A frame is recorded only when it has pairs,
 * so there are never more frame records than pairs and one capacity serves both.
 */
const PAIR_BYTES = 32;
const INITIAL_PAIRS = 256;
/**
 * The most pairs `reserveForStack` makes room for before a scan (8 MiB of columns per thread: 32
 * native threads at the bound take 256 MiB of the scan memory, which their reserved stacks share):
 * a larger stack still scans, its columns then grow during the scan as they always could.
 */
export const MAX_PRESIZED_PAIRS = 1 << 18;
/**
 * The most pairs the columns of one scanner's threads hold for presizing to go on (32 threads at
 * MAX_PRESIZED_PAIRS, 256 MiB): past it a thread's columns grow with the pairs found. A native run
 * may have up to 1,023 threads, and room for a pair per slot of every deep stack would take the
 * whole scan memory (4 to 8 bytes of columns per byte of stack) where the roots need a few KiB.
 */
export const PRESIZED_PAIRS_BUDGET = 32 * MAX_PRESIZED_PAIRS;

/**
 * Growable struct-of-arrays of root pairs, reused across walks: the output contract of a stack
 * scan (bench/README.md, "The walk's output contract"). Per pair, what a moving collector needs:
 * base slot, derived slot, base value. Per frame with pairs (in walk order), what a report needs:
 * (frame index, index of its first pair) in `frameRecords`; `frameOf` maps a pair to its frame.
 * Frames without pairs get no record: nothing reports them through the pairs, and the scan kernel
 * then writes nothing for them.
 *
 * The columns are views on one region of the scan memory (src/memory/scan-memory.ts), so the
 * scan kernel (walker/scan-kernel/) writes them in place; the region goes back when the RootPairs
 * becomes unreachable (src/memory/owned-region.ts). Growth allocates a bigger region, copies,
 * releases the old one: the column views change then, so read them from the RootPairs each time.
 */
export class RootPairs {
  count = 0;
  baseSlots: Float64Array;
  derivedSlots: Float64Array;
  /**
   * The value in each base slot when the walk read it: the object the root keeps alive (0 for
   * null). Read as each pair is appended (every slot appended has been checked readable), so the
   * collector visits roots without a second pass through Memory.
   */
  baseValues: Float64Array;
  /** Frame records: [2k] the frame index, [2k + 1] its first pair; increasing in both. */
  frameRecords: Int32Array;
  frameCount = 0;
  /** Locations that could not be relocated: constants, Direct pairs, COMPLEX roots. */
  notRelocatable = 0;
  /** COMPLEX roots: (slot, visitor address), kept for the runtime to visit. */
  complexRoots: { slot: number; visitor: number; frame: number }[] = [];
  private readonly region: OwnedRegion;

  constructor() {
    this.region = OwnedRegion.allocate(this, INITIAL_PAIRS * PAIR_BYTES, "root pair buffer");
    [this.baseSlots, this.derivedSlots, this.baseValues, this.frameRecords] = columnsAt(this.region.offset, INITIAL_PAIRS);
  }

  clear(): void {
    this.count = 0;
    this.frameCount = 0;
    this.notRelocatable = 0;
    this.complexRoots.length = 0;
  }

  /** Appends a pair of frame `frame` (frames are appended in walk order, indexes increasing). */
  push(baseSlot: number, derivedSlot: number, frame: number, baseValue: number): void {
    if (this.count === this.baseSlots.length) this.reserve(1);
    const n = this.count;
    const f = this.frameCount;
    if (f === 0 || this.frameRecords[2 * f - 2] !== frame) {
      this.frameRecords[2 * f] = frame;
      this.frameRecords[2 * f + 1] = n;
      this.frameCount = f + 1;
    }
    this.baseSlots[n] = baseSlot;
    this.derivedSlots[n] = derivedSlot;
    this.baseValues[n] = baseValue;
    this.count = n + 1;
  }

  /** The index of the frame pair `pair` (< count) came from: a binary search of the frame records. */
  frameOf(pair: number): number {
    const records = this.frameRecords;
    let lo = 0;
    let hi = this.frameCount - 1;
    // Invariant: the pair's record is in [lo, hi] (record 0 starts at pair 0).
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (records[2 * mid + 1]! <= pair) lo = mid;
      else hi = mid - 1;
    }
    return records[2 * lo]!;
  }

  /**
   * Before a scan of `stackBytes` of stack (count 0, so nothing is copied): room for one pair per
   * 8-byte slot, the most a stack of frames with a distinct slot per pair can give, at most
   * MAX_PRESIZED_PAIRS. The columns then grow once per new stack size, before the scan, instead
   * of doubling (and copying) inside it; a stack that needs more still grows by `reserve`.
   */
  reserveForStack(stackBytes: number): void {
    this.reserve(Math.min(Math.ceil(stackBytes / 8), MAX_PRESIZED_PAIRS));
  }

  /** Grows the columns (keeping the first `count` pairs) so that `extra` more pairs fit. */
  reserve(extra: number): void {
    const needed = this.count + extra;
    if (needed <= this.baseSlots.length) return;
    let capacity = this.baseSlots.length * 2;
    while (capacity < needed) capacity *= 2;
    const old = this.region.replace(capacity * PAIR_BYTES, "root pair buffer");
    const [baseSlots, derivedSlots, baseValues, frameRecords] = columnsAt(this.region.offset, capacity);
    baseSlots.set(this.baseSlots.subarray(0, this.count));
    derivedSlots.set(this.derivedSlots.subarray(0, this.count));
    baseValues.set(this.baseValues.subarray(0, this.count));
    frameRecords.set(this.frameRecords.subarray(0, 2 * this.frameCount));
    old.release();
    this.baseSlots = baseSlots;
    this.derivedSlots = derivedSlots;
    this.baseValues = baseValues;
    this.frameRecords = frameRecords;
  }

  /** Returns the columns' region now, for pairs used once (their views must not be read after). */
  release(): void {
    this.region.release();
  }
}

/** The columns of a `capacity`-pair region at `offset`: the f64 ones first (8-aligned), then the frame records. */
function columnsAt(offset: number, capacity: number): [Float64Array, Float64Array, Float64Array, Int32Array] {
  const buffer = scanMemory().buffer;
  return [
    new Float64Array(buffer, offset, capacity),
    new Float64Array(buffer, offset + capacity * 8, capacity),
    new Float64Array(buffer, offset + capacity * 16, capacity),
    new Int32Array(buffer, offset + capacity * 24, 2 * capacity),
  ];
}

const NOT_A_SLOT = Number.NaN;

/** Appends every root pair of the unwinder's current frame to `out` (none for a native frame). */
export function collectFrameRoots(u: Unwinder, out: RootPairs): void {
  const i = u.descriptor;
  if (i < 0) return;
  const d = u.descriptors;
  const pairStart = d.pairStart[i]!;
  const pairs = d.pairs;
  const locations = d.locations;
  const sp = u.sp;
  const span = u.cfa - sp;
  for (let p = 0; p < d.pairCount[i]!; p++) {
    const baseLoc = pairs[(pairStart + p) * 2]!;
    const derivedLoc = pairs[(pairStart + p) * 2 + 1]!;
    const w0 = locations[derivedLoc * 2]!;
    // The common case, the fast loop's (src/safepoints/fast-frame-rule.ts): base and derived in
    // stack slots [sp + off] inside the frame, which the unwinder checked as a whole (and SP is
    // 8-aligned): no decoding beyond the first words, no further range check.
    const derivedOffset = locations[derivedLoc * 2 + 1]!;
    const baseOffset = locations[baseLoc * 2 + 1]!;
    if (
      u.fastFramesAdmitted &&
      isFastRootLocation(w0 & LOCATION_SHAPE_MASK, derivedOffset, span) &&
      isFastRootLocation(locations[baseLoc * 2]! & LOCATION_SHAPE_MASK, baseOffset, span)
    ) {
      const baseSlot = sp + baseOffset;
      out.push(baseSlot, sp + derivedOffset, u.index, u.slotValue(baseSlot));
      continue;
    }
    const type = locationRootType(w0);
    if (type === ROOT_TYPE_ATOMIC) continue;
    let derivedSlot = locationSlot(u, derivedLoc);
    let baseSlot = baseLoc === derivedLoc ? derivedSlot : locationSlot(u, baseLoc);
    if (Number.isNaN(derivedSlot) || Number.isNaN(baseSlot)) {
      out.notRelocatable++;
      continue;
    }
    checkSlot(u, baseSlot);
    if (derivedSlot !== baseSlot) checkSlot(u, derivedSlot);
    if (type === ROOT_TYPE_TRAIT || type === ROOT_TYPE_COMPLEX) {
      const target = readSlot(derivedSlot, u.memory, u.contexts);
      if (target === 0) continue;
      if (type === ROOT_TYPE_COMPLEX) {
        out.complexRoots.push({ slot: derivedSlot, visitor: u.memory.readWord(target), frame: u.index });
        out.notRelocatable++;
        continue;
      }
      derivedSlot = baseSlot = target + 8;
      checkSlot(u, derivedSlot);
    }
    out.push(baseSlot, derivedSlot, u.index, u.slotValue(baseSlot));
  }
  // gc allocas: the pointer lives in the alloca, whose address the Direct location gives.
  const allocaStart = d.locStart[i]! + d.deoptCount[i]! + 2 * d.pairCount[i]!;
  for (let a = 0; a < d.allocaCount[i]!; a++) {
    const loc = allocaStart + a;
    const slot = registerValuePlusOffset(u, locationDwarfReg(d.locations[loc * 2]!), d.locations[loc * 2 + 1]!, loc);
    checkSlot(u, slot);
    out.push(slot, slot, u.index, u.slotValue(slot));
  }
}

/** The slot of location `loc` in the current frame, or NaN when it has none (constants, Direct). */
export function locationSlot(u: Unwinder, loc: number): number {
  const d = u.descriptors;
  const w0 = d.locations[loc * 2]!;
  const w1 = d.locations[loc * 2 + 1]!;
  switch (locationKind(w0)) {
    case LocationKind.Indirect:
      return registerValuePlusOffset(u, locationDwarfReg(w0), w1, loc);
    case LocationKind.Register: {
      const reg = locationDwarfReg(w0);
      const k = calleeSavedIndex(reg, u.architecture);
      const slot = k < 0 ? UNKNOWN_SLOT : u.regSlot(k);
      if (slot === UNKNOWN_SLOT)
        unresolvable(
          u,
          `a root in register ${u.architecture.registerName(reg)}`,
          k < 0 ? "it is not callee-saved, so it cannot hold a value across a call" : "no callee saved it and the register context does not hold it",
        );
      return slot;
    }
    default:
      return NOT_A_SLOT;
  }
}

function registerValuePlusOffset(u: Unwinder, reg: number, offset: number, loc: number): number {
  if (reg === u.architecture.dwarf.sp) return u.sp + offset;
  if (reg === DWARF_CFA) return u.cfa + offset;
  const k = calleeSavedIndex(reg, u.architecture);
  const value = k < 0 ? Number.NaN : readSlot(u.regSlot(k), u.memory, u.contexts);
  if (Number.isNaN(value)) {
    unresolvable(u, `location #${loc} relative to register ${u.architecture.registerName(reg)}`, "the register's value in this frame is unknown");
  }
  return value + offset;
}

/** A stack slot must be in the memory the walker was given, and aligned: checked before any access. */
function checkSlot(u: Unwinder, slot: number): void {
  if (slot >= u.sp && slot + 8 <= u.cfa && (slot & 7) === 0) return; // inside the checked frame
  if (slot >= 0 && ((slot & 7) !== 0 || !u.memory.contains(slot, 8))) {
    throw new WalkError(
      slot,
      u.index,
      `root slot ${hex(slot)} of safepoint ${hex(u.ra)} is outside the stack's memory or misaligned`,
      "a corrupt frame pointer or register value, or a stack map for different code",
    );
  }
}

function unresolvable(u: Unwinder, what: string, why: string): never {
  // Always an error: a root that cannot be found can be neither relocated nor skipped safely.
  throw new WalkError(u.ra, u.index, `${what} at safepoint ${hex(u.ra)} cannot be resolved: ${why}`, "a register context without the callee-saved registers");
}
