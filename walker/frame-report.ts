import { hex } from "../src/errors.js";
import type { Memory } from "../src/memory/memory.js";
import { RootPairs, collectFrameRoots } from "./frame-roots.js";
import type { CalleeSavedName } from "./register-context.js";
import { contextRegisterIndex, readSlot, readSlotExact } from "./slot.js";
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
  /** The caller's SP; null for a frame #0 the walk could not climb (no CFI at its PC). */
  cfa: number | null;
  function: string | undefined;
  /** The architecture's callee-saved registers as they are in this frame, all 64 bits (null: not known). */
  registers: Partial<Record<CalleeSavedName, bigint | null>>;
  /**
   * Each root's value and where it lives: a stack slot's address, or (`register`) a callee-saved
   * register of the walk's starting context that no frame below saved (the value is in the
   * register itself; a register a frame below saved is that frame's save slot).
   */
  roots: FrameRoot[];
  /** Where `pc` was read (the callee's return-address slot); NaN for #0 and a chunk's first frame. */
  pcSlot: number;
}

export type { CalleeSavedName };

export interface FrameRoot {
  slot: number;
  register: CalleeSavedName | undefined;
  value: number;
}

export interface WalkEnd {
  stopReason: string | undefined;
  stopDetail: string;
  /** Frame #0 is managed code stopped where it has no safepoint (kind "managed-unsafe"). */
  inManagedCode: boolean;
}

export interface WalkReport extends WalkEnd {
  frames: FrameReport[];
}

/**
 * Walks `u` from `start` over `memory` to its end and hands every frame, with its roots' values,
 * to `visit` as it goes (nothing is kept: a deep walk's memory is the caller's). A walk that
 * cannot climb even its first frame (its PC has no CFI) still shows frame #0: where it is,
 * its symbol and registers, its CFA unknown.
 */
export function visitFrames(u: Unwinder, memory: Memory, start: WalkStart | readonly ManagedChunk[], visit: (frame: FrameReport) => void): WalkEnd {
  const pairs = new RootPairs();
  let inManagedCode = false;
  let frames = 0;
  for (u.init(start); u.valid(); u.next()) {
    pairs.clear();
    collectFrameRoots(u, pairs);
    const roots: FrameRoot[] = [];
    for (let i = 0; i < pairs.count; i++) {
      const slot = pairs.derivedSlots[i]!;
      const k = contextRegisterIndex(slot);
      roots.push({ slot, register: k < 0 ? undefined : (u.architecture.calleeSavedNames[k] as CalleeSavedName), value: readSlot(slot, memory, u.contexts) });
    }
    if (u.index === 0) inManagedCode = u.kind === "managed-unsafe";
    // A signal frame's CFA is the interrupted frame's SP (the unwinder keeps the address of its slot).
    const cfa = u.kind === "signal" ? memory.readWord(u.cfa) : u.cfa;
    visit({ index: u.index, kind: u.kind, pc: u.ra, sp: u.sp, cfa, function: frameFunction(u), registers: frameRegisters(u, memory), roots, pcSlot: u.pcSlot });
    frames++;
  }
  // Only a frame the unwinder placed (a module, or none, at its PC) and could not climb.
  if (frames === 0 && u.stopReason === "no-unwind-info") {
    inManagedCode = u.kind === "managed-unsafe";
    visit({
      index: 0,
      kind: u.kind,
      pc: u.ra,
      sp: u.sp,
      cfa: null,
      function: frameFunction(u),
      registers: frameRegisters(u, memory),
      roots: [],
      pcSlot: u.pcSlot,
    });
  }
  return { stopReason: u.stopReason, stopDetail: u.stopDetail, inManagedCode };
}

/** visitFrames, keeping every frame. */
export function reportWalk(u: Unwinder, memory: Memory, start: WalkStart | readonly ManagedChunk[]): WalkReport {
  const frames: FrameReport[] = [];
  const end = visitFrames(u, memory, start, (f) => frames.push(f));
  return { frames, ...end };
}

function frameFunction(u: Unwinder): string | undefined {
  return u.kind === "signal" ? "<signal handler called>" : u.functionName();
}

function frameRegisters(u: Unwinder, memory: Memory): FrameReport["registers"] {
  const registers = {} as FrameReport["registers"];
  u.architecture.calleeSavedNames.forEach((name, k) => {
    registers[name as CalleeSavedName] = readSlotExact(u.regSlot(k), memory, u.contexts) ?? null;
  });
  return registers;
}

/**
 * A frame as JSON, for `rootwalk roots --json` and the walk log (ROOTWALK_WALK_LOG): every
 * address, register and root value a hex string ("0x7ffd…"), registers exact to 64 bits (a JSON
 * number holds 53 bits: a register above 2^53 came out rounded).
 */
export function frameReportJson(f: FrameReport): FrameReportJson {
  return {
    kind: f.kind,
    pc: hex(f.pc),
    sp: hex(f.sp),
    cfa: f.cfa === null ? null : hex(f.cfa),
    function: f.function ?? null,
    registers: Object.fromEntries(Object.entries(f.registers).map(([k, v]) => [k, v === null ? null : hex(v)])),
    roots: f.roots.map((r) => (r.register !== undefined ? { register: r.register, value: hex(r.value) } : { slot: hex(r.slot), value: hex(r.value) })),
  };
}

export interface FrameReportJson {
  kind: FrameReport["kind"];
  pc: string;
  sp: string;
  cfa: string | null;
  function: string | null;
  registers: Record<string, string | null>;
  roots: ({ register: CalleeSavedName; value: string } | { slot: string; value: string })[];
}
