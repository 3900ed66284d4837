import { MalformedInputError } from "../errors.js";
import { LocationKind, LocationView, type StackMapBlob } from "./llvm-stackmap.js";

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

export const DEFAULT_STATEPOINT_ID = 0xabcdef00n;
export const DEFAULT_DEOPT_STATEPOINT_ID = 0xabcdef0fn;

export const STATEPOINT_FLAG_GC_TRANSITION = 1;
export const STATEPOINT_FLAG_DEOPT_LIVE_IN = 2;
const STATEPOINT_KNOWN_FLAGS = STATEPOINT_FLAG_GC_TRANSITION | STATEPOINT_FLAG_DEOPT_LIVE_IN;
/** LLVM calling convention numbers are small; 1023 is CallingConv::MaxID. */
const MAX_CALLING_CONVENTION = 1023;

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

const scratch = new LocationView();

/**
 * Decodes record `r` of `blob` as a statepoint, or returns undefined when it does not have the
 * statepoint shape (a plain stackmap or patchpoint record). See the layout above.
 */
export function decodeStatepoint(
  blob: StackMapBlob,
  r: number,
  recognition: StatepointRecognition = DEFAULT_STATEPOINT_RECOGNITION,
): StatepointShape | undefined {
  const claimed = recognition.statepointIds.has(blob.recordIdBigInt(r));
  const problem = statepointShapeProblem(blob, r);
  if (typeof problem === "string") {
    if (!claimed) return undefined;
    throw new MalformedInputError(
      `statepoint record #${r} (ID ${blob.recordIdBigInt(r)})`,
      blob.sectionOffset + blob.recordOffset(r),
      problem,
      "Constant calling convention, Constant flags (0..3), Constant deopt count D with 3 + D <= NumLocations and an even number of gc-live locations before any trailing Direct allocas",
    );
  }
  return problem;
}

/** The shape of record `r` if it is a statepoint, or a sentence saying what is wrong with it. */
function statepointShapeProblem(blob: StackMapBlob, r: number): StatepointShape | string {
  const n = blob.numLocations(r);
  if (n < 3) return `${n} locations`;
  for (let i = 0; i < 3; i++) {
    const kind = blob.location(r, i, scratch).kind;
    if (kind !== LocationKind.Constant) return `location #${i + 1} of kind ${kind}`;
  }
  const callingConvention = blob.location(r, 0, scratch).smallConstant;
  const flags = blob.location(r, 1, scratch).smallConstant;
  const deoptCount = blob.location(r, 2, scratch).smallConstant;
  if (callingConvention < 0 || callingConvention > MAX_CALLING_CONVENTION) return `calling convention ${callingConvention}`;
  if ((flags & ~STATEPOINT_KNOWN_FLAGS) !== 0) return `flags ${flags}`;
  if (deoptCount < 0 || 3 + deoptCount > n) return `deopt count ${deoptCount} with ${n} locations`;

  const liveStart = 3 + deoptCount;
  let allocasStart = n;
  while (allocasStart > liveStart && blob.location(r, allocasStart - 1, scratch).kind === LocationKind.Direct) allocasStart--;
  // A Direct location can only be an alloca; gc-live pairs come in twos. If the Directs at the
  // tail leave an odd count, the first of them completes the last pair (an alloca used as a gc
  // pointer), which LLVM does not produce for addrspace(1) values, but is not ambiguous either.
  if ((allocasStart - liveStart) % 2 !== 0) allocasStart++;
  if (allocasStart > n) return `${n - liveStart} gc-live locations (odd, no alloca to complete a pair)`;
  return {
    callingConvention,
    flags,
    deoptStart: 3,
    deoptCount,
    pairsStart: liveStart,
    pairCount: (allocasStart - liveStart) / 2,
    allocasStart,
    allocaCount: n - allocasStart,
  };
}
