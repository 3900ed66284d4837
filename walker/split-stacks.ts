import { hex } from "../src/errors.js";
import type { Memory } from "../src/memory/memory.js";
import type { RegistrySnapshot } from "../src/safepoints/registry.js";

/*
 * Crossing from one stacklet of a segmented ("split") stack to the previous one
 * (../shared/notes/split-stacks.md; libgcc's __morestack on x86-64 Linux).
 *
 * A function whose prologue finds too little stack calls __morestack, which allocates a stacklet
 * and calls the rest of the function on it; the first frame on a stacklet therefore returns into
 * __morestack, an address with no stack map. Continuing from there needs old_stack, the caller's
 * SP on the previous stacklet: the caller's frame then has sp = old_stack, ra = [old_stack - 8].
 * The words just below old_stack are __morestack's register save area: stale copies, never
 * roots; jumping straight to old_stack never reports them.
 *
 * Three ways to find old_stack, innermost stacklet first:
 *  - "segments": libgcc's `struct stack_segment` list followed by its `prev` links (a cached
 *    `next` stacklet holds stale frames): old_stack is the field at +0x18 of the header.
 *  - "find-ranges": the ranges from `__splitstack_find` (lo, hi, next_sp): old_stack =
 *    next_sp + 96 on x86-64 (the size of __morestack's save area).
 *  - "geometry": no list at all. A return address with no record whose slot lies just below the
 *    top of a stack range is a stacklet's first frame; old_stack is found in another range as the
 *    pair [t] = a return address into the function that just returned, with no safepoint there
 *    (its prologue's call to __morestack, which LLVM places in a cold block at the function's
 *    end) and [t + 8] = a registered safepoint; old_stack = t + 16.
 */

export interface Stacklet {
  /** Lowest usable address (above the 56-byte header) and the end of the stacklet. */
  lo: number;
  hi: number;
  /** The caller's SP on the previous stacklet (stack_segment.old_stack). */
  oldStack: number;
}

export interface SplitStackRange {
  lo: number;
  hi: number;
  nextSp: number;
}

export type SplitStackMethod = "segments" | "find-ranges" | "geometry";

export interface SplitStacks {
  method: SplitStackMethod;
  /** Where __morestack's code is (every DSO has its own copy): return addresses into it. */
  morestack: readonly { start: number; sizeBytes: number }[];
  /** For "segments": innermost first. */
  stacklets?: readonly Stacklet[];
  /** For "find-ranges": innermost first, as __splitstack_find returns them. */
  findRanges?: readonly SplitStackRange[];
}

export const X86_64_MORESTACK_SAVE_AREA_BYTES = 96;
/** How close to the top of its range a stacklet's first return-address slot lies (geometry). */
const GEOMETRY_TOP_SLACK_BYTES = 512;
/** How many words at the low end of a range are searched for old_stack (geometry). */
const GEOMETRY_SEARCH_WORDS = 64;

export interface SplitStackTransition {
  newSp: number;
}

/** What the unwinder knows when a return address has no record. */
export interface StuckFrame {
  sp: number;
  ra: number;
  transitions: number;
  snapshot: RegistrySnapshot;
  /** Bases of the memory ranges the walk has been in (geometry never goes back into one). */
  visitedRanges: ReadonlySet<number>;
  /** Absolute [start, end) of the function whose frame returned to `ra`, if known. */
  calleeFunctionRange(): { start: number; end: number } | undefined;
}

/**
 * If (sp, ra) is a stacklet's first frame returning into __morestack, where the walk continues;
 * a string says why the stacklet list is inconsistent; undefined means "not a transition".
 */
export function splitStackTransition(split: SplitStacks, at: StuckFrame, memory: Memory): SplitStackTransition | string | undefined {
  const inMorestack = split.morestack.some((m) => at.ra >= m.start && at.ra < m.start + m.sizeBytes);
  const k = at.transitions;
  switch (split.method) {
    case "segments": {
      if (!inMorestack) return undefined;
      const stacklets = split.stacklets ?? [];
      const here = stacklets[k];
      if (here === undefined) return `return address ${hex(at.ra)} into __morestack, but only ${stacklets.length} stacklets are listed`;
      if (at.sp < here.lo || at.sp > here.hi) return `SP ${hex(at.sp)} is not in stacklet #${k} [${hex(here.lo)}, ${hex(here.hi)})`;
      const next = stacklets[k + 1];
      if (next !== undefined && (here.oldStack < next.lo || here.oldStack > next.hi)) {
        return `old_stack ${hex(here.oldStack)} of stacklet #${k} is not in stacklet #${k + 1} [${hex(next.lo)}, ${hex(next.hi)})`;
      }
      return { newSp: here.oldStack };
    }
    case "find-ranges": {
      if (!inMorestack) return undefined;
      const ranges = split.findRanges ?? [];
      const here = ranges[k];
      const next = ranges[k + 1];
      if (here === undefined || next === undefined)
        return `return address ${hex(at.ra)} into __morestack, but __splitstack_find listed ${ranges.length} ranges`;
      if (at.sp < here.lo || at.sp > here.hi) return `SP ${hex(at.sp)} is not in range #${k} [${hex(here.lo)}, ${hex(here.hi)})`;
      const oldStack = here.nextSp + X86_64_MORESTACK_SAVE_AREA_BYTES;
      if (oldStack < next.lo || oldStack > next.hi) return `next_sp + 96 = ${hex(oldStack)} is not in range #${k + 1}`;
      return { newSp: oldStack };
    }
    case "geometry":
      return geometricTransition(at, memory, inMorestack);
  }
}

function geometricTransition(at: StuckFrame, memory: Memory, inMorestack: boolean): SplitStackTransition | string | undefined {
  const raSlot = at.sp - 8;
  const current = memory.ranges.find((r) => raSlot >= r.base && raSlot < r.base + r.sizeBytes);
  if (current === undefined) return undefined;
  const nearTop = current.base + current.sizeBytes - raSlot <= GEOMETRY_TOP_SLACK_BYTES;
  if (!inMorestack && !nearTop) return undefined;
  const callee = at.calleeFunctionRange();
  if (callee === undefined) return "a stacklet's first frame, but the function that returned is unknown";
  for (const range of memory.ranges) {
    if (range === current || at.visitedRanges.has(range.base)) continue;
    const words = Math.min(GEOMETRY_SEARCH_WORDS, range.sizeBytes / 8 - 1);
    for (let w = 0; w < words; w++) {
      const t = range.base + w * 8;
      const prologueRa = memory.readWord(t);
      if (prologueRa <= callee.start || prologueRa >= callee.end) continue;
      if (at.snapshot.table.find(prologueRa) >= 0 || at.snapshot.table.find(memory.readWord(t + 8)) < 0) continue;
      return { newSp: t + 16 };
    }
  }
  return `a stacklet's first frame (return address ${hex(at.ra)} just below the top of its range), but no other range holds the caller's frame`;
}
