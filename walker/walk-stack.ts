import { RootPairs, collectFrameRoots } from "./frame-roots.js";
import { crossCheckByDefault, crossCheckScan } from "./scan-cross-check.js";
import { readSlot } from "./slot.js";
import { type ManagedChunk, type StopReason, Unwinder, type UnwinderOptions, type WalkStart, checkWalkStart } from "./unwinder.js";
import { InvalidArgumentError, describeValue } from "../src/errors.js";
import type { Memory } from "../src/memory/memory.js";
import { type RegistrySnapshot, checkSnapshotArgument } from "../src/safepoints/registry.js";

export interface WalkedFrame {
  index: number;
  sp: number;
  ra: number;
  functionName: string | undefined;
  /** CFA (the caller's SP) and the frame kind: managed, native, signal, managed-unsafe. */
  cfa: number;
  kind: Unwinder["kind"];
}

export interface WalkResult {
  frames: WalkedFrame[];
  /** Every root in walk order: its slot and the value in it (the derived value for a pair). */
  roots: { slot: number; value: number; baseSlot: number; frame: number }[];
  pairs: RootPairs;
  transitions: number;
  stopReason: StopReason | undefined;
  stopDetail: string;
  stoppedAt: number;
  contexts: Unwinder["contexts"];
}

export interface WalkStackOptions extends UnwinderOptions {
  /** Also walk it with the fast scan loop and fail unless both agree (walker/scan-cross-check.ts). */
  crossCheck?: boolean;
}

/** Walks a whole stack once and collects every frame and root (for dumps and tests). */
export function walkStack(snapshot: RegistrySnapshot, memory: Memory, given: WalkStart | readonly ManagedChunk[], options: WalkStackOptions): WalkResult {
  checkSnapshotArgument(snapshot);
  if (typeof (memory as Partial<Memory> | null)?.readWord !== "function" || typeof memory.contains !== "function")
    throw new InvalidArgumentError("memory", describeValue(memory), "a Memory (new SimulatedMemory(base, sizeBytes), or an object with its methods)");
  const start = Array.isArray(given)
    ? given.map((chunk: ManagedChunk, i) => checkWalkStart(chunk, `chunks[${i}]`))
    : checkWalkStart(given as ManagedChunk | undefined, "start");
  if (options?.crossCheck ?? crossCheckByDefault()) crossCheckScan(snapshot, memory, start, options);
  const u = new Unwinder(snapshot, memory, options);
  const pairs = new RootPairs();
  const frames: WalkedFrame[] = [];
  for (u.init(start); u.valid(); u.next()) {
    frames.push({ index: u.index, sp: u.sp, ra: u.ra, functionName: u.functionName(), cfa: u.cfa, kind: u.kind });
    collectFrameRoots(u, pairs);
  }
  const roots: WalkResult["roots"] = [];
  for (let i = 0; i < pairs.count; i++) {
    const slot = pairs.derivedSlots[i]!;
    roots.push({ slot, value: readSlot(slot, memory, u.contexts), baseSlot: pairs.baseSlots[i]!, frame: pairs.frameOf(i) });
  }
  return { frames, roots, pairs, transitions: u.transitions, stopReason: u.stopReason, stopDetail: u.stopDetail, stoppedAt: u.stoppedAt, contexts: u.contexts };
}
