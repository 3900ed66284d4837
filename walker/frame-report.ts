import type { Memory } from "../src/memory/memory.js";
import { CALLEE_SAVED_NAMES } from "../src/safepoints/frame-descriptors.js";
import { RootPairs, collectFrameRoots } from "./frame-roots.js";
import { readSlot } from "./slot.js";
import type { ManagedChunk, Unwinder, WalkStart } from "./unwinder.js";

/**
 * One frame of a walk as a person (or a debugger comparison) reads it: what `rootwalk roots`
 * prints and what the native runtime's walk log (ROOTWALK_WALK_LOG) records. Not the scan path:
 * this allocates per frame.
 */
export interface FrameReport {
  index: number;
  kind: Unwinder["kind"];
  /** The frame's address: the stop address for #0 of a core and after a signal, else the return address. */
  pc: number;
  sp: number;
  cfa: number;
  function: string | undefined;
  /** Callee-saved registers as they are in this frame (null: not known). */
  registers: Record<(typeof CALLEE_SAVED_NAMES)[number], number | null>;
  roots: { slot: number; value: number }[];
}

export interface WalkReport {
  frames: FrameReport[];
  stopReason: string | undefined;
  stopDetail: string;
  /** The innermost managed frame is not at a safepoint (the thread stopped inside managed code). */
  inManagedCode: boolean;
}

/** Walks `u` from `start` over `memory` to its end and reports every frame, with its roots' values. */
export function reportWalk(u: Unwinder, memory: Memory, start: WalkStart | readonly ManagedChunk[]): WalkReport {
  const frames: FrameReport[] = [];
  const pairs = new RootPairs();
  let inManagedCode = false;
  for (u.init(start); u.valid(); u.next()) {
    pairs.clear();
    collectFrameRoots(u, pairs);
    const registers = {} as FrameReport["registers"];
    CALLEE_SAVED_NAMES.forEach((name, k) => {
      const v = readSlot(u.regSlot(k), memory, u.contexts);
      registers[name] = Number.isNaN(v) ? null : v;
    });
    const roots: FrameReport["roots"] = [];
    for (let i = 0; i < pairs.count; i++) roots.push({ slot: pairs.derivedSlots[i]!, value: readSlot(pairs.derivedSlots[i]!, memory, u.contexts) });
    if (u.kind === "managed-unsafe" && frames.every((f) => f.kind !== "managed")) inManagedCode = true;
    // A signal frame's CFA is the interrupted frame's SP (the unwinder keeps the address of its slot).
    const cfa = u.kind === "signal" ? memory.readWord(u.cfa) : u.cfa;
    frames.push({ index: u.index, kind: u.kind, pc: u.ra, sp: u.sp, cfa, function: u.kind === "signal" ? "<signal handler called>" : u.functionName(), registers, roots });
  }
  return { frames, stopReason: u.stopReason, stopDetail: u.stopDetail, inManagedCode };
}
