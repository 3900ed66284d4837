import { TWO_32 } from "../src/bytes/word-codec.js";
import type { WordMemory } from "../src/memory/memory.js";
import { OwnedRegion } from "../src/memory/owned-region.js";
import { scanMemory } from "../src/memory/scan-memory.js";
import { X86_64 } from "../src/arch/x86-64.js";
import type { RegistrySnapshot } from "../src/safepoints/registry.js";
import type { FrameLog } from "./frame-log.js";
import type { RootPairs } from "./frame-roots.js";
import type { ManagedChunk, Unwinder } from "./unwinder.js";
import * as L from "./scan-kernel/kernel-layout.js";
import { type ScanFrames, scanKernel } from "./scan-kernel/load-kernel.js";

/*
 * One scanning thread's binding to the scan kernel (walker/scan-kernel/assembly/kernel.ts): its
 * context block in the scan memory (inputs, the cursor, the callee-saved register slots, the
 * extra boundaries), bound to one walk by `bind`, run chunk by chunk by walker/fast-scan.ts.
 * The caller keeps one per thread and reuses it: nothing is allocated per scan once the regions
 * have grown to the stack's size.
 *
 * The context region: the words of kernel-layout.ts from byte 0, the register slots (f64 each,
 * REG_SLOT_COUNT of them) at REG_SLOTS_BYTE, the extra boundaries (u64 each) after them.
 */

const CONTEXT_BYTES = 4096;
const REG_SLOTS_BYTE = 256;
/** The kernel takes x86-64 frames only (src/safepoints/fast-frame-rule.ts admitsFastFrames): its registers. */
const REG_SLOT_COUNT = X86_64.calleeSavedDwarf.length;
const BOUNDARIES_BYTE = REG_SLOTS_BYTE + 8 * REG_SLOT_COUNT;
const MAX_BOUNDARIES = (CONTEXT_BYTES - BOUNDARIES_BYTE) / 8;
/** Frames per kernel call when a frame log is kept (cross-checks only). */
const LOG_FRAMES = 1024;

export class ScanKernel {
  private readonly context: OwnedRegion;
  private readonly ctx: Uint32Array;
  /** Where each callee-saved register lives for the frame at the cursor (the kernel moves them). */
  readonly regSlots: Float64Array;
  private readonly scanFrames: ScanFrames = scanKernel();
  /** A copy of a stack whose words are outside the scan memory (stackWordsOffset). */
  private scratch: OwnedRegion | undefined;
  private logRegion: OwnedRegion | undefined;
  private logView: Float64Array = new Float64Array(0);
  private log: FrameLog | undefined;
  /**
   * The bound snapshot (enterChunk asks its table whether a chunk's boundary is a safepoint, through
   * the snapshot, which refuses a table whose memory was released: src/safepoints/registration-pool.ts).
   */
  private snapshot: RegistrySnapshot | undefined;
  /** The bound stack's first address and its u32 word count. */
  wordsBase = 0;
  stackU32Count = 0;

  constructor() {
    this.context = OwnedRegion.allocate(this, CONTEXT_BYTES, "scan kernel context");
    const buffer = scanMemory().buffer;
    this.ctx = new Uint32Array(buffer, this.context.offset, L.CTX_U32_COUNT);
    this.regSlots = new Float64Array(buffer, this.context.offset + REG_SLOTS_BYTE, REG_SLOT_COUNT);
  }

  /**
   * Binds a walk over the flat stack `flat`; false (nothing bound) when the kernel cannot take it:
   * more extra boundaries that are safepoints than the context holds. `log`, when given, gets
   * every frame the kernel takes.
   */
  bind(u: Unwinder, flat: WordMemory, log: FrameLog | undefined): boolean {
    const ctx = this.ctx;
    const snapshot = u.snapshot;
    const layout = snapshot.scanLayout;
    // Extra boundaries only matter for return addresses that are also safepoints (the general
    // unwinder tests boundaries first); otherwise a table hit already means "not a boundary".
    let boundaries = 0;
    for (const b of u.options.boundaries ?? []) {
      if (snapshot.table.find(b) < 0) continue;
      if (boundaries === MAX_BOUNDARIES) return false;
      const at = (BOUNDARIES_BYTE >> 2) + 2 * boundaries++;
      scanMemory().words[(this.context.offset >>> 2) + at] = b >>> 0;
      scanMemory().words[(this.context.offset >>> 2) + at + 1] = (b / TWO_32) >>> 0;
    }
    ctx[L.CTX_BOUNDARIES] = this.context.offset + BOUNDARIES_BYTE;
    ctx[L.CTX_BOUNDARY_COUNT] = boundaries;
    this.snapshot = snapshot;
    this.wordsBase = flat.base;
    this.stackU32Count = flat.words.length;
    ctx[L.CTX_STACK_BYTE] = this.stackWordsOffset(flat);
    ctx[L.CTX_STACK_U32_COUNT] = this.stackU32Count;
    ctx[L.CTX_BASE_LO] = flat.base >>> 0;
    ctx[L.CTX_BASE_HI] = (flat.base / TWO_32) >>> 0;
    ctx[L.CTX_LAST_INDEX] = Math.max(0, Math.min(u.maxDepth - 1, 0xffff_ffff));
    ctx[L.CTX_KEYS] = layout.keysOffset;
    ctx[L.CTX_MASK] = layout.mask;
    ctx[L.CTX_SHIFT] = layout.shift;
    ctx[L.CTX_RECIPE_OF_CELL] = layout.recipeOfCellOffset;
    ctx[L.CTX_RECIPES] = layout.recipesOffset;
    ctx[L.CTX_SLOTS] = layout.slotsOffset;
    ctx[L.CTX_SAVES] = layout.savesOffset;
    ctx[L.CTX_REG_SLOTS] = this.context.offset + REG_SLOTS_BYTE;
    this.bindLog(log);
    return true;
  }

  /**
   * THE decision where the kernel reads a stack's words: in place when they are in the scan
   * memory (simulated stacks, and native stacks placed there), otherwise a copy made now into
   * this thread's scratch region (addresses stay the stack's own: only where the words are read
   * from changes). Returns the byte offset of the first word in the scan memory.
   */
  private stackWordsOffset(flat: WordMemory): number {
    const memory = scanMemory();
    if (flat.words.buffer === memory.buffer) return flat.words.byteOffset;
    const bytes = flat.words.byteLength;
    if (this.scratch === undefined) this.scratch = OwnedRegion.allocate(this, bytes, "copy of a stack for the scan kernel");
    else if (this.scratch.sizeBytes < bytes) this.scratch.replace(bytes, "copy of a stack for the scan kernel").release();
    memory.words.set(flat.words, this.scratch.offset >>> 2);
    return this.scratch.offset;
  }

  /** A log of LOG_FRAMES frames per kernel call (run() calls it again until the chunk is done). */
  private bindLog(log: FrameLog | undefined): void {
    this.log = log;
    if (log === undefined) {
      this.ctx[L.CTX_LOG] = 0;
      return;
    }
    this.logRegion ??= OwnedRegion.allocate(this, LOG_FRAMES * 16, "scan kernel frame log");
    this.logView = new Float64Array(scanMemory().buffer, this.logRegion.offset, 2 * LOG_FRAMES);
    this.ctx[L.CTX_LOG] = this.logRegion.offset;
  }

  /** Puts the cursor on the frame (SP as a u32 index into the stack `spU32Index`, `ra`, `index`) of `chunk`. */
  enterChunk(chunk: ManagedChunk, spU32Index: number, ra: number, index: number): void {
    const ctx = this.ctx;
    // Frames at or above the chunk's stack top are the general unwinder's ("stack-top").
    ctx[L.CTX_TOP_U32_INDEX] =
      chunk.stackTop === undefined ? this.stackU32Count : Math.min(this.stackU32Count, Math.max(0, Math.ceil((chunk.stackTop - this.wordsBase) / 4)));
    // As the extra boundaries in bind: only a boundary that is also a safepoint needs the kernel's
    // test (any other return address ends the kernel's walk at its probe anyway); without one the
    // kernel runs its loop without the boundary compare.
    const boundaryRa = chunk.boundaryRa !== undefined && this.snapshot!.table.find(chunk.boundaryRa) >= 0 ? chunk.boundaryRa : 0;
    ctx[L.CTX_BOUNDARY_LO] = boundaryRa >>> 0;
    ctx[L.CTX_BOUNDARY_HI] = (boundaryRa / TWO_32) >>> 0;
    ctx[L.CTX_SP_U32_INDEX] = spU32Index;
    ctx[L.CTX_RA_LO] = ra >>> 0;
    ctx[L.CTX_RA_HI] = (ra / TWO_32) >>> 0;
    ctx[L.CTX_INDEX] = index;
  }

  /**
   * Runs the kernel from the cursor, appending to `out` (grown whenever the next frame's pairs do
   * not fit) and calling it again after a full log; returns the frames taken, at most `maxFrames`
   * (>= 1; a walk's frame marks stop it at their depths). The cursor is then on the first frame not taken.
   */
  run(out: RootPairs, maxFrames = Infinity): number {
    const ctx = this.ctx;
    let taken = 0;
    for (;;) {
      // 0xffff_ffff: no limit (the kernel's unlogged loop); the log and maxFrames set one.
      const limit = Math.min(this.log === undefined ? 0xffff_ffff : LOG_FRAMES, maxFrames - taken);
      ctx[L.CTX_MAX_TAKEN] = limit;
      ctx[L.CTX_OUT_BASE_SLOTS] = out.baseSlots.byteOffset;
      ctx[L.CTX_OUT_DERIVED_SLOTS] = out.derivedSlots.byteOffset;
      ctx[L.CTX_OUT_BASE_VALUES] = out.baseValues.byteOffset;
      ctx[L.CTX_OUT_FRAME_RECORDS] = out.frameRecords.byteOffset;
      ctx[L.CTX_OUT_CAPACITY] = out.baseSlots.length;
      ctx[L.CTX_OUT_COUNT] = out.count;
      ctx[L.CTX_OUT_FRAME_COUNT] = out.frameCount;
      const run = this.scanFrames(this.context.offset);
      out.count = ctx[L.CTX_OUT_COUNT]!;
      out.frameCount = ctx[L.CTX_OUT_FRAME_COUNT]!;
      if (this.log !== undefined) for (let f = 0; f < run; f++) this.log.push(this.logView[2 * f]!, this.logView[2 * f + 1]!);
      taken += run;
      const roomNeeded = ctx[L.CTX_ROOM_NEEDED]!;
      if (roomNeeded !== 0) out.reserve(roomNeeded);
      else if (run !== limit || taken >= maxFrames) return taken;
    }
  }

  /** The cursor's SP and return address. */
  get sp(): number {
    return this.wordsBase + this.ctx[L.CTX_SP_U32_INDEX]! * 4;
  }
  get ra(): number {
    return this.ctx[L.CTX_RA_HI]! * TWO_32 + this.ctx[L.CTX_RA_LO]!;
  }

  /** Drops the reference to this scan's log (the regions stay, for the next scan). */
  unbind(): void {
    this.log = undefined;
  }
}
