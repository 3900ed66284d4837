import { RootwalkError, hex } from "../src/errors.js";
import { type Memory, WordMemory } from "../src/memory/memory.js";
import {
  CALLEE_SAVED_COUNT,
  DWARF_RBP,
  FLAG_FRAME_POINTER_CFA,
  type FrameDescriptors,
} from "../src/safepoints/frame-descriptors.js";
import type { RegisteredModule, RegistrySnapshot } from "../src/safepoints/registry.js";
import type { RegisterContext } from "./register-context.js";
import { UNKNOWN_SLOT, contextSlot, readSlot } from "./slot.js";
import { type SplitStackTransition, type SplitStacks, splitStackTransition } from "./split-stacks.js";

/*
 * The frame layout at a safepoint on x86-64 (stack grows down; one managed frame shown):
 *
 *        higher addresses
 *   |  caller's frame ...              |
 *   +----------------------------------+ <- CFA = caller's SP after the call returns
 *   |  return address into the caller  |    raSlot = CFA - 8
 *   +----------------------------------+
 *   |  saved rbp (if a frame pointer)  | <- rbp points here in a frame-pointer frame
 *   |  saved callee-saved registers    |    (their CFA offsets come from .eh_frame)
 *   |  spill slots, allocas            |
 *   |  pushed outgoing stack arguments |    (not in StackSize; in the CFA offset)
 *   +----------------------------------+ <- sp: this frame's SP at the safepoint
 *   |  return address into this frame  |    (the callee's raSlot; the frame's `ra`)
 *   |  callee's frame ...              |
 *        lower addresses
 *
 * So for a frame with descriptor d:   raSlot = sp + d.frameSizeBytes, or, when the frame is
 * climbed by its frame pointer (dynamic frames; frame-pointer frames without a static size),
 * raSlot = rbp + cfaOffset - 8 with rbp this frame's own rbp value. The caller's frame then has
 * sp = raSlot + 8 and ra = [raSlot].
 *
 * Register values: the innermost frame's callee-saved registers are in the RegisterContext the
 * runtime captured. Going out one frame, a register this frame saved (descriptor savedRegOffsets,
 * from .eh_frame) lives for the caller in that save slot; one it did not save is still where it
 * was. `regSlots` holds, for the current frame, where each callee-saved register's value lives.
 *
 * Usage, the canonical loop (after Go's runtime/traceback.go unwinder):
 *
 *   const u = new Unwinder(snapshot, memory, options);
 *   for (u.init(start); u.valid(); u.next()) { ...u.sp, u.ra, u.descriptors, u.index... }
 *   u.stopReason  // why the walk ended ("boundary", or in lenient mode the problem)
 *
 * Error policy by mode: "strict" (for collection) throws a WalkError at any frame it cannot
 * account for; the only clean end is a registered boundary (a return address into the runtime's
 * entry, or the top of the stack). "lenient" (for dumping) stops there and records why.
 * Always checked: SP inside memory and 8-aligned, SP strictly increasing (no progress = stuck),
 * a depth limit, return-address slots readable.
 */

export class WalkError extends RootwalkError {
  constructor(
    readonly address: number,
    readonly frameIndex: number,
    readonly problem: string,
    readonly likelyCause: string,
  ) {
    super("WALK", `frame #${frameIndex} at ${hex(address)}: ${problem}; likely cause: ${likelyCause}`);
  }
}

/** Where to start: the innermost managed frame at its safepoint. */
export interface WalkStart {
  /** SP of the innermost managed frame at the safepoint (right after the call returned). */
  sp: number;
  /** The return address into it (the key of its safepoint). */
  ra: number;
  /** Callee-saved registers at the safepoint; needed for roots or frame pointers in registers. */
  registers?: RegisterContext;
}

/** A run of managed frames between an entry from the runtime and a safepoint. */
export interface ManagedChunk extends WalkStart {
  /** The return address into the runtime where this chunk was entered: the chunk ends there. */
  boundaryRa?: number;
  /** Or: the chunk ends when SP reaches this address. */
  stackTop?: number;
}

export interface UnwinderOptions {
  mode: "strict" | "lenient";
  maxDepth?: number;
  /** Return addresses into the runtime's entry points that end a chunk (besides a chunk's own). */
  boundaries?: ReadonlySet<number>;
  /** Segmented (split) stacks: how to cross from one stacklet to the previous. */
  splitStacks?: SplitStacks;
}

export type StopReason =
  | "boundary"
  | "stack-top"
  | "unknown-return-address"
  | "sp-out-of-range"
  | "misaligned-sp"
  | "no-progress"
  | "depth-limit"
  | "unreadable"
  | "split-stack";

const DEFAULT_MAX_DEPTH = 4_000_000;
/** rbp's index in CALLEE_SAVED_DWARF order. */
export const RBP_INDEX = 1;
const MAX_FUNCTION_BYTES = 1 << 20;

export class Unwinder {
  // ---- the current frame (valid while valid() is true) ----
  /** Frame number in this walk, 0 = innermost. */
  index = 0;
  sp = 0;
  ra = 0;
  /** The module and descriptor index of the safepoint at `ra`. */
  module: RegisteredModule | undefined;
  descriptors!: FrameDescriptors;
  descriptor = -1;
  /** CFA of this frame: the caller's SP; the return-address slot is cfa - 8. */
  cfa = 0;
  /** Where each callee-saved register's value lives for this frame (see walker/slot.ts). */
  readonly regSlots = new Float64Array(CALLEE_SAVED_COUNT);
  /** The register context of each chunk (slots name them by chunk index). */
  contexts: (RegisterContext | undefined)[] = [];
  /** Index of the chunk this frame belongs to, and split-stack transitions crossed so far. */
  chunkIndex = 0;
  transitions = 0;

  // ---- how the walk ended ----
  stopReason: StopReason | undefined;
  stopDetail = "";
  /** The return address at which the walk stopped (the boundary in a clean walk). */
  stoppedAt = 0;

  /**
   * Absolute [start, end) of the current frame's function, end being the next function of its
   * module (at most 1 MiB on): for the split-stack geometry.
   */
  calleeFunctionRange(): { start: number; end: number } | undefined {
    if (this.module === undefined || this.descriptor < 0) return undefined;
    const functions = this.descriptors.functions;
    const fn = functions[this.descriptors.functionIndex[this.descriptor]!];
    if (fn === undefined) return undefined;
    let end = fn.address + MAX_FUNCTION_BYTES;
    for (const other of functions) if (other.address > fn.address && other.address < end) end = other.address;
    return { start: fn.address + this.module.loadBias, end: end + this.module.loadBias };
  }

  /** Bases of the memory ranges this walk has been in (split-stack geometry). */
  readonly visitedRanges = new Set<number>();

  private chunks: readonly ManagedChunk[] = [];
  private active = false;
  private readonly maxDepth: number;

  /**
   * When the memory is one flat word array (a simulated stack, a native stack's koffi view),
   * frames inside it are range-checked with two comparisons and return addresses read straight
   * from its words: the per-frame cost that dominated the walk benchmark.
   */
  private readonly words: Uint32Array | undefined;
  private readonly wordsBase: number = 0;
  private readonly wordsEnd: number = 0;

  constructor(
    readonly snapshot: RegistrySnapshot,
    readonly memory: Memory,
    readonly options: UnwinderOptions,
  ) {
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    if (memory instanceof WordMemory && memory.sizeBytes < 2 ** 32) {
      this.words = memory.words;
      this.wordsBase = memory.base;
      this.wordsEnd = memory.base + memory.sizeBytes;
    }
  }

  /** The word at `address`, inside [wordsBase, wordsEnd) and 8-aligned (checked by the caller). */
  private wordAt(address: number): number {
    const i = (address - this.wordsBase) >>> 2;
    return this.words![i + 1]! * 0x1_0000_0000 + this.words![i]!;
  }

  /** Starts (or restarts) a walk: one chunk, or several innermost first. */
  init(start: WalkStart | readonly ManagedChunk[]): this {
    this.chunks = Array.isArray(start) ? start : [start as ManagedChunk];
    this.contexts = this.chunks.map((c) => c.registers);
    this.index = 0;
    this.transitions = 0;
    this.module = undefined;
    this.descriptor = -1;
    this.visitedRanges.clear();
    this.stopReason = undefined;
    this.stopDetail = "";
    this.stoppedAt = 0;
    this.active = true;
    this.enterChunk(0);
    return this;
  }

  valid(): boolean {
    return this.active;
  }

  /** Steps to the caller of the current frame (or into the next chunk). */
  next(): void {
    if (!this.active) return;
    // resolve() checked that [sp, cfa) lies in memory, so the return-address slot is readable.
    const raSlot = this.cfa - 8;
    const callerRa = this.words !== undefined ? this.wordAt(raSlot) : this.memory.readWord(raSlot);
    const d = this.descriptors;
    const base = this.descriptor * CALLEE_SAVED_COUNT;
    for (let k = 0; k < CALLEE_SAVED_COUNT; k++) {
      const offset = d.savedRegOffsets[base + k]!;
      if (offset !== 0) this.regSlots[k] = this.cfa + offset;
    }
    const callerSp = this.cfa;
    this.index++;
    if (this.index >= this.maxDepth) {
      this.fail("depth-limit", callerSp, `${this.index} frames`, "a cyclic or corrupt stack, or a recursion deeper than maxDepth");
      return;
    }
    if (callerSp <= this.sp) {
      this.fail("no-progress", callerSp, `caller SP ${hex(callerSp)} is not above SP ${hex(this.sp)}`, "a corrupt frame size or frame pointer");
      return;
    }
    this.sp = callerSp;
    this.ra = callerRa;
    this.resolve();
  }

  private enterChunk(i: number): void {
    const chunk = this.chunks[i];
    if (chunk === undefined) {
      this.active = false;
      return;
    }
    this.chunkIndex = i;
    this.sp = chunk.sp;
    this.ra = chunk.ra;
    for (let k = 0; k < CALLEE_SAVED_COUNT; k++) {
      this.regSlots[k] = chunk.registers?.isKnown(k) ? contextSlot(i, k) : UNKNOWN_SLOT;
    }
    this.resolve();
  }

  /** Finds the descriptor for (sp, ra) and computes the CFA, or ends the chunk or the walk. */
  private resolve(): void {
    const chunk = this.chunks[this.chunkIndex]!;
    if (chunk.stackTop !== undefined && this.sp >= chunk.stackTop) {
      this.endChunk("stack-top");
      return;
    }
    if (this.ra === chunk.boundaryRa || this.options.boundaries?.has(this.ra)) {
      this.endChunk("boundary");
      return;
    }
    if ((this.sp & 7) !== 0) {
      this.fail("misaligned-sp", this.sp, `SP ${hex(this.sp)} is not 8-byte aligned`, "a corrupt frame size or saved frame pointer");
      return;
    }
    const slot = this.snapshot.table.find(this.ra);
    if (slot < 0) {
      const split = this.options.splitStacks;
      if (split !== undefined) {
        const t = splitStackTransition(split, this, this.memory);
        if (typeof t === "string") {
          this.fail("split-stack", this.ra, t, "an inconsistent stacklet list");
          return;
        }
        if (t !== undefined) {
          this.crossStacklet(t);
          return;
        }
      }
      this.fail(
        "unknown-return-address",
        this.ra,
        `return address ${hex(this.ra)} (read at ${hex(this.sp - 8)}) has no safepoint`,
        this.index === 0
          ? "the walk did not start at a safepoint, or the module's stack map is not registered"
          : "a call from code without a stack map (native code not registered as a boundary), an unregistered module, or a corrupt stack",
      );
      return;
    }
    const module = this.snapshot.moduleBySlot[this.snapshot.table.moduleSlotAt(slot)]!;
    this.module = module;
    this.descriptors = module.descriptors;
    this.descriptor = this.snapshot.table.descriptorAt(slot);
    const d = this.descriptors;
    const i = this.descriptor;
    const frameSize = d.frameSizeBytes[i]!;
    if (frameSize >= 0) {
      this.cfa = this.sp + frameSize + 8;
    } else if ((d.flags[i]! & FLAG_FRAME_POINTER_CFA) !== 0) {
      const k = RBP_INDEX;
      const rbp = readSlot(this.regSlots[k]!, this.memory, this.contexts);
      if (Number.isNaN(rbp)) {
        this.fail("unreadable", this.ra, `frame needs its frame pointer (rbp) and no frame saved it and no register context holds it`, "the safepoint trampoline did not capture rbp");
        return;
      }
      this.cfa = rbp + d.cfaOffsetBytes[i]!;
      // The fixed part of the frame (StackSize, when static) lies between SP and the return-address
      // slot; pushed arguments can only add to it.
      const fixedBytes = Math.max(0, d.stackSizeBytes[i]!);
      if (d.cfaRegister[i] !== DWARF_RBP || this.cfa - 8 - this.sp < fixedBytes) {
        this.fail("no-progress", this.ra, `frame pointer ${hex(rbp)} gives CFA ${hex(this.cfa)}, less than the frame's ${fixedBytes} fixed bytes above SP ${hex(this.sp)}`, "a corrupt saved rbp or starting SP");
        return;
      }
    } else {
      this.fail("unreadable", this.ra, "the frame has no static size and no frame pointer rule", "a stack map without unwind information for a dynamic frame");
      return;
    }
    // One check for the whole frame [sp, cfa): root slots inside it and the return-address slot
    // at cfa - 8 need no further check (frame-roots.ts relies on this).
    const inFlat = this.words !== undefined && this.sp >= this.wordsBase && this.cfa <= this.wordsEnd;
    if (!inFlat && !this.memory.contains(this.sp, this.cfa - this.sp)) {
      if (!this.memory.contains(this.sp, 8)) {
        this.fail("sp-out-of-range", this.sp, `SP ${hex(this.sp)} is outside the stack's memory`, "a corrupt frame size, frame pointer or return address");
      } else {
        this.fail("sp-out-of-range", this.cfa - 8, `return-address slot ${hex(this.cfa - 8)} is outside the stack's memory`, "a corrupt frame size or frame pointer");
      }
    }
  }

  private crossStacklet(t: SplitStackTransition): void {
    this.transitions++;
    if (this.transitions > this.memory.ranges.length + (this.options.splitStacks?.stacklets?.length ?? 0) + 1) {
      this.fail("split-stack", t.newSp, `${this.transitions} stacklet transitions`, "a cyclic stacklet list");
      return;
    }
    this.markVisited(this.sp);
    this.sp = t.newSp;
    this.markVisited(this.sp);
    this.ra = this.read(t.newSp - 8, "return address above the stacklet's old stack");
    if (!this.active) return;
    this.resolve();
  }

  private markVisited(address: number): void {
    for (const r of this.memory.ranges) if (address >= r.base && address < r.base + r.sizeBytes) this.visitedRanges.add(r.base);
  }

  private endChunk(reason: StopReason): void {
    this.stoppedAt = this.ra;
    if (this.chunkIndex + 1 < this.chunks.length) {
      this.enterChunk(this.chunkIndex + 1);
      return;
    }
    this.stopReason = reason;
    this.active = false;
  }

  private read(address: number, what: string): number {
    if ((address & 7) !== 0 || !this.memory.contains(address, 8)) {
      this.fail("unreadable", address, `${what} ${hex(address)} is not readable`, "a corrupt frame size or frame pointer");
      return 0;
    }
    return this.memory.readWord(address);
  }

  private fail(reason: StopReason, address: number, problem: string, likelyCause: string): void {
    this.active = false;
    this.stopReason = reason;
    this.stopDetail = problem;
    this.stoppedAt = this.ra;
    if (this.options.mode === "strict") throw new WalkError(address, this.index, problem, likelyCause);
  }
}
