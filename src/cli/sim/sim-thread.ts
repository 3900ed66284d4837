import { X86_64 } from "../../arch/x86-64.js";
import { locationDwarfReg, LocationKind, locationKind } from "../../location/location-word.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Mutator } from "../../../gc/immix-allocator.js";
import { InvalidArgumentError } from "../../errors.js";
import { loadObjectStackMaps } from "../../loader/object-file.js";
import { SimulatedMemory } from "../../memory/memory.js";
import { DWARF_RBP, DWARF_RSP, FLAG_FRAME_POINTER_CFA } from "../../safepoints/frame-descriptors.js";
import { SafepointRegistry } from "../../safepoints/registry.js";
import { compileProgram } from "../../toolchain/compile-program.js";
import { repoRoot } from "../../toolchain/llvm-toolchain.js";
import { RegisterContext } from "../../../walker/register-context.js";
import type { ThreadStack } from "../../../walker/stack-root-scanner.js";

/*
 * Simulated mutator threads whose stacks hold real frames: each frame is laid out from a safepoint
 * of a compiled statepoint program (src/demo/sim-frames.ll, llc -O2), as the CPU would leave it
 * while the frame waits at that call:
 *
 *   cfa      = the caller's SP (the stack top for the outermost frame)
 *   cfa - 8  = the return address into the caller (the caller's safepoint), or the runtime's
 *              entry return address for the outermost frame
 *   sp       = cfa - 8 - frameBytes (the safepoint's effective frame size: pushed arguments
 *              included; a frame-pointer frame also saves the caller's rbp where .eh_frame says
 *              and sets rbp = cfa - 16)
 *   sp + off = the safepoint's root slots: the frame's GC-pointer locals
 *
 * A collection walks these stacks with the real walker, from the innermost frame's SP and
 * return address and the thread's rbp.
 */

/** A safepoint's frame shape, read from the compiled map. */
export interface FrameTemplate {
  function: string;
  /** The safepoint's return address (absolute, load bias applied). */
  ra: number;
  /** SP to the return-address slot. */
  frameBytes: number;
  /** Climbed by rbp: the frame saves the caller's rbp at cfa + rbpSaveOffset and sets rbp = cfa - 16. */
  framePointer: boolean;
  rbpSaveOffset: number;
  /** SP-relative root slots (base == derived), then derived pairs as [base, derived] offsets. */
  slots: number[];
  derived: [number, number][];
  /** The effective frame size differs from StackSize: arguments pushed for the call. */
  pushedArgs: boolean;
}

export const SIM_LOAD_BIAS = 0x40_0000;
/** The return address into the (simulated) runtime entry that ends every simulated stack. */
export const SIM_ENTRY_RA = 0x10_0000;

/** Compiles the sim's program and reads one template per function: its safepoint with most roots. */
export async function loadFrameTemplates(): Promise<{ registry: SafepointRegistry; templates: Map<string, FrameTemplate> }> {
  const source = join(repoRoot(), "src", "demo", "sim-frames.ll");
  const object = await compileProgram(source, { mode: "statepoint", optFlags: ["-spp-rematerialization-threshold=0"] });
  const loaded = loadObjectStackMaps(readFileSync(object), object);
  if (loaded === undefined) throw new InvalidArgumentError("sim program", object, "an object with stack maps");
  const registry = new SafepointRegistry();
  registry.register({ name: "sim-frames", format: "llvm-v3", descriptors: loaded.descriptors, loadBias: SIM_LOAD_BIAS, contentKey: loaded.contentKey });
  const d = loaded.descriptors;
  const templates = new Map<string, FrameTemplate>();
  for (let i = 0; i < d.count; i++) {
    const name = d.functions[d.functionIndex[i]!]!.name ?? `fn${d.functionIndex[i]}`;
    const framePointer = (d.flags[i]! & FLAG_FRAME_POINTER_CFA) !== 0;
    const frameBytes = d.frameSizeBytes[i]! >= 0 ? d.frameSizeBytes[i]! : d.stackSizeBytes[i]!;
    if (frameBytes < 0) continue; // a dynamic frame: not simulated
    const spOffset = (loc: number): number | undefined => {
      const w0 = d.locations[loc * 2]!;
      const off = d.locations[loc * 2 + 1]!;
      if (locationKind(w0) !== LocationKind.Indirect) return undefined;
      const reg = locationDwarfReg(w0);
      if (reg === DWARF_RSP) return off;
      if (reg === DWARF_RBP && framePointer) return frameBytes + 8 - 16 + off;
      return undefined;
    };
    const slots: number[] = [];
    const derived: [number, number][] = [];
    let usable = true;
    for (let p = 0; p < d.pairCount[i]!; p++) {
      const base = spOffset(d.pairs[(d.pairStart[i]! + p) * 2]!);
      const der = spOffset(d.pairs[(d.pairStart[i]! + p) * 2 + 1]!);
      if (base === undefined || der === undefined) usable = false;
      else if (base === der) slots.push(base);
      else derived.push([base, der]);
    }
    const previous = templates.get(name);
    if (!usable || (previous !== undefined && previous.slots.length + previous.derived.length >= slots.length + derived.length)) continue;
    templates.set(name, {
      function: name,
      ra: d.returnAddress[i]! + SIM_LOAD_BIAS,
      frameBytes,
      framePointer,
      rbpSaveOffset: d.savedRegOffsets[i * d.architecture.calleeSavedDwarf.length + d.architecture.framePointerIndex]!,
      slots: [...new Set(slots)],
      derived,
      pushedArgs: d.frameSizeBytes[i]! >= 0 && d.frameSizeBytes[i] !== d.stackSizeBytes[i],
    });
  }
  return { registry, templates };
}

/** One frame on a simulated stack: its root slots hold the frame's GC-pointer locals. */
export class SimFrame {
  constructor(
    readonly thread: SimThread,
    readonly template: FrameTemplate,
    readonly sp: number,
  ) {}
  /** Number of plain root slots. */
  get size(): number {
    return this.template.slots.length;
  }
  get(i: number): number {
    return this.thread.stack.readWord(this.sp + this.template.slots[i]!);
  }
  set(i: number, value: number): void {
    this.thread.stack.writeWord(this.sp + this.template.slots[i]!, value);
  }
  /** A derived pair: stores base and base + offsetBytes; `derivedOffset` reads the offset back. */
  setDerived(i: number, base: number, offsetBytes: number): void {
    const [b, d] = this.template.derived[i]!;
    this.thread.stack.writeWord(this.sp + b, base);
    this.thread.stack.writeWord(this.sp + d, base + offsetBytes);
  }
  derivedBase(i: number): number {
    return this.thread.stack.readWord(this.sp + this.template.derived[i]![0]);
  }
  derivedValue(i: number): number {
    return this.thread.stack.readWord(this.sp + this.template.derived[i]![1]);
  }
}

const POISON = 0xdead_beef;

export class SimThread {
  readonly stack: SimulatedMemory;
  readonly frames: SimFrame[] = [];
  private readonly top: number;
  /** The thread's rbp register (frame-pointer frames set it; the walker needs it). */
  private rbp = POISON;
  maxDepth = 0;
  private allocations = 0;

  constructor(
    readonly index: number,
    readonly mutator: Mutator,
    stackBytes: number,
    /** Stress mode with a period: collect before every `every`-th allocation. */
    private readonly stress?: { every: number; collect: () => void },
  ) {
    const base = 0x7f00_0000_0000 + index * 0x1_0000_0000;
    this.stack = new SimulatedMemory(base, stackBytes);
    this.top = base + stackBytes;
  }

  /** Enters a function: lays out its frame below the current innermost one. */
  push(template: FrameTemplate): SimFrame {
    const caller = this.frames[this.frames.length - 1];
    const cfa = caller === undefined ? this.top : caller.sp;
    const sp = cfa - 8 - template.frameBytes;
    if (sp < this.stack.base + 64)
      throw new InvalidArgumentError("simulated stack", `${this.frames.length} frames`, `at most what ${this.stack.sizeBytes} bytes hold`);
    this.stack.writeWord(cfa - 8, caller === undefined ? SIM_ENTRY_RA : caller.template.ra);
    if (template.rbpSaveOffset !== 0) this.stack.writeWord(cfa + template.rbpSaveOffset, this.rbp);
    if (template.framePointer) this.rbp = cfa - 16;
    const frame = new SimFrame(this, template, sp);
    for (const off of template.slots) this.stack.writeWord(sp + off, 0);
    for (const [b, d] of template.derived) {
      this.stack.writeWord(sp + b, 0);
      this.stack.writeWord(sp + d, 0);
    }
    this.frames.push(frame);
    if (this.frames.length > this.maxDepth) this.maxDepth = this.frames.length;
    return frame;
  }

  /** Leaves the innermost function (restoring rbp as its epilogue would). */
  pop(): void {
    const frame = this.frames.pop();
    if (frame === undefined) return;
    const cfa = frame.sp + 8 + frame.template.frameBytes;
    if (frame.template.rbpSaveOffset !== 0) this.rbp = this.stack.readWord(cfa + frame.template.rbpSaveOffset);
  }

  /** Runs `body` in a new frame of `template`. */
  call<T>(template: FrameTemplate, body: (frame: SimFrame) => T): T {
    const frame = this.push(template);
    try {
      return body(frame);
    } finally {
      this.pop();
    }
  }

  alloc(pointerSlots: number, rawBytes: number): number {
    if (this.stress !== undefined && ++this.allocations % this.stress.every === 0) this.stress.collect();
    return this.mutator.alloc(pointerSlots, rawBytes);
  }

  /** The thread's stack as the root scanner sees it: one managed chunk, from the innermost frame. */
  threadStack(): ThreadStack | undefined {
    const inner = this.frames[this.frames.length - 1];
    if (inner === undefined) return undefined;
    return {
      memory: this.stack,
      chunks: [{ sp: inner.sp, ra: inner.template.ra, registers: RegisterContext.from({ rbp: this.rbp }, X86_64), boundaryRa: SIM_ENTRY_RA }],
    };
  }
}
