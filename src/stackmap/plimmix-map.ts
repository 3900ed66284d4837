import type Long from "long";
import { ByteView } from "../bytes/byte-view.js";
import { InvalidArgumentError, MalformedInputError, TruncatedInputError, UnsupportedInputError, hex, requireArgument } from "../errors.js";

/*
 * The plimmix `_GC_MAP_` stack map, version 1 (../shared/notes/plimmix-format.md), as its LLVM
 * plugin emits it into a module's data section under the global label
 * `_GC_MAP_<Module::getSourceFileName()>`. Little-endian; offsets from the label, which must be
 * 8-aligned; every structure below is a multiple of 8 bytes, so every u64 is 8-aligned.
 *
 *   Header (16 bytes)
 *     +0  i32  Version         = 1 (the seed wrote it as an i64:)
 *     +4  u32  Version, high   = 0
 *     +8  i32  NumFunctions N  >= 0
 *     +12 u32  Padding         = 0
 *   Function[N], back to back (24 + 8*S + 8*R bytes each)
 *     +0  u64  Function address (absolute; 0 + R_X86_64_64 relocation in a .o)
 *     +8  i32  Frame size in 8-byte WORDS = LLVM StackSize / 8 (excludes the return address);
 *              -1 (0xFFFFFFFF): a dynamic frame (variable-sized allocas, realignment)
 *     +12 i32  Stack arguments: max(0, IR argument count - 6), the function's own incoming
 *              arguments passed on the stack (informational; 0..65535)
 *     +16 i32  NumRoots R      >= 0
 *     +20 i32  NumSafepoints S >= 0
 *     +24 u64 x S   safepoint addresses = return addresses of the calls (absolute; relocated)
 *     +24+8S (i32 offset, i32 type) x R   the function's roots, valid at every one of its safepoints
 *   Globals
 *     +0  i32  NumGlobals G    >= 0
 *     +4  u32  Padding         = 0 (the records above keep this at an 8-aligned offset)
 *     +8  u64 x G   absolute addresses of global variables holding heap pointers
 *
 * A root's offset is in BYTES:
 *   static frame (size >= 0)   from SP at the safepoint, as if no outgoing arguments were pushed:
 *                              a multiple of 8 in [0, frameBytes - 8], a slot inside the frame
 *   dynamic frame (size -1)    from RBP (rootwalk's definition; RBP = CFA - 16 after the standard
 *                              `push %rbp; mov %rsp,%rbp`): a multiple of 8, at most -8
 * A root's type (ROOT_TYPE_* in safepoints/frame-descriptors.ts is this code + 1):
 *   0 ATOMIC   no pointers: skipped
 *   1 TRAIT    the slot holds the address of a two-word object whose word at +8 is a heap slot
 *   2 COMPLEX  the slot holds the address of a structure whose first word is a visitor function
 *   3 POINTER  the slot holds a heap pointer
 *
 * The format has no length field: a blob's end is found by walking the counts. `PlimmixMap.parse`
 * does that over bytes in hand; `plimmixMapLength` does it over live memory (the pointer passed to
 * `gc_init`) reading only the count words, never past a caller-given bound. Both share one walk
 * (`walkLayout`), which checks every count against the bytes available before anything is sized
 * from it. `parse` then also checks every root, records where each function starts, and the
 * accessors afterwards are O(1) reads.
 */

export const PLIMMIX_VERSION = 1;
/** The label every `_GC_MAP_` global starts with; the rest is the module's source file name. */
export const PLIMMIX_SYMBOL_PREFIX = "_GC_MAP_";

const HEADER_VERSION = 0;
const HEADER_VERSION_HIGH = HEADER_VERSION + 4;
const HEADER_NUM_FUNCTIONS = HEADER_VERSION_HIGH + 4;
const HEADER_PADDING = HEADER_NUM_FUNCTIONS + 4;
export const PLIMMIX_HEADER_SIZE_BYTES = HEADER_PADDING + 4; // 16

const FUNCTION_ADDRESS = 0;
const FUNCTION_FRAME_WORDS = FUNCTION_ADDRESS + 8;
const FUNCTION_STACK_ARGS = FUNCTION_FRAME_WORDS + 4;
const FUNCTION_NUM_ROOTS = FUNCTION_STACK_ARGS + 4;
const FUNCTION_NUM_SAFEPOINTS = FUNCTION_NUM_ROOTS + 4;
const FUNCTION_SAFEPOINTS = FUNCTION_NUM_SAFEPOINTS + 4;
/** A function record without safepoints or roots. */
export const PLIMMIX_FUNCTION_HEADER_SIZE_BYTES = FUNCTION_SAFEPOINTS; // 24
export const PLIMMIX_SAFEPOINT_SIZE_BYTES = 8;

const ROOT_OFFSET = 0;
const ROOT_TYPE = ROOT_OFFSET + 4;
export const PLIMMIX_ROOT_SIZE_BYTES = ROOT_TYPE + 4; // 8

const GLOBALS_COUNT = 0;
const GLOBALS_PADDING = GLOBALS_COUNT + 4;
const GLOBALS_ARRAY = GLOBALS_PADDING + 4;
export const PLIMMIX_GLOBAL_SIZE_BYTES = 8;

/** Frame size value of a dynamic frame. */
export const PLIMMIX_DYNAMIC_FRAME = -1;
/** Frames of 2^31 bytes or more are malformed (descriptor columns are Int32). */
export const PLIMMIX_MAX_FRAME_WORDS = 0x0fff_ffff;
/** More incoming stack arguments than this is not a real function. */
export const PLIMMIX_MAX_STACK_ARGS = 0xffff;

export const enum PlimmixRootType {
  Atomic = 0,
  Trait = 1,
  Complex = 2,
  Pointer = 3,
}
export const PLIMMIX_ROOT_TYPE_NAMES: readonly string[] = ["ATOMIC", "TRAIT", "COMPLEX", "POINTER"];

/** Bytes of a function record with `numSafepoints` safepoints and `numRoots` roots. */
export function plimmixFunctionSizeBytes(numSafepoints: number, numRoots: number): number {
  return FUNCTION_SAFEPOINTS + numSafepoints * PLIMMIX_SAFEPOINT_SIZE_BYTES + numRoots * PLIMMIX_ROOT_SIZE_BYTES;
}

/** Where the walk of the counts found each part (offsets relative to the label). */
interface Layout {
  numFunctions: number;
  functionOffsets: Uint32Array;
  globalsOffset: number;
  numGlobals: number;
  endOffset: number;
}

/**
 * Walks the counts of a blob of at most `limitBytes` bytes. `u32At(rel)` reads the u32 at `rel`
 * from the label and is only called for fields inside [0, limitBytes) that the walk has checked
 * first, always as parts of 8-aligned 8-byte groups (so a word reader never crosses the bound
 * when the bound is a multiple of 8). `at(rel)` turns a relative offset into the offset that
 * error messages name.
 */
function walkLayout(u32At: (rel: number) => number, limitBytes: number, at: (rel: number) => number): Layout {
  const need = (rel: number, sizeBytes: number, what: string): void => {
    if (rel + sizeBytes > limitBytes) throw new TruncatedInputError(what, at(rel), sizeBytes, limitBytes - rel);
  };
  const i32At = (rel: number): number => u32At(rel) | 0;

  need(0, PLIMMIX_HEADER_SIZE_BYTES, "_GC_MAP_ header");
  const version = i32At(HEADER_VERSION);
  if (version !== PLIMMIX_VERSION) {
    if (version > PLIMMIX_VERSION && version <= 0xff) {
      throw new UnsupportedInputError("_GC_MAP_ version", at(HEADER_VERSION), version, String(PLIMMIX_VERSION));
    }
    throw new MalformedInputError("_GC_MAP_ version", at(HEADER_VERSION), version, String(PLIMMIX_VERSION));
  }
  requireZeroU32(u32At, HEADER_VERSION_HIGH, at, "high half of the _GC_MAP_ version (an i64)");
  const numFunctions = i32At(HEADER_NUM_FUNCTIONS);
  if (numFunctions < 0) {
    throw new MalformedInputError("_GC_MAP_ function count", at(HEADER_NUM_FUNCTIONS), numFunctions, "a count >= 0");
  }
  requireZeroU32(u32At, HEADER_PADDING, at, "padding after the _GC_MAP_ function count");
  // Every record takes at least 24 bytes: a count the bytes cannot hold is caught before the
  // offsets array is sized from it.
  need(
    PLIMMIX_HEADER_SIZE_BYTES,
    numFunctions * PLIMMIX_FUNCTION_HEADER_SIZE_BYTES,
    `_GC_MAP_ function records (${numFunctions} records of at least ${PLIMMIX_FUNCTION_HEADER_SIZE_BYTES} bytes)`,
  );

  const functionOffsets = new Uint32Array(numFunctions);
  let cursor = PLIMMIX_HEADER_SIZE_BYTES;
  for (let f = 0; f < numFunctions; f++) {
    functionOffsets[f] = cursor;
    need(cursor, PLIMMIX_FUNCTION_HEADER_SIZE_BYTES, `_GC_MAP_ function #${f}`);
    const frameWords = i32At(cursor + FUNCTION_FRAME_WORDS);
    if (frameWords !== PLIMMIX_DYNAMIC_FRAME && !(frameWords >= 0 && frameWords <= PLIMMIX_MAX_FRAME_WORDS)) {
      throw new MalformedInputError(
        `frame size of _GC_MAP_ function #${f}`,
        at(cursor + FUNCTION_FRAME_WORDS),
        frameWords,
        `0..${PLIMMIX_MAX_FRAME_WORDS} words, or -1 for a dynamic frame`,
      );
    }
    const stackArgs = i32At(cursor + FUNCTION_STACK_ARGS);
    if (!(stackArgs >= 0 && stackArgs <= PLIMMIX_MAX_STACK_ARGS)) {
      throw new MalformedInputError(
        `stack argument count of _GC_MAP_ function #${f}`,
        at(cursor + FUNCTION_STACK_ARGS),
        stackArgs,
        `0..${PLIMMIX_MAX_STACK_ARGS}`,
      );
    }
    const numRoots = i32At(cursor + FUNCTION_NUM_ROOTS);
    if (numRoots < 0) throw new MalformedInputError(`root count of _GC_MAP_ function #${f}`, at(cursor + FUNCTION_NUM_ROOTS), numRoots, "a count >= 0");
    const numSafepoints = i32At(cursor + FUNCTION_NUM_SAFEPOINTS);
    if (numSafepoints < 0) {
      throw new MalformedInputError(`safepoint count of _GC_MAP_ function #${f}`, at(cursor + FUNCTION_NUM_SAFEPOINTS), numSafepoints, "a count >= 0");
    }
    need(
      cursor + FUNCTION_SAFEPOINTS,
      numSafepoints * PLIMMIX_SAFEPOINT_SIZE_BYTES + numRoots * PLIMMIX_ROOT_SIZE_BYTES,
      `safepoints and roots of _GC_MAP_ function #${f} (${numSafepoints} safepoints, ${numRoots} roots)`,
    );
    cursor += plimmixFunctionSizeBytes(numSafepoints, numRoots);
  }

  const globalsOffset = cursor;
  need(globalsOffset, GLOBALS_ARRAY, "_GC_MAP_ global root count");
  const numGlobals = i32At(globalsOffset + GLOBALS_COUNT);
  if (numGlobals < 0) throw new MalformedInputError("_GC_MAP_ global root count", at(globalsOffset + GLOBALS_COUNT), numGlobals, "a count >= 0");
  requireZeroU32(u32At, globalsOffset + GLOBALS_PADDING, at, "padding after the _GC_MAP_ global root count");
  need(globalsOffset + GLOBALS_ARRAY, numGlobals * PLIMMIX_GLOBAL_SIZE_BYTES, `_GC_MAP_ global roots (${numGlobals})`);
  return { numFunctions, functionOffsets, globalsOffset, numGlobals, endOffset: globalsOffset + GLOBALS_ARRAY + numGlobals * PLIMMIX_GLOBAL_SIZE_BYTES };
}

function requireZeroU32(u32At: (rel: number) => number, rel: number, at: (rel: number) => number, what: string): void {
  const value = u32At(rel);
  if (value !== 0) throw new MalformedInputError(what, at(rel), hex(value), "0x0");
}

/**
 * The length in bytes of the `_GC_MAP_` blob at `address` in live memory (what a program passed
 * to `gc_init`), reading only its count words: the header, 16 bytes of each function record and
 * the global count; never an address at or beyond `address + maxLengthBytes`.
 *
 * `readWord(a)` returns the little-endian u64 at the 8-aligned address `a` (for a `Memory`:
 * `(a) => memory.readWordBigInt(a)`); whatever it throws is passed on. The blob is validated as
 * far as its counts go (version, counts, padding); copy `length` bytes and `PlimmixMap.parse`
 * them for the rest. Error offsets are relative to `address`.
 */
export function plimmixMapLength(readWord: (address: number) => bigint, address: number, maxLengthBytes: number): number {
  requireArgument(typeof readWord === "function", "readWord", readWord, "a function reading the 64-bit word at an address (a bigint)");
  if (!Number.isSafeInteger(address) || address <= 0 || address % 8 !== 0) {
    throw new InvalidArgumentError("_GC_MAP_ address", hex(address), "a non-null 8-aligned address (the label must be 8-aligned)");
  }
  if (!Number.isSafeInteger(maxLengthBytes) || maxLengthBytes < 0) {
    throw new InvalidArgumentError("maxLengthBytes", String(maxLengthBytes), "a non-negative safe integer");
  }
  // Whole words only, so that no word read reaches past the bound.
  const limit = maxLengthBytes - (maxLengthBytes % 8);
  let cachedAt = -1;
  let cachedWord = 0n;
  const u32At = (rel: number): number => {
    const wordAt = rel - (rel % 8);
    if (wordAt !== cachedAt) {
      cachedWord = readWord(address + wordAt);
      cachedAt = wordAt;
    }
    return Number(BigInt.asUintN(32, rel % 8 === 0 ? cachedWord : cachedWord >> 32n));
  };
  return walkLayout(u32At, limit, (rel) => rel).endOffset;
}

export class PlimmixMap {
  private constructor(
    /** The bytes of this blob only; error offsets and `sectionOffset` use its baseOffset. */
    readonly view: ByteView,
    readonly numFunctions: number,
    private readonly functionOffsets: Uint32Array,
    /** Index of each function's first safepoint when all safepoints of the blob are numbered. */
    private readonly firstSafepoints: Uint32Array,
    readonly numSafepoints: number,
    private readonly globalsOffset: number,
    readonly numGlobals: number,
  ) {}

  /**
   * Validates the blob at `offset` of `view` (a multiple of 8: the label is 8-aligned and `view`
   * starts at a section start) and returns a view of it. The end is found by walking the counts,
   * so `view` may hold more bytes after it.
   */
  static parse(view: ByteView, offset: number): PlimmixMap {
    const at = (rel: number): number => view.baseOffset + offset + rel;
    if (!Number.isSafeInteger(offset) || offset < 0 || offset % 8 !== 0) {
      throw new MalformedInputError("_GC_MAP_ label alignment", view.baseOffset + offset, hex(offset), "an offset that is a multiple of 8");
    }
    const limit = Math.max(0, view.lengthBytes - offset);
    const layout = walkLayout((rel) => view.u32(offset + rel), limit, at);

    const firstSafepoints = new Uint32Array(layout.numFunctions + 1);
    let safepoints = 0;
    for (let f = 0; f < layout.numFunctions; f++) {
      const rec = offset + layout.functionOffsets[f]!;
      const frameWords = view.i32(rec + FUNCTION_FRAME_WORDS);
      const numSafepoints = view.i32(rec + FUNCTION_NUM_SAFEPOINTS);
      const numRoots = view.i32(rec + FUNCTION_NUM_ROOTS);
      const rootsAt = rec + FUNCTION_SAFEPOINTS + numSafepoints * PLIMMIX_SAFEPOINT_SIZE_BYTES;
      for (let r = 0; r < numRoots; r++) {
        const root = rootsAt + r * PLIMMIX_ROOT_SIZE_BYTES;
        checkRoot(view, root, f, r, frameWords);
      }
      firstSafepoints[f] = safepoints;
      safepoints += numSafepoints;
    }
    firstSafepoints[layout.numFunctions] = safepoints;
    return new PlimmixMap(
      view.slice(offset, layout.endOffset, "_GC_MAP_ blob"),
      layout.numFunctions,
      layout.functionOffsets,
      firstSafepoints,
      safepoints,
      layout.globalsOffset,
      layout.numGlobals,
    );
  }

  /** Offset of this blob (its label) in the input `parse` was given, e.g. a file offset. */
  get sectionOffset(): number {
    return this.view.baseOffset;
  }
  get sizeBytes(): number {
    return this.view.lengthBytes;
  }
  get version(): number {
    return this.view.i32(HEADER_VERSION);
  }

  // ---- functions -------------------------------------------------------------------------------

  /** Offset of function record `f` within the blob. */
  functionOffset(f: number): number {
    return this.functionOffsets[f]!;
  }
  /** Offset of the function address field of `f` within the blob (where a relocation applies). */
  functionAddressFieldOffset(f: number): number {
    return this.functionOffsets[f]! + FUNCTION_ADDRESS;
  }
  functionAddressLong(f: number): Long {
    return this.view.u64Long(this.functionOffsets[f]! + FUNCTION_ADDRESS);
  }
  /** The address as stored (after relocation when the bytes were relocated); NaN above 2^53. */
  functionAddress(f: number): number {
    return this.view.u64NumberOrNaN(this.functionOffsets[f]! + FUNCTION_ADDRESS);
  }
  /** Frame size in 8-byte words as recorded; -1 for a dynamic frame. */
  frameWords(f: number): number {
    return this.view.i32(this.functionOffsets[f]! + FUNCTION_FRAME_WORDS);
  }
  hasDynamicFrame(f: number): boolean {
    return this.frameWords(f) === PLIMMIX_DYNAMIC_FRAME;
  }
  /** Frame size in bytes (words * 8, excluding the return address); -1 for a dynamic frame. */
  frameSizeBytes(f: number): number {
    const words = this.frameWords(f);
    return words === PLIMMIX_DYNAMIC_FRAME ? -1 : words * 8;
  }
  stackArgCount(f: number): number {
    return this.view.i32(this.functionOffsets[f]! + FUNCTION_STACK_ARGS);
  }
  numRootsOf(f: number): number {
    return this.view.i32(this.functionOffsets[f]! + FUNCTION_NUM_ROOTS);
  }
  numSafepointsOf(f: number): number {
    return this.view.i32(this.functionOffsets[f]! + FUNCTION_NUM_SAFEPOINTS);
  }
  /** Index of function `f`'s first safepoint among all safepoints of the blob, in order. */
  firstSafepointOf(f: number): number {
    return this.firstSafepoints[f]!;
  }

  // ---- safepoints ------------------------------------------------------------------------------

  /** Offset within the blob of safepoint `s` of function `f` (where a relocation applies). */
  safepointFieldOffset(f: number, s: number): number {
    return this.functionOffsets[f]! + FUNCTION_SAFEPOINTS + s * PLIMMIX_SAFEPOINT_SIZE_BYTES;
  }
  safepointAddressLong(f: number, s: number): Long {
    return this.view.u64Long(this.safepointFieldOffset(f, s));
  }
  /** The return address as stored (relocated when the bytes were); NaN above 2^53. */
  safepointAddress(f: number, s: number): number {
    return this.view.u64NumberOrNaN(this.safepointFieldOffset(f, s));
  }

  // ---- roots -----------------------------------------------------------------------------------

  private rootAt(f: number, r: number): number {
    const rec = this.functionOffsets[f]!;
    return rec + FUNCTION_SAFEPOINTS + this.numSafepointsOf(f) * PLIMMIX_SAFEPOINT_SIZE_BYTES + r * PLIMMIX_ROOT_SIZE_BYTES;
  }
  /** Offset within the blob of root `r` of function `f`. */
  rootFieldOffset(f: number, r: number): number {
    return this.rootAt(f, r);
  }
  /** Bytes from SP at the safepoint (static frame) or from RBP (dynamic frame). */
  rootOffsetBytes(f: number, r: number): number {
    return this.view.i32(this.rootAt(f, r) + ROOT_OFFSET);
  }
  /** PlimmixRootType 0..3. */
  rootType(f: number, r: number): PlimmixRootType {
    return this.view.i32(this.rootAt(f, r) + ROOT_TYPE);
  }

  // ---- globals ---------------------------------------------------------------------------------

  globalFieldOffset(g: number): number {
    return this.globalsOffset + GLOBALS_ARRAY + g * PLIMMIX_GLOBAL_SIZE_BYTES;
  }
  globalAddressLong(g: number): Long {
    return this.view.u64Long(this.globalFieldOffset(g));
  }
  /** The global's address as stored (relocated when the bytes were); NaN above 2^53. */
  globalAddress(g: number): number {
    return this.view.u64NumberOrNaN(this.globalFieldOffset(g));
  }
}

/** A root's type and offset (see the layout comment for the frame rules). */
function checkRoot(view: ByteView, root: number, f: number, r: number, frameWords: number): void {
  const type = view.i32(root + ROOT_TYPE);
  if (!(type >= PlimmixRootType.Atomic && type <= PlimmixRootType.Pointer)) {
    throw new MalformedInputError(
      `type of root #${r} of _GC_MAP_ function #${f}`,
      view.baseOffset + root + ROOT_TYPE,
      type,
      "0..3 (ATOMIC, TRAIT, COMPLEX, POINTER)",
    );
  }
  const offset = view.i32(root + ROOT_OFFSET);
  if (frameWords === PLIMMIX_DYNAMIC_FRAME) {
    if (offset > -8 || offset % 8 !== 0) {
      throw new MalformedInputError(
        `offset of root #${r} of _GC_MAP_ function #${f} (dynamic frame: RBP-relative)`,
        view.baseOffset + root + ROOT_OFFSET,
        offset,
        "a multiple of 8 at most -8 (a slot below the saved RBP)",
      );
    }
  } else {
    const frameBytes = frameWords * 8;
    if (offset < 0 || offset + 8 > frameBytes || offset % 8 !== 0) {
      throw new MalformedInputError(
        `offset of root #${r} of _GC_MAP_ function #${f} (SP-relative)`,
        view.baseOffset + root + ROOT_OFFSET,
        offset,
        frameBytes < 8
          ? `no root at all: the frame is ${frameBytes} bytes`
          : `a multiple of 8 in [0, ${frameBytes - 8}] (a slot inside the ${frameBytes}-byte frame)`,
      );
    }
  }
}

/** Parses one blob that fills `bytes` exactly (a copy of live memory, `plimmixMapLength` long). */
export function parsePlimmixBlob(bytes: Uint8Array, baseOffset = 0): PlimmixMap {
  const view = new ByteView(bytes, baseOffset);
  const map = PlimmixMap.parse(view, 0);
  if (map.sizeBytes !== bytes.byteLength) {
    throw new MalformedInputError(
      "bytes after the _GC_MAP_ blob",
      baseOffset + map.sizeBytes,
      `${bytes.byteLength - map.sizeBytes} bytes`,
      `none (the blob is ${map.sizeBytes} bytes long)`,
    );
  }
  return map;
}
