import { InvalidArgumentError, RootwalkError, hex } from "../src/errors.js";
import { addressArgument } from "../src/bytes/address-argument.js";
import { readU64 } from "../src/bytes/word-codec.js";
import { type Memory, flatWords } from "../src/memory/memory.js";
import type { Architecture } from "../src/arch/architecture.js";
import { MAX_CALLEE_SAVED_COUNT } from "../src/arch/elf-architecture.js";
import { X86_64 } from "../src/arch/x86-64.js";
import { FLAG_FRAME_POINTER_CFA, FLAG_RETURN_ADDRESS_SIGNED, calleeSavedIndex, type FrameDescriptors } from "../src/safepoints/frame-descriptors.js";
import { admitsFastFrames } from "../src/safepoints/fast-frame-rule.js";
import type { RegisteredModule, RegistrySnapshot } from "../src/safepoints/registry.js";
import type { MappedModule, ModuleMap } from "../src/unwind/module-map.js";
import type { RegisterContext } from "./register-context.js";
import { type NativeStep, isSigreturnTrampoline, nativeStep, signalFrameSlots, stripSignature } from "./native-frame.js";
import { UNKNOWN_SLOT, contextSlot, isMemorySlot, readSlot } from "./slot.js";
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
 * On AArch64 (the walk's architecture: the snapshot's, src/arch/aarch64.ts) `bl` pushes nothing:
 * CFA = sp + d.frameSizeBytes (or x29 + cfaOffset), the caller's SP is the CFA, and the return
 * address is the caller's x30: the slot where this frame saved x30 (its CFI rule for column 30,
 * d.savedRegOffsets), or, in a frame that did not save it (an innermost native frame), x30 itself.
 * `raSlot` is therefore a slot of walker/slot.ts (a stack address or a context register), and a
 * return address the CFI marks signed (pointer authentication) is stripped of its signature.
 * x19-x30 are tracked through frames like rbx..r15 on x86-64.
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
 *
 * Native frames (options.modules given): a return address with no safepoint is looked up in the
 * module map and its frame climbed by the CFI row at the call (ra - 1; the address itself when
 * it is exact: the innermost frame of a stop that was not a call, or the frame a signal
 * interrupted): CFA rule, the return-address slot, and every callee-saved register's rule, so a
 * root that a managed frame further out keeps in a register resolves through native frames
 * (walker/native-frame.ts). A return address at the sigreturn trampoline (__restore_rt) is a
 * signal frame: the interrupted frame's SP, PC and registers are in the saved ucontext. A frame
 * whose row makes the return address undefined (clone3, _start) is the stack's outermost frame:
 * the walk ends cleanly after it ("stack-end"). A managed function (one with a stack map) at an
 * address that is not a safepoint is refused in strict mode and reported as kind "managed-unsafe"
 * in lenient mode; an address with neither a safepoint nor CFI is "no-unwind-info" naming the
 * module. The chunk list stays an optional fast path: boundaries still end chunks first.
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
  /**
   * `ra` is the interrupted instruction itself (a signal, a debugger, a core file), not a return
   * address: its CFI row is looked up at `ra`, not at the call before it.
   */
  pcIsExact?: boolean;
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
  /** Every mapped ELF: frames without a safepoint are climbed by their CFI (see above). */
  modules?: ModuleMap;
  /** The machine walked when the snapshot has no maps to say (a core without stack maps); default x86-64. */
  architecture?: Architecture;
  /**
   * The address of the native runtime's rw_return_barrier_trampoline, when known (a core that
   * maps librwruntime, a snapshot naming it): a return address equal to it is an armed return
   * barrier whose original return address the walk was not given, and ends the walk with
   * "return-barrier" naming the slot, never "no safepoint". A core's barriers with a table entry
   * are restored before the walk reads them (src/core/return-barrier-memory.ts).
   */
  returnBarrierTrampoline?: number;
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
  | "split-stack"
  | "stack-end"
  | "no-unwind-info"
  | "managed-not-at-safepoint"
  | "return-barrier";

/** What the current frame is: a managed frame at a safepoint, a native frame climbed by CFI, a
 * signal trampoline, or (lenient walks only) a managed frame stopped where it has no safepoint. */
export type FrameKind = "managed" | "native" | "signal" | "managed-unsafe";

export const DEFAULT_MAX_DEPTH = 4_000_000;

/*
 * The walk's inputs checked where a library caller hands them over (a JavaScript caller can pass
 * anything): an unknown mode or a maxDepth below 1 was ignored (the Unwinder checks its options);
 * an SP or return address that is no whole number in [0, 2^53) was walked as given, a fraction
 * giving frames at fractional addresses, a string an empty walk (walkStack checks its start; the
 * Unwinder's own init takes registers as they are, a core's thread whose SP is kernel garbage
 * included, and ends that walk on it). Each is an InvalidArgumentError naming the field. A bigint
 * below 2^53 (an address read as a 64-bit word) is taken as the number it is exactly.
 */
function checkUnwinderOptions(options: UnwinderOptions): void {
  if (typeof options !== "object" || options === null) throw new InvalidArgumentError("options", String(options), '{ mode: "strict" | "lenient", ... }');
  if (options.mode !== "strict" && options.mode !== "lenient") throw new InvalidArgumentError("options.mode", String(options.mode), "strict | lenient");
  const depth = options.maxDepth;
  if (depth !== undefined && !(Number.isSafeInteger(depth) && depth >= 1))
    throw new InvalidArgumentError("options.maxDepth", String(depth), "a whole number of frames, 1 or more");
}

/** A caller's walk start or chunk, checked, with every address a plain number (the same object when all were). */
export function checkWalkStart(chunk: ManagedChunk | undefined, name: string): ManagedChunk {
  if (typeof chunk !== "object" || chunk === null) throw new InvalidArgumentError(name, String(chunk), "{ sp, ra, registers? }");
  let checked = chunk;
  for (const field of ["sp", "ra", "boundaryRa", "stackTop"] as const) {
    const value: unknown = chunk[field];
    if (value === undefined && field !== "sp" && field !== "ra") continue;
    const address = addressArgument(value, `${name}.${field}`);
    if (address !== value) checked = { ...checked, [field]: address };
  }
  if (chunk.registers !== undefined && typeof (chunk.registers as Partial<RegisterContext> | null)?.isKnown !== "function") {
    throw new InvalidArgumentError(`${name}.registers`, String(chunk.registers), "a RegisterContext (RegisterContext.from({ rbx: ... }, X86_64))");
  }
  return checked;
}

const MAX_FUNCTION_BYTES = 1 << 20;

const MANAGED_STARTS = new WeakMap<RegistrySnapshot, Set<number>>();

export class Unwinder {
  // ---- the current frame (valid while valid() is true) ----
  /** Frame number in this walk, 0 = innermost. */
  index = 0;
  sp = 0;
  ra = 0;
  /** The module of the safepoint at `ra`. */
  module: RegisteredModule | undefined;
  /**
   * The safepoint's descriptor: row `descriptor` of `descriptors`, which are the module's
   * descriptors, or for a module whose descriptors are deferred the block that holds it.
   */
  descriptors!: FrameDescriptors;
  descriptor = -1;
  /** CFA of this frame: the caller's SP. */
  cfa = 0;
  /** Where the caller's return address (or, in a signal frame, its PC) is read: a walker/slot.ts slot. */
  raSlot = 0;
  /** Where this frame's own `ra` was read (the callee's raSlot); NaN for a chunk's first frame. */
  pcSlot = Number.NaN;
  /** options.returnBarrierTrampoline, or -1 (no return address equals it). */
  private readonly trampoline: number;
  /** The return address in raSlot is signed (AArch64 pointer authentication): strip it when read. */
  raSigned = false;
  kind: FrameKind = "managed";
  /** The ELF module of a non-managed frame (module map walks). */
  nativeModule: MappedModule | undefined;
  /** The frame's address is exact (not a return address after a call). */
  pcExact = false;
  /** The frame's row says the caller's return address is undefined: this is the outermost frame. */
  private outermost = false;
  private readonly step: NativeStep = { cfa: 0, raSlot: 0, raSigned: false, outermost: false, problem: "" };
  /** Sized for every architecture; only the first `calleeSavedCount` entries are used. */
  private readonly nextSlots = new Float64Array(MAX_CALLEE_SAVED_COUNT);
  private managedStarts: ReadonlySet<number> | undefined;
  /** Where each callee-saved register's value lives for this frame (see walker/slot.ts). */
  private readonly regSlots = new Float64Array(MAX_CALLEE_SAVED_COUNT);
  /** The walk's architecture (the snapshot's; UnwinderOptions.architecture for a snapshot without maps). */
  architecture: Architecture = X86_64;
  /** architecture.calleeSavedDwarf.length: the register slots in use. */
  calleeSavedCount = 0;
  /** The fast loop's frames and the general path's common case exist on this architecture (src/safepoints/fast-frame-rule.ts). */
  fastFramesAdmitted = true;
  /** calleeSavedDwarf index of the return-address column (AArch64 x30), or -1 (x86-64's is not a register). */
  private raRegisterIndex = -1;
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
  readonly maxDepth: number;

  /**
   * When the memory is one flat word array (a simulated stack, a native stack's koffi view),
   * frames inside it are range-checked with two comparisons and return addresses read straight
   * from its words: the per-frame cost that dominated the walk benchmark.
   */
  private words: Uint32Array | undefined;
  private wordsBase = 0;
  private wordsEnd = 0;
  snapshot: RegistrySnapshot;
  memory: Memory;

  constructor(
    snapshot: RegistrySnapshot,
    memory: Memory,
    readonly options: UnwinderOptions,
  ) {
    checkUnwinderOptions(options);
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    this.trampoline = options.returnBarrierTrampoline ?? -1;
    this.snapshot = snapshot;
    this.memory = memory;
    this.bindWords();
    this.bindArchitecture();
  }

  /** The snapshot's architecture (one per snapshot: src/safepoints/registry.ts), or the option's. */
  private bindArchitecture(): void {
    const a = this.snapshot.architecture ?? this.options.architecture ?? X86_64;
    this.architecture = a;
    this.calleeSavedCount = a.calleeSavedDwarf.length;
    this.raRegisterIndex = calleeSavedIndex(a.dwarf.returnAddress, a);
    this.fastFramesAdmitted = admitsFastFrames(a);
  }

  /**
   * Points this unwinder at another snapshot and memory (the next collection's view of the same
   * thread's stack), keeping its arrays: a scanner reuses one unwinder per thread. Only between
   * walks (a walk in progress ends here).
   */
  rebind(snapshot: RegistrySnapshot, memory: Memory): void {
    if (snapshot !== this.snapshot) this.managedStarts = undefined;
    this.snapshot = snapshot;
    this.memory = memory;
    this.active = false;
    this.bindWords();
    this.bindArchitecture();
  }

  private bindWords(): void {
    const flat = flatWords(this.memory);
    if (flat !== undefined) {
      this.words = flat.words;
      this.wordsBase = flat.base;
      this.wordsEnd = flat.base + flat.sizeBytes;
    } else {
      this.words = undefined;
      this.wordsBase = 0;
      this.wordsEnd = 0;
    }
  }

  /** The word at `address`, inside [wordsBase, wordsEnd) and 8-aligned (checked by the caller). */
  private wordAt(address: number): number {
    return readU64(this.words!, (address - this.wordsBase) >>> 2);
  }

  /**
   * The value in a slot of this walk (walker/slot.ts), as readSlot gives it: straight from the flat
   * words for an aligned stack slot inside them, through Memory/the register contexts otherwise.
   */
  slotValue(slot: number): number {
    if (this.words !== undefined && slot >= this.wordsBase && slot + 8 <= this.wordsEnd && (slot & 7) === 0) return this.wordAt(slot);
    return readSlot(slot, this.memory, this.contexts);
  }

  /** Where callee-saved register k's value lives for the current frame (a walker/slot.ts slot). */
  regSlot(k: number): number {
    return this.regSlots[k]!;
  }

  /**
   * Copies the callee-saved registers' slots for the current frame into `out` (its first
   * out.length; resumeAt hands back the same number, and the fast loop takes no frame of an
   * architecture with more registers than its array: src/safepoints/fast-frame-rule.ts).
   */
  copyRegSlots(out: Float64Array): void {
    out.set(this.regSlots.subarray(0, Math.min(out.length, this.regSlots.length)));
  }

  /** Starts (or restarts) a walk: one chunk, or several innermost first. */
  init(start: WalkStart | readonly ManagedChunk[]): this {
    this.chunks = Array.isArray(start) ? start : [start as ManagedChunk];
    // Refilled in place: no allocation per walk once it has the chunk count.
    this.contexts.length = this.chunks.length;
    for (let i = 0; i < this.chunks.length; i++) this.contexts[i] = this.chunks[i]!.registers;
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

  /** The chunk the current frame belongs to. */
  get chunk(): ManagedChunk {
    return this.chunks[this.chunkIndex]!;
  }

  /**
   * Continues the walk at frame `index` with (sp, ra) and the callee-saved register slots
   * `regSlots`, in the current chunk, after a caller (the fast scan loop) stepped over frames
   * itself, moving the register slots as `next` does: resolves that frame exactly as `next`
   * would have.
   */
  resumeAt(sp: number, ra: number, index: number, regSlots: Float64Array): void {
    this.regSlots.set(regSlots);
    this.pcSlot = Number.NaN;
    this.sp = sp;
    this.ra = ra;
    this.pcExact = false; // the frame below it was a managed frame at a call
    this.index = index;
    this.resolve();
  }

  /** Steps to the caller of the current frame (or into the next chunk). */
  next(): void {
    if (!this.active) return;
    if (this.outermost) {
      this.stoppedAt = this.ra;
      this.endChunk("stack-end");
      return;
    }
    // resolve() checked that the return-address slot is readable.
    const raSlot = this.raSlot;
    let callerRa = this.words !== undefined && raSlot >= this.wordsBase && raSlot + 8 <= this.wordsEnd ? this.wordAt(raSlot) : this.readReturnAddress(raSlot);
    if (Number.isNaN(callerRa)) return;
    if (this.raSigned) callerRa = stripSignature(this.architecture, raSlot, this.memory, this.contexts);
    let callerSp = this.cfa;
    let callerExact = false;
    if (this.kind === "managed") {
      const d = this.descriptors;
      const count = this.calleeSavedCount;
      const base = this.descriptor * count;
      for (let k = 0; k < count; k++) {
        const offset = d.savedRegOffsets[base + k]!;
        if (offset !== 0) this.regSlots[k] = this.cfa + offset;
      }
    } else {
      this.regSlots.set(this.nextSlots);
      if (this.kind === "signal") {
        callerSp = this.memory.readWord(this.cfa);
        callerExact = true;
      }
    }
    this.index++;
    if (this.index >= this.maxDepth) {
      this.fail("depth-limit", callerSp, `${this.index} frames`, "a cyclic or corrupt stack, or a recursion deeper than maxDepth");
      return;
    }
    // A signal handler may run on an alternate stack: the interrupted SP can then be anywhere.
    if (callerSp <= this.sp && this.kind !== "signal") {
      this.fail("no-progress", callerSp, `caller SP ${hex(callerSp)} is not above SP ${hex(this.sp)}`, "a corrupt frame size or frame pointer");
      return;
    }
    this.sp = callerSp;
    this.ra = callerRa;
    this.pcSlot = raSlot;
    this.pcExact = callerExact;
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
    this.pcSlot = Number.NaN;
    this.pcExact = chunk.pcIsExact === true;
    for (let k = 0; k < this.calleeSavedCount; k++) {
      this.regSlots[k] = chunk.registers?.isKnown(k) ? contextSlot(i, k) : UNKNOWN_SLOT;
    }
    this.resolve();
  }

  /**
   * Finds the descriptor for (sp, ra) and computes the CFA, or ends the chunk or the walk. Runs
   * once per frame: it and the helpers below only set fields, never allocate.
   */
  private resolve(): void {
    if (this.stopsBeforeFrame()) return;
    this.outermost = false;
    const slot = this.snapshot.table.find(this.ra);
    if (slot < 0) {
      this.resolveWithoutSafepoint();
      return;
    }
    this.selectDescriptor(slot);
    if (!this.computeManagedCfa()) return;
    this.locateReturnAddressSlot();
    this.checkFrameInMemory();
  }

  /**
   * Ends the chunk at its stack top or at a boundary return address, or fails the walk on a
   * misaligned SP; true when one of them happened and there is no frame to resolve.
   */
  private stopsBeforeFrame(): boolean {
    const chunk = this.chunks[this.chunkIndex]!;
    if (chunk.stackTop !== undefined && this.sp >= chunk.stackTop) {
      this.endChunk("stack-top");
      return true;
    }
    if (this.ra === chunk.boundaryRa || this.options.boundaries?.has(this.ra)) {
      this.endChunk("boundary");
      return true;
    }
    if (this.ra === this.trampoline) {
      const where = Number.isNaN(this.pcSlot) ? "the walk's first return address" : `return-address slot ${hex(this.pcSlot)}`;
      const problem = `${where} holds the return-barrier trampoline ${hex(this.ra)} and no table entry gives its original return address`;
      this.fail(
        "return-barrier",
        Number.isNaN(this.pcSlot) ? this.sp : this.pcSlot,
        problem,
        "a stack read while the runtime's return barriers were armed, without its rw_return_barriers table",
      );
      return true;
    }
    if ((this.sp & 7) !== 0) {
      this.fail("misaligned-sp", this.sp, `SP ${hex(this.sp)} is not 8-byte aligned`, "a corrupt frame size or saved frame pointer");
      return true;
    }
    return false;
  }

  /**
   * A return address with no safepoint: the next stacklet of a split stack, else a native frame
   * climbed by CFI when modules are mapped, else the walk fails naming the address.
   */
  private resolveWithoutSafepoint(): void {
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
    if (this.options.modules !== undefined) {
      this.module = undefined;
      this.descriptor = -1;
      this.resolveNative(this.options.modules);
      return;
    }
    this.fail(
      "unknown-return-address",
      this.ra,
      `return address ${hex(this.ra)}${this.architecture.callPushBytes > 0 ? ` (read at ${hex(this.sp - this.architecture.callPushBytes)})` : ""} has no safepoint`,
      this.index === 0
        ? "the walk did not start at a safepoint, or the module's stack map is not registered"
        : "a call from code without a stack map (native code not registered as a boundary), an unregistered module, or a corrupt stack",
    );
  }

  /** A managed frame at table slot `slot`: its module, descriptor table and row. */
  private selectDescriptor(slot: number): void {
    const module = this.snapshot.moduleBySlot[this.snapshot.table.moduleSlotAt(slot)]!;
    this.kind = "managed";
    this.nativeModule = undefined;
    this.module = module;
    const deferred = module.deferred;
    if (deferred === undefined) {
      this.descriptors = module.descriptors;
      this.descriptor = this.snapshot.table.descriptorAt(slot);
    } else {
      // Descriptors decoded on demand, a block at a time (src/loader/deferred-llvm-descriptors.ts).
      const safepoint = this.snapshot.table.descriptorAt(slot);
      this.descriptors = deferred.descriptorsOf(safepoint);
      this.descriptor = deferred.rowOf(safepoint);
    }
  }

  /**
   * The managed frame's CFA: SP plus its static size, or its frame pointer plus the CFA offset
   * (checked to lie above the frame's fixed bytes); false after failing the walk.
   */
  private computeManagedCfa(): boolean {
    const d = this.descriptors;
    const i = this.descriptor;
    const frameSize = d.frameSizeBytes[i]!;
    const a = this.architecture;
    if (frameSize >= 0) {
      this.cfa = this.sp + frameSize + a.callPushBytes;
      return true;
    }
    if ((d.flags[i]! & FLAG_FRAME_POINTER_CFA) === 0) {
      this.fail("unreadable", this.ra, "the frame has no static size and no frame pointer rule", "a stack map without unwind information for a dynamic frame");
      return false;
    }
    const fpName = a.calleeSavedNames[a.framePointerIndex];
    const fp = readSlot(this.regSlots[a.framePointerIndex]!, this.memory, this.contexts);
    if (Number.isNaN(fp)) {
      this.fail(
        "unreadable",
        this.ra,
        `frame needs its frame pointer (${fpName}) and no frame saved it and no register context holds it`,
        `the safepoint trampoline did not capture ${fpName}`,
      );
      return false;
    }
    this.cfa = fp + d.cfaOffsetBytes[i]!;
    // The fixed part of the frame (StackSize, when static) lies between SP and the return-address
    // slot; pushed arguments can only add to it.
    const fixedBytes = Math.max(0, d.stackSizeBytes[i]!);
    if (d.cfaRegister[i] !== a.dwarf.fp || this.cfa - a.callPushBytes - this.sp < fixedBytes) {
      this.fail(
        "no-progress",
        this.ra,
        `frame pointer ${hex(fp)} gives CFA ${hex(this.cfa)}, less than the frame's ${fixedBytes} fixed bytes above SP ${hex(this.sp)}`,
        `a corrupt saved ${fpName} or starting SP`,
      );
      return false;
    }
    return true;
  }

  /** Whether the managed frame's return address is signed, and the slot that holds it. */
  private locateReturnAddressSlot(): void {
    const d = this.descriptors;
    const i = this.descriptor;
    this.raSigned = (d.flags[i]! & FLAG_RETURN_ADDRESS_SIGNED) !== 0;
    const raCfaOffset = this.architecture.returnAddressCfaOffsetBytes;
    if (raCfaOffset !== undefined) this.raSlot = this.cfa + raCfaOffset;
    else {
      // The return address is the caller's x30: where this frame saved it, else still in x30.
      const k = this.raRegisterIndex;
      const saved = d.savedRegOffsets[i * this.calleeSavedCount + k]!;
      this.raSlot = saved !== 0 ? this.cfa + saved : this.regSlots[k]!;
    }
  }

  /**
   * The word in a return-address slot outside the flat words: a stack address, or a register of
   * the starting context (AArch64 x30 before a frame saved it); NaN, after failing the walk, for
   * a register no context holds.
   */
  private readReturnAddress(slot: number): number {
    if (isMemorySlot(slot)) return this.memory.readWord(slot);
    const value = readSlot(slot, this.memory, this.contexts);
    if (Number.isNaN(value)) {
      this.fail(
        "unreadable",
        this.ra,
        `the return address is in ${this.architecture.calleeSavedNames[this.raRegisterIndex] ?? "a register"}, which no frame saved and no register context holds`,
        "a stop without the link register",
      );
    }
    return value;
  }

  /**
   * A frame without a safepoint, climbed by the CFI row of its module (see the header comment).
   * Sets kind, cfa, raSlot and nextSlots (the caller's register slots), or fails.
   */
  private resolveNative(modules: ModuleMap): void {
    const pc = this.pcExact ? this.ra : this.ra - 1;
    const module = modules.moduleAt(pc);
    this.nativeModule = module;
    // Known before the CFI is looked up, so that a frame that cannot be climbed is still named.
    this.kind = module !== undefined && this.inManagedFunction(module, pc) ? "managed-unsafe" : "native";
    if (module === undefined) {
      this.fail(
        "no-unwind-info",
        this.ra,
        `${this.pcExact ? "stop address" : "return address"} ${hex(this.ra)} has no safepoint and lies in no mapped module`,
        this.index === 0 ? "a stop outside any ELF module (JIT code?)" : "a corrupt stack or frame size, or code outside every mapped ELF",
      );
      return;
    }
    let code: Uint8Array | undefined;
    try {
      code = this.pcExact ? undefined : module.codeBytes(this.ra, this.architecture.signalContext.sigreturnCode.length);
    } catch (e) {
      this.failModule(module, e);
      return;
    }
    const signal = this.architecture.signalContext;
    const word = this.architecture.wordBytes;
    if (code !== undefined && isSigreturnTrampoline(this.architecture, code)) {
      // The handler returned here (x86-64: its `ret` popped the pretcode); the ucontext is at a
      // fixed offset from SP.
      this.kind = "signal";
      this.raSigned = false;
      const gregs = this.sp + signal.ucontextOffsetBytes + signal.registersOffsetBytes;
      if (!this.memory.contains(this.sp, gregs - this.sp + (Math.max(signal.pcIndex, signal.spIndex) + 1) * word)) {
        this.fail("sp-out-of-range", this.sp, `the signal frame's ucontext at ${hex(this.sp)} is outside the stack's memory`, "a corrupt stack");
        return;
      }
      signalFrameSlots(this.architecture, gregs, this.nextSlots);
      this.cfa = gregs + signal.spIndex * word; // the interrupted SP's slot (read by next())
      this.raSlot = gregs + signal.pcIndex * word; // the interrupted PC
      return;
    }
    let ok: boolean;
    try {
      ok = nativeStep(this.architecture, module, pc, this.sp, this.regSlots, this.memory, this.contexts, this.step, this.nextSlots);
    } catch (e) {
      this.failModule(module, e);
      return;
    }
    if (!ok) {
      this.fail(
        "no-unwind-info",
        this.ra,
        `${hex(this.ra)} (${modules.describe(this.ra)}) has no safepoint and ${this.step.problem}`,
        "a frame without unwind information, or a corrupt stack",
      );
      return;
    }
    if (this.kind === "managed-unsafe" && this.options.mode === "strict") {
      this.fail(
        "managed-not-at-safepoint",
        this.ra,
        `managed frame ${modules.describe(this.ra)} is stopped at ${hex(this.ra)}, which is not a safepoint: its roots are unknown`,
        this.index === 0
          ? "the thread was stopped in the middle of managed code (a signal, a debugger, a crash)"
          : "a call from managed code without a statepoint, or a corrupt stack",
      );
      return;
    }
    this.cfa = this.step.cfa;
    this.raSlot = this.step.raSlot;
    this.raSigned = this.step.raSigned;
    this.outermost = this.step.outermost;
    if (this.outermost) {
      if (!this.memory.contains(this.sp, 8)) this.fail("sp-out-of-range", this.sp, `SP ${hex(this.sp)} is outside the stack's memory`, "a corrupt frame size");
      return;
    }
    if (isMemorySlot(this.raSlot) && !this.memory.contains(this.raSlot, 8)) {
      this.fail("sp-out-of-range", this.raSlot, `return-address slot ${hex(this.raSlot)} is outside the stack's memory`, "a corrupt CFA or frame pointer");
      return;
    }
    if (this.cfa > this.sp) this.checkFrameInMemory();
  }

  private failModule(module: MappedModule, e: unknown): void {
    if (!(e instanceof RootwalkError)) throw e;
    this.fail("no-unwind-info", this.ra, `${hex(this.ra)} in ${module.path}: ${e.message}`, "unwind information rootwalk cannot read");
  }

  /** `pc` lies in a function with a stack map: by its FDE, or by its symbol when it has no CFI. */
  private inManagedFunction(module: MappedModule, pc: number): boolean {
    let start: number | undefined;
    try {
      start = module.functionStart(pc) ?? module.symbolStart(pc);
    } catch {
      return false; // unreadable CFI or symbols: the CFI step below names the problem
    }
    return start !== undefined && this.managedFunctionStarts().has(start);
  }

  /** Absolute start addresses of every function with a stack map in the snapshot. */
  private managedFunctionStarts(): ReadonlySet<number> {
    if (this.managedStarts !== undefined) return this.managedStarts;
    let set = MANAGED_STARTS.get(this.snapshot);
    if (set === undefined) {
      set = new Set<number>();
      for (const m of this.snapshot.moduleBySlot) for (const f of m.functions) set.add(f.address + m.loadBias);
      MANAGED_STARTS.set(this.snapshot, set);
    }
    return (this.managedStarts = set);
  }

  /** The current frame's function, `name` for a managed frame, `module!symbol+0xoff` otherwise. */
  functionName(): string | undefined {
    if (this.kind === "managed") return this.descriptors.functions[this.descriptors.functionIndex[this.descriptor]!]?.name;
    return this.options.modules?.describe(this.pcExact ? this.ra : this.ra - 1);
  }

  private checkFrameInMemory(): void {
    // One check for the whole frame [sp, cfa): root slots inside it and a return-address slot
    // inside it (x86-64 cfa - 8, AArch64 x30's save slot) need no further check (frame-roots.ts
    // relies on this).
    const inFlat = this.words !== undefined && this.sp >= this.wordsBase && this.cfa <= this.wordsEnd;
    if (!inFlat && !this.memory.contains(this.sp, this.cfa - this.sp)) {
      if (!this.memory.contains(this.sp, 8)) {
        this.fail("sp-out-of-range", this.sp, `SP ${hex(this.sp)} is outside the stack's memory`, "a corrupt frame size, frame pointer or return address");
      } else {
        const top = this.cfa - 8;
        this.fail("sp-out-of-range", top, `return-address slot ${hex(top)} is outside the stack's memory`, "a corrupt frame size or frame pointer");
      }
      return;
    }
    // A return address saved outside the frame (possible only by a corrupt CFI offset).
    if (isMemorySlot(this.raSlot) && (this.raSlot < this.sp || this.raSlot + 8 > this.cfa) && !this.memory.contains(this.raSlot, 8)) {
      this.fail(
        "sp-out-of-range",
        this.raSlot,
        `return-address slot ${hex(this.raSlot)} is outside the stack's memory`,
        "a corrupt frame size or frame pointer",
      );
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
