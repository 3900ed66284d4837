import { EXIT_RUNTIME_FAILURE, RootwalkError, firstLine, hex } from "../src/errors.js";
import { heapSizeAdvice } from "./heap-size-advice.js";

/**
 * What went wrong in the collector:
 * - OUT_OF_MEMORY: an allocation does not fit even after a collection and growing to the maximum.
 * - BAD_POINTER: a root or a pointer slot holds an address that is not an object of this heap
 *   (outside it, misaligned, into a free block or between objects of the large-object space).
 *   A precise collector cannot skip such a value: it is a bug in the mutator or a scanner.
 * - REENTRANT: the mutator allocated or asked for a collection while a collection was running.
 */
export type CollectorErrorKind = "OUT_OF_MEMORY" | "BAD_POINTER" | "REENTRANT";

/**
 * The collector's one error class. The message follows the project's pattern
 * "<what> at <address>: found <value>, expected <value>". Its `code` is "GC"; `kind` says which
 * failure it is.
 */
export class CollectorError extends RootwalkError {
  constructor(
    readonly kind: CollectorErrorKind,
    readonly what: string,
    readonly address: number,
    readonly found: string,
    readonly expected: string,
  ) {
    super("GC", `${what} at ${hex(address)}: found ${found}, expected ${expected}`);
  }

  /** A collector failure ends a command with exit 3 (a runtime failure, not bad input). */
  override get exitCode(): number {
    return EXIT_RUNTIME_FAILURE;
  }

  override failureLine(): string {
    return `collector failure: ${firstLine(this.message)}`;
  }
}

/**
 * OUT_OF_MEMORY with the numbers a user needs to size the heap: the bytes still in use after a
 * full (defragmenting) collection, the largest heap allowed, and the allocation that did not fit.
 */
export class HeapExhaustedError extends CollectorError {
  constructor(
    readonly liveBytes: number,
    readonly maxHeapBytes: number,
    readonly requestBytes: number,
    address: number,
  ) {
    super(
      "OUT_OF_MEMORY",
      `allocation of ${requestBytes} bytes`,
      address,
      `${liveBytes} live bytes of ${maxHeapBytes}`,
      "room for the object after a collection",
    );
    this.message = `heap exhausted: ${liveBytes} live bytes of ${maxHeapBytes} (an allocation of ${requestBytes} bytes did not fit after a full collection)`;
  }

  /** The numbers and the `--heap` to try (gc/heap-size-advice.ts). */
  override failureLine(): string {
    return `heap exhausted: ${this.liveBytes} live bytes of ${this.maxHeapBytes}; ${heapSizeAdvice(this.liveBytes, this.requestBytes, this.maxHeapBytes)}`;
  }
}

/**
 * A collection refused before anything was traced or moved: `count` roots hold a value inside the
 * heap where no object starts (by the allocation bitmap, gc/allocation-bits.ts), e.g. a pointer
 * into the middle of an object held as a root. The collector cannot know which object such a root
 * keeps alive nor how to relocate it, and moving a "fake object" there would corrupt the heap.
 * The message names the first such root (thread, frame function+offset, slot or register), its
 * value and the object it points into (`inside object 0x... (+0x10, ...)`); `firstRoots` holds the
 * first ones as one line each. Kind BAD_POINTER; `rootwalk run` and `sim` end with exit 3.
 */
export class RootNotObjectError extends CollectorError {
  constructor(
    readonly count: number,
    readonly firstRoots: readonly string[],
    value: number,
    reason: string,
  ) {
    super("BAD_POINTER", "root", value, reason, "an object's address");
    const more = count > 1 ? ` (and ${count - 1} more root${count > 2 ? "s" : ""} like it)` : "";
    // A pointer into an object: say how a program keeps one across a safepoint instead.
    const hint = reason.includes("inside object")
      ? "; a pointer into an object must be kept as a derived pointer of the object's address, not as a root of its own"
      : "";
    this.message = `collection refused, nothing moved: ${firstRoots[0]}${more}${hint}`;
  }

  /** The program's mistake, named (the collection was refused): the message as it is. */
  override failureLine(): string {
    return this.message;
  }
}
