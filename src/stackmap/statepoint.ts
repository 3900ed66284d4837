import { LocationKind, locationKind } from "../location/location-word.js";
import { InvalidArgumentError, MalformedInputError, requireArgument } from "../errors.js";
import { StackMapBlob } from "./llvm-stackmap.js";
import {
  DEFAULT_DEOPT_STATEPOINT_ID_U32,
  DEFAULT_STATEPOINT_ID_U32,
  MAX_CALLING_CONVENTION,
  STATEPOINT_DEOPT_START,
  STATEPOINT_FLAG_DEOPT_LIVE_IN,
  STATEPOINT_FLAG_GC_TRANSITION,
} from "./stackmap-v3-layout.js";

/*
 * Statepoint records (LLVM 14, StackMaps::parseStatepointOpers; ../shared/notes/llvm-stackmaps.md §5)
 * are ordinary stack map records whose location list has this shape:
 *
 *   loc[0]           Constant  calling convention of the wrapped call (0 C, 9 coldcc, ...)
 *   loc[1]           Constant  flags: bit 0 GC transition, bit 1 deopt live-in (others 0)
 *   loc[2]           Constant  D = number of deopt locations
 *   loc[3 .. 3+D)    deopt values, any kind
 *   then             (base, derived) pairs, two locations each; the count is not stored
 *   then             one Direct location per alloca in the gc-live list (LLVM emits these last)
 *
 * The instruction offset of a statepoint record is the return address of the call.
 * Statepoints are recognised by this shape, not by ID: the IDs RewriteStatepointsForGC uses by
 * default (0xABCDEF00, and 0xABCDEF0F for calls with a "deopt" bundle) are only defaults and
 * users may set any ID with the "statepoint-id" attribute. A record that carries one of the default
 * IDs but does not have the shape is reported as malformed rather than silently treated as a
 * plain stack map record.
 */

export const DEFAULT_STATEPOINT_ID = BigInt(DEFAULT_STATEPOINT_ID_U32);
export const DEFAULT_DEOPT_STATEPOINT_ID = BigInt(DEFAULT_DEOPT_STATEPOINT_ID_U32);

export { STATEPOINT_DEOPT_START, STATEPOINT_FLAG_DEOPT_LIVE_IN, STATEPOINT_FLAG_GC_TRANSITION };
const STATEPOINT_KNOWN_FLAGS = STATEPOINT_FLAG_GC_TRANSITION | STATEPOINT_FLAG_DEOPT_LIVE_IN;

export interface StatepointShape {
  callingConvention: number;
  flags: number;
  /** Index of the first deopt location, and how many there are. */
  deoptStart: number;
  deoptCount: number;
  /** Index of the first (base, derived) pair's base location, and the number of pairs. */
  pairsStart: number;
  pairCount: number;
  /** Index of the first trailing gc-alloca Direct location, and how many. */
  allocasStart: number;
  allocaCount: number;
}

export interface StatepointRecognition {
  /** IDs that must be statepoints (a record with one of them that lacks the shape is an error). */
  statepointIds: ReadonlySet<bigint>;
}

export const DEFAULT_STATEPOINT_RECOGNITION: StatepointRecognition = {
  statepointIds: new Set([DEFAULT_STATEPOINT_ID, DEFAULT_DEOPT_STATEPOINT_ID]),
};

/**
 * `StatepointRecognition.statepointIds` as u32 halves, to test a record's ID without making a
 * BigInt per record. IDs that are not u64 values can never match and are left out.
 */
export class StatepointIdMatcher {
  private readonly idsLo: Uint32Array;
  private readonly idsHi: Uint32Array;

  constructor(recognition: StatepointRecognition) {
    const ids = [...recognition.statepointIds].filter((id) => id >= 0n && id <= 0xffff_ffff_ffff_ffffn);
    this.idsLo = Uint32Array.from(ids, (id) => Number(id & 0xffff_ffffn));
    this.idsHi = Uint32Array.from(ids, (id) => Number(id >> 32n));
  }

  /** True when record `r`'s ID is one that must be a statepoint. */
  claims(blob: StackMapBlob, r: number): boolean {
    const lo = blob.recordIdLo(r);
    const hi = blob.recordIdHi(r);
    for (let k = 0; k < this.idsLo.length; k++) if (this.idsLo[k] === lo && this.idsHi[k] === hi) return true;
    return false;
  }
}

/** Slots of the Int32Array that `matchStatepoint` fills (location indices relative to the record). */
export const SHAPE_CALLING_CONVENTION = 0;
export const SHAPE_FLAGS = 1;
export const SHAPE_DEOPT_COUNT = 2;
export const SHAPE_PAIRS_START = 3;
export const SHAPE_PAIR_COUNT = 4;
export const SHAPE_ALLOCAS_START = 5;
export const SHAPE_ALLOCA_COUNT = 6;
export const SHAPE_SLOTS = 7;

/**
 * Whether record `r` of `blob` has the statepoint shape (see the layout above); if so, fills
 * `shape` (SHAPE_* slots) and returns true. A record without the shape is a plain stackmap or
 * patchpoint record (false), unless `claimed` (its ID is a statepoint ID): then it is malformed.
 * Reads the blob's decoded location words; allocates nothing unless it throws.
 */
export function matchStatepoint(blob: StackMapBlob, r: number, claimed: boolean, shape: Int32Array): boolean {
  const words = blob.locationWords;
  const first = blob.firstLocation(r);
  const n = blob.numLocations(r);
  const problem = shapeProblem(words, first, n, shape);
  if (problem === SHAPE_OK) return true;
  if (!claimed) return false;
  throw new MalformedInputError(
    `statepoint record #${r} (ID ${blob.recordIdBigInt(r)})`,
    blob.sectionOffset + blob.recordOffset(r),
    spellShapeProblem(problem, words, first, n),
    "Constant calling convention, Constant flags (0..3), Constant deopt count D with 3 + D <= NumLocations and an even number of gc-live locations before any trailing Direct allocas",
  );
}

/**
 * Decodes record `r` of `blob` as a statepoint, or returns undefined when it does not have the
 * statepoint shape (a plain stackmap or patchpoint record). See the layout above.
 */
export function decodeStatepoint(
  blob: StackMapBlob,
  r: number,
  recognition: StatepointRecognition = DEFAULT_STATEPOINT_RECOGNITION,
): StatepointShape | undefined {
  requireArgument(blob instanceof StackMapBlob, "blob", blob, "a StackMapBlob (from parseStackMapSection)");
  // A record the blob does not have is no "not a statepoint" (undefined): that answer would be wrong.
  if (!(Number.isInteger(r) && r >= 0 && r < blob.numRecords)) {
    throw new InvalidArgumentError("record index", String(r), `a whole number in [0, ${blob.numRecords}) (the blob's records)`);
  }
  const shape = new Int32Array(SHAPE_SLOTS);
  if (!matchStatepoint(blob, r, recognition.statepointIds.has(blob.recordIdBigInt(r)), shape)) return undefined;
  return {
    callingConvention: shape[SHAPE_CALLING_CONVENTION]!,
    flags: shape[SHAPE_FLAGS]!,
    deoptStart: STATEPOINT_DEOPT_START,
    deoptCount: shape[SHAPE_DEOPT_COUNT]!,
    pairsStart: shape[SHAPE_PAIRS_START]!,
    pairCount: shape[SHAPE_PAIR_COUNT]!,
    allocasStart: shape[SHAPE_ALLOCAS_START]!,
    allocaCount: shape[SHAPE_ALLOCA_COUNT]!,
  };
}

const SHAPE_OK = 0;
const SHAPE_TOO_FEW_LOCATIONS = 1;
const SHAPE_HEADER_NOT_CONSTANT = 2;
const SHAPE_BAD_CALLING_CONVENTION = 3;
const SHAPE_BAD_FLAGS = 4;
const SHAPE_BAD_DEOPT_COUNT = 5;
const SHAPE_ODD_LIVE_COUNT = 6;

/** The kind of location `i` (from the first, `first`) in location words. */
function kindAt(words: Int32Array, first: number, i: number): number {
  return locationKind(words[2 * (first + i)]!);
}
/** The small constant (or offset) of location `i`: its word 1. */
function valueAt(words: Int32Array, first: number, i: number): number {
  return words[2 * (first + i) + 1]!;
}

/** SHAPE_OK with `shape` filled, or the first rule the `n` locations at `first` break. */
function shapeProblem(words: Int32Array, first: number, n: number, shape: Int32Array): number {
  if (n < 3) return SHAPE_TOO_FEW_LOCATIONS;
  for (let i = 0; i < 3; i++) if (kindAt(words, first, i) !== LocationKind.Constant) return SHAPE_HEADER_NOT_CONSTANT;
  const callingConvention = valueAt(words, first, 0);
  const flags = valueAt(words, first, 1);
  const deoptCount = valueAt(words, first, 2);
  if (callingConvention < 0 || callingConvention > MAX_CALLING_CONVENTION) return SHAPE_BAD_CALLING_CONVENTION;
  if ((flags & ~STATEPOINT_KNOWN_FLAGS) !== 0) return SHAPE_BAD_FLAGS;
  if (deoptCount < 0 || 3 + deoptCount > n) return SHAPE_BAD_DEOPT_COUNT;

  const liveStart = 3 + deoptCount;
  let allocasStart = n;
  while (allocasStart > liveStart && kindAt(words, first, allocasStart - 1) === LocationKind.Direct) allocasStart--;
  // A Direct location can only be an alloca; gc-live pairs come in twos. If the Directs at the
  // tail leave an odd count, the first of them completes the last pair (an alloca used as a gc
  // pointer), which LLVM does not produce for addrspace(1) values, but is not ambiguous either.
  if ((allocasStart - liveStart) % 2 !== 0) allocasStart++;
  if (allocasStart > n) return SHAPE_ODD_LIVE_COUNT;
  shape[SHAPE_CALLING_CONVENTION] = callingConvention;
  shape[SHAPE_FLAGS] = flags;
  shape[SHAPE_DEOPT_COUNT] = deoptCount;
  shape[SHAPE_PAIRS_START] = liveStart;
  shape[SHAPE_PAIR_COUNT] = (allocasStart - liveStart) / 2;
  shape[SHAPE_ALLOCAS_START] = allocasStart;
  shape[SHAPE_ALLOCA_COUNT] = n - allocasStart;
  return SHAPE_OK;
}

/** A sentence saying what is wrong, for a problem `shapeProblem` returned (only on the error path). */
function spellShapeProblem(problem: number, words: Int32Array, first: number, n: number): string {
  switch (problem) {
    case SHAPE_TOO_FEW_LOCATIONS:
      return `${n} locations`;
    case SHAPE_HEADER_NOT_CONSTANT: {
      let i = 0;
      while (kindAt(words, first, i) === LocationKind.Constant) i++;
      return `location #${i + 1} of kind ${kindAt(words, first, i)}`;
    }
    case SHAPE_BAD_CALLING_CONVENTION:
      return `calling convention ${valueAt(words, first, 0)}`;
    case SHAPE_BAD_FLAGS:
      return `flags ${valueAt(words, first, 1)}`;
    case SHAPE_BAD_DEOPT_COUNT:
      return `deopt count ${valueAt(words, first, 2)} with ${n} locations`;
    default:
      return `${n - (3 + valueAt(words, first, 2))} gc-live locations (odd, no alloca to complete a pair)`;
  }
}
