import { TWO_32, joinHalves } from "../src/bytes/word-codec.js";
import { hex } from "../src/errors.js";
import { BYTES_IN_LARGE_PAGE, BYTES_IN_LINE, LOG_BYTES_IN_BLOCK, LOG_BYTES_IN_LARGE_PAGE, LOG_BYTES_IN_LINE } from "./heap-constants.js";
import { BLOCK_MARKED, BLOCK_REUSABLE, BLOCK_UNALLOCATED, type HeapSpace } from "./heap-space.js";
import type { ObjectModel } from "./object-model.js";
import { describeEnclosingObject } from "./object-start.js";
import { TraversalIndex } from "./traversal-index.js";
import { POISONED_OBJECT_REASON, describePoison, hasPoisonedHeader } from "./poison.js";

/**
 * Where a verification failure's bad value was read:
 *   root    the `index`-th root of the collection (roots in scanner order), described by its
 *           scanner (RootScanner.describeRoot: thread, frame function+offset, slot or register)
 *   field   pointer field `offsetBytes` into object `object`
 *   object  no one place: an object of the graph itself (another object starts inside it)
 *   poisoned-memory   a word of memory a collection freed and poisoned (gc/quarantine.ts)
 *   graph   the whole graph (its checksum changed across the collection)
 */
export type VerifyFailureLocation =
  | { kind: "root"; index: number; description: string | undefined }
  | { kind: "field"; object: number; offsetBytes: number }
  | { kind: "object"; object: number }
  | { kind: "poisoned-memory"; address: number }
  | { kind: "graph" };

/** One verification failure: where, the value found there, why it is bad, what was expected. */
export interface VerifyFailure {
  location: VerifyFailureLocation;
  value: number;
  /** Why `value` is bad, as a phrase after the value ("in a free line", "outside the heap", ...). */
  reason: string;
  /** What the place should hold ("a live object", "an object's address"). */
  expected: string;
  /** Found by the check before the collection (the graph as the mutator left it) or after it. */
  phase?: "before" | "after";
}

/** `root #3 (thread #0 ...)` or `field +0x8 of object 0x...`: the failure's place in words. */
export function describeFailureLocation(location: VerifyFailureLocation): string {
  switch (location.kind) {
    case "root":
      return `root #${location.index}${location.description === undefined ? "" : ` (${location.description})`}`;
    case "field":
      return `field +0x${location.offsetBytes.toString(16)} of object ${hex(location.object)}`;
    case "object":
      return `object ${hex(location.object)}`;
    case "poisoned-memory":
      return `heap word ${hex(location.address)}`;
    case "graph":
      return "the reachable graph";
  }
}

/** One line: where, the value, why it is bad. */
export function formatVerifyFailure(f: VerifyFailure): string {
  if (f.location.kind === "graph") return f.reason;
  if (f.location.kind === "object") return `${describeFailureLocation(f.location)}: ${f.reason}`;
  return `${describeFailureLocation(f.location)}: found ${hex(f.value)} ${f.reason}, expected ${f.expected}`;
}

/** What a traversal of the reachable graph found. */
export interface GraphInspection {
  /** Reachable objects (each counted once). */
  objects: number;
  /**
   * A hash of the reachable graph that does not depend on where objects are: every object's
   * shape and raw bytes and every pointer as the index (in traversal order) of its target.
   * Equal before and after a correct collection.
   */
  checksum: string;
  failures: number;
  /** The first failures, one sentence each (formatVerifyFailure of `details`). */
  messages: string[];
  /** The first failures (at most maxMessages), structured. */
  details: VerifyFailure[];
}

/** Names root `index` of the `roots` passed to inspectGraph (its scanner's description, if any). */
export type RootDescriber = (index: number) => string | undefined;

/**
 * Walks the graph reachable from `roots` (breadth first, roots in order, slots in order) and
 * checks every pointer on the way. Used with `requireLive` right after a collection, when each
 * reachable object must be:
 *   - inside the heap, 8-aligned, in a block in use (reusable or full) or the first page of a
 *     large object, not forwarded (no pointer into evacuated memory);
 *   - marked, with its first line live, and every line live if it is a medium object
 *     (no pointer into free memory), and not crossing the end of its block.
 * At any time, a pointer to an object whose header holds the poison pattern, or a pointer that
 * is the pattern itself (gc/poison.ts), fails: it is stale.
 * Without `requireLive` (before a collection) only the structural checks apply: marks are stale.
 * A pointer that fails is counted and not followed.
 * No reachable object may start inside another (reportOverlaps).
 *
 * Runs after every collection with --verify, twice: its loops read the heap's words and the
 * traversal's reused tables (GraphTraversal) and allocate nothing per object.
 */
export function inspectGraph(
  space: HeapSpace,
  model: ObjectModel,
  roots: readonly number[],
  requireLive: boolean,
  maxMessages = 20,
  describeRoot: RootDescriber = () => undefined,
): GraphInspection {
  const report = new FailureReport(space, model, maxMessages, describeRoot);
  const walk = GraphTraversal.reused(space, model, requireLive, report);
  // The index is shared: its entries retired even when a root describer throws mid-traversal.
  try {
    const checksum = traverse(space, model, roots, walk);
    reportOverlaps(space, model, walk, roots, report);
    const details = report.details;
    return { objects: walk.count, checksum, failures: report.failures, messages: details.map(formatVerifyFailure), details };
  } finally {
    walk.finish();
  }
}

/**
 * The traversal of inspectGraph: reaches every object (checking each once, GraphTraversal.reach)
 * and hashes the graph: per object its slot count, raw byte count and raw bytes, and each
 * pointer as its target's traversal index + 1 (0 for null and for a pointer that failed). The
 * values hashed are written to the traversal's HashInput and hashed after the walk in one loop:
 * the walk's loop stays small enough for the compiler to inline the object model's accessors.
 */
function traverse(space: HeapSpace, model: ObjectModel, roots: readonly number[], walk: GraphTraversal): string {
  const input = walk.hashInput;
  for (let r = 0; r < roots.length; r++) {
    const root = roots[r]!;
    const n = input.reserve(1);
    input.values[n] = root === 0 ? 0 : walk.reachAddress(root, -1, r) + 1;
    input.count = n + 1;
  }
  const base = space.base;
  // The base's halves: a slot's heap offset from its two 32-bit halves, in int32 arithmetic.
  const baseLo = base >>> 0;
  const baseHi = (base - baseLo) / TWO_32;
  const words = space.words;
  for (let k = 0; k < walk.count; k++) {
    const offset = walk.order[k]!;
    const obj = base + offset;
    const slots = model.pointerSlotCount(space, obj);
    const rawCount = model.rawByteCount(space, obj);
    const wholeWords = rawCount >>> 2;
    let n = input.reserve(2 + wholeWords + (rawCount & 3) + slots);
    const values = input.values;
    values[n++] = slots;
    values[n++] = rawCount;
    // Raw bytes a 32-bit word at a time (they start 8-aligned, after the slots), the tail by bytes.
    const raw = model.rawBytesAddress(space, obj) - base;
    for (let i = 0, w = raw >>> 2; i < wholeWords; i++) values[n++] = words[w + i]!;
    for (let i = wholeWords << 2; i < rawCount; i++) values[n++] = space.bytes[raw + i]!;
    for (let i = 0; i < slots; i++) {
      const w = (model.pointerSlotAddress(space, obj, i) - base) >>> 2;
      const lo = words[w]!;
      const hi = words[w + 1]!;
      // Heap offsets (integers below 2^32) all the way down: no address is passed as a double.
      // The value is a heap offset when value - base, borrowing from the high half, has a zero high half.
      const target = (lo - baseLo) >>> 0;
      const inHeap = hi - baseHi === (lo < baseLo ? 1 : 0);
      values[n++] = ((lo | hi) === 0 ? -1 : inHeap ? walk.reach(target, offset, i) : walk.reachAddress(joinHalves(lo, hi), offset, i)) + 1;
    }
    input.count = n;
  }
  const n = input.reserve(1);
  input.values[n] = walk.count;
  input.count = n + 1;
  return input.digest();
}

/** Values HashInput holds before it hashes them (more only for an object with more values). */
const HASH_INPUT_VALUES = 1 << 14;

/**
 * The graph hash: two 32-bit FNV-1a-style lanes, int32 throughout, over 32-bit values (every
 * value hashed is below 2^32: slot counts, raw byte counts and words, traversal indices + 1).
 * The traversal writes each object's values into a buffer, hashed a buffer at a time: hashing
 * in place (two lanes updated per value) made the traversal's loop too large for the compiler
 * to inline the object model's accessors and the index lookup into it. The buffer grows only
 * for an object with more values than it holds, and shrinks back after that traversal.
 */
class HashInput {
  values = new Uint32Array(HASH_INPUT_VALUES);
  count = 0;
  private a = 0;
  private b = 0;

  /** Starts a new hash. */
  reset(): void {
    this.count = 0;
    this.a = 0x811c9dc5 | 0;
    this.b = 0x01000193;
    if (this.values.length > HASH_INPUT_VALUES) this.values = new Uint32Array(HASH_INPUT_VALUES);
  }

  /** The index where `n` more values go (room made: the buffer hashed first if full); the writer then sets `count`. */
  reserve(n: number): number {
    if (this.count + n > this.values.length) this.makeRoom(n);
    return this.count;
  }

  private makeRoom(n: number): void {
    this.hash();
    if (n > this.values.length) this.values = new Uint32Array(n);
  }

  /** Hashes the values held and empties the buffer. */
  private hash(): void {
    let a = this.a;
    let b = this.b;
    const values = this.values;
    for (let i = 0; i < this.count; i++) {
      const value = values[i]!;
      a = Math.imul(a ^ value, 0x01000193);
      b = Math.imul(b ^ value, 0x5bd1e995) ^ (b >>> 13);
    }
    this.a = a;
    this.b = b;
    this.count = 0;
  }

  /** The hash of every value since reset, as 16 hex digits. */
  digest(): string {
    this.hash();
    return (this.a >>> 0).toString(16).padStart(8, "0") + (this.b >>> 0).toString(16).padStart(8, "0");
  }
}

/**
 * The failures of one inspection: all counted, the first `maxMessages` kept with their place.
 * A place is passed around as numbers (holder, slot) and spelled out only for a failure kept.
 */
class FailureReport {
  failures = 0;
  readonly details: VerifyFailure[] = [];

  constructor(
    private readonly space: HeapSpace,
    private readonly model: ObjectModel,
    private readonly maxMessages: number,
    private readonly describeRoot: RootDescriber,
  ) {}

  /** True when one more failure would be kept (not only counted). */
  get keepsMore(): boolean {
    return this.details.length < this.maxMessages;
  }

  /** Where a pointer was read: root `slot` (holder -1) or pointer slot `slot` of object `holder`. */
  where(holder: number, slot: number): VerifyFailureLocation {
    return holder < 0
      ? { kind: "root", index: slot, description: this.describeRoot(slot) }
      : { kind: "field", object: holder, offsetBytes: this.model.pointerSlotAddress(this.space, holder, slot) - holder };
  }

  /** A pointer read at (holder, slot) that is not a valid object. */
  badPointer(holder: number, slot: number, target: number, reason: string): void {
    this.failures++;
    const expected = reason.startsWith(NOT_AN_OBJECT_START) ? "an object's address" : "a live object";
    if (this.keepsMore) this.details.push({ location: this.where(holder, slot), value: target, reason, expected });
  }
}

/**
 * The state of one traversal, in typed arrays reused from one inspection to the next (a
 * verification after every collection would otherwise allocate and regrow them each time):
 *   order    the reached objects' heap offsets, in traversal order (a breadth-first queue);
 *   ends     per reached Immix object, the heap offset where its storage ends plus its header
 *            bytes (reportOverlaps' range), 0 for a large object;
 *   index    offset -> traversal index (TraversalIndex; reportOverlaps asks it too).
 * Heap offsets are below 2^32 (MAX_HEAP_BYTES), so every table holds integers.
 * (inspectGraph is not reentrant, and runs on one thread.)
 */
class GraphTraversal {
  order: Uint32Array = new Uint32Array(1024);
  ends: Uint32Array = new Uint32Array(1024);
  count = 0;
  readonly index = new TraversalIndex();
  readonly hashInput = new HashInput();
  private space!: HeapSpace;
  private model!: ObjectModel;
  private requireLive = false;
  private report!: FailureReport;
  /** Offsets at and above it are the large-object space's (no overlap check). */
  private immixEndOffset = 0;
  private static shared: GraphTraversal | undefined;

  static reused(space: HeapSpace, model: ObjectModel, requireLive: boolean, report: FailureReport): GraphTraversal {
    const t = (GraphTraversal.shared ??= new GraphTraversal());
    t.space = space;
    t.model = model;
    t.requireLive = requireLive;
    t.report = report;
    t.immixEndOffset = space.los.bottomPage * BYTES_IN_LARGE_PAGE;
    t.count = 0;
    t.hashInput.reset();
    t.index.begin(space.sizeBytes);
    return t;
  }

  /**
   * The traversal index of the object at heap offset `offset` (an integer in [0, 2^32)),
   * discovering it (checked, queued, indexed) the first time, or -1 if it fails a check (reported
   * as read at slot `slot` of the object at offset `holder`, or root `slot` when holder is -1).
   * Runs per pointer: small enough to be inlined, and offsets are small integers (nothing boxed).
   */
  reach(offset: number, holder: number, slot: number): number {
    const known = this.index.get(offset);
    return known >= 0 ? known : this.discover(offset, holder, slot);
  }

  /** reach for any value read as a pointer (a root, or a slot holding no heap offset). */
  reachAddress(address: number, holder: number, slot: number): number {
    const offset = address - this.space.base;
    if (offset >>> 0 === offset) return this.reach(offset, holder, slot);
    return this.fail(holder, slot, address, checkObject(this.space, this.model, address, this.requireLive) ?? OUTSIDE_THE_HEAP);
  }

  /** The first pointer to `offset`: checks the object there and queues it, or reports the failure. */
  private discover(offset: number, holder: number, slot: number): number {
    const checked = checkObjectAt(this.space, this.model, offset, this.requireLive);
    if (typeof checked === "string") return this.fail(holder, slot, this.space.base + offset, checked);
    const k = this.count++;
    if (k === this.order.length) {
      this.order = growUint32(this.order);
      this.ends = growUint32(this.ends);
    }
    this.order[k] = offset;
    this.index.set(offset, k);
    this.ends[k] = offset < this.immixEndOffset ? offset + checked : 0;
    return k;
  }

  private fail(holder: number, slot: number, address: number, reason: string): number {
    this.report.badPointer(holder < 0 ? -1 : this.space.base + holder, slot, address, reason);
    return -1;
  }

  /** The address of the `k`-th reached object. */
  addressAt(k: number): number {
    return this.space.base + this.order[k]!;
  }

  /** Leaves the index empty for the next traversal. */
  finish(): void {
    this.index.finish(this.count);
  }
}

function growUint32(a: Uint32Array): Uint32Array {
  const b = new Uint32Array(a.length * 2);
  b.set(a);
  return b;
}

/**
 * Counts reachable Immix objects whose storage starts inside another reachable object, and adds
 * failures: a pointer into the middle of an object taken for an object's address (a derived
 * pointer reported as a base; the collector has no interior-pointer lookup), whose "header" is
 * the other's data. It asks the traversal index about every granule of each object's body after
 * its first word (not the mark bits: before a collection they are the last one's): about a read
 * per 8 bytes of the reached Immix objects, a word of which the checksum has read already; it
 * runs before a collection too, before evacuation copies the two apart. Large objects start on pages
 * of their own. A failure it keeps names where the inner address was read (a root or a field:
 * found by a search made only for the failures kept), else the outer object.
 */
function reportOverlaps(space: HeapSpace, model: ObjectModel, walk: GraphTraversal, roots: readonly number[], report: FailureReport): void {
  for (let k = 0; k < walk.count; k++) {
    // Another object's address within (obj, obj + size) puts its storage inside this one.
    const innerEndOffset = walk.ends[k]!;
    if (innerEndOffset === 0 || !walk.index.anyInRange(walk.order[k]! + 8, innerEndOffset)) continue;
    const obj = walk.addressAt(k);
    const innerEnd = space.base + innerEndOffset;
    const end = innerEnd - model.headerBytes;
    for (let inner = obj + 8; inner < innerEnd; inner += 8) {
      if (walk.index.get(inner - space.base) < 0) continue;
      report.failures++;
      if (report.keepsMore) {
        const reason =
          `not an object start: inside object ${hex(obj)} (+0x${(inner - obj).toString(16)}, which ends at ${hex(end)}): ` +
          "a pointer into an object was reported as an object's address (a derived pointer as a base?)";
        const holder = findHolder(space, model, walk, roots, inner);
        const location = holder === null ? { kind: "object" as const, object: obj } : report.where(holder.holder, holder.slot);
        report.details.push({
          location,
          value: inner,
          reason: location.kind === "object" ? `object ${hex(inner)} starts inside it: ${reason}` : reason,
          expected: "an object's address",
        });
      }
    }
  }
}

/** The first root (holder -1) or pointer field of a reached object that holds `value`, or null. */
function findHolder(
  space: HeapSpace,
  model: ObjectModel,
  walk: GraphTraversal,
  roots: readonly number[],
  value: number,
): { holder: number; slot: number } | null {
  const r = roots.indexOf(value);
  if (r >= 0) return { holder: -1, slot: r };
  for (let k = 0; k < walk.count; k++) {
    const obj = walk.addressAt(k);
    const n = model.pointerSlotCount(space, obj);
    for (let i = 0; i < n; i++) if (space.readWord(model.pointerSlotAddress(space, obj, i)) === value) return { holder: obj, slot: i };
  }
  return null;
}

/** Why `address` is not a valid (live, if `requireLive`) object, or null if it is. */
export function checkObject(space: HeapSpace, model: ObjectModel, address: number, requireLive: boolean): string | null {
  const offset = address - space.base;
  if (offset >>> 0 === offset) {
    const checked = checkObjectAt(space, model, offset, requireLive);
    return typeof checked === "string" ? checked : null;
  }
  // Not an integer offset below 2^32: outside the heap, unless a non-integer address inside its range.
  if (space.quarantine?.holdsAddress(address)) return space.quarantine.describeHeld(address);
  return describePoison(space, address, model.headerBytes) ?? OUTSIDE_THE_HEAP;
}

const OUTSIDE_THE_HEAP = "outside the heap";

/**
 * checkObject of the address at heap offset `offset`, an integer in [0, 2^32) (the verifier's
 * path): why the object there is not valid, or its storage size in bytes (header included) when
 * it is, which the traversal keeps rather than read the header again.
 */
function checkObjectAt(space: HeapSpace, model: ObjectModel, offset: number, requireLive: boolean): string | number {
  // (An address past the heap is not the poison pattern: that is far above every heap's end.)
  if (offset >= space.sizeBytes) return OUTSIDE_THE_HEAP;
  const block = offset >>> LOG_BYTES_IN_BLOCK;
  const address = space.base + offset;
  // First: a quarantined block may be protected memory, not to be read.
  if (space.quarantine?.holds(block)) return space.quarantine.describeHeld(address);
  const headerBytes = model.headerBytes;
  if (hasPoisonedHeader(space, offset, headerBytes)) return POISONED_OBJECT_REASON;
  if ((offset & 7) !== 0) return "misaligned";
  if (offset < space.los.bottomPage * BYTES_IN_LARGE_PAGE) {
    const state = block < space.immixTopBlock ? space.blockState[block]! : BLOCK_UNALLOCATED;
    if (state === BLOCK_UNALLOCATED) return "in a free block";
    // The allocation bitmap (gc/allocation-bits.ts): no object starts here. A pointer into one is
    // named with it, whether or not the object is reachable; before a collection anything else is
    // no object either; after one, the checks below say why (a free line, an unmarked object).
    if (!space.allocationBits.isSet(offset)) {
      const inside = describeEnclosingObject(space, model, offset);
      if (inside !== null) return inside;
      if (!requireLive) return NO_OBJECT_START;
    }
    const start = offset - headerBytes;
    if (start < block << LOG_BYTES_IN_BLOCK) return "at the start of a block, with no room for a header";
    if (model.isForwarded(space, address)) return `in evacuated memory (forwarded to ${hex(model.forwardee(space, address))})`;
    const size = model.sizeBytes(space, address);
    if (start + size > (block + 1) << LOG_BYTES_IN_BLOCK) return `with a size (${size} bytes) crossing the end of its block`;
    if (!requireLive) return size;
    if (state !== BLOCK_MARKED && state !== BLOCK_REUSABLE) return "in a block the sweep did not keep";
    const first = start >>> LOG_BYTES_IN_LINE;
    const marks = space.lineMarks;
    const epoch = space.epoch;
    if (marks[first] !== epoch) return "in a free line";
    if (size > BYTES_IN_LINE) {
      const last = (start + size - 1) >>> LOG_BYTES_IN_LINE;
      for (let l = first + 1; l <= last; l++) if (marks[l] !== epoch) return `with line ${l - first} of its ${size} bytes free`;
    }
    if (!space.isMarked(address)) return "not marked (between or inside dead objects)";
    return size;
  }
  if (space.los.isObjectAt(offset, headerBytes) && space.allocationBits.isSet(offset)) {
    const page = offset >>> LOG_BYTES_IN_LARGE_PAGE;
    const size = model.sizeBytes(space, address);
    if (size > space.los.runPages[page]! * BYTES_IN_LARGE_PAGE) return `with a size (${size} bytes) larger than its pages`;
    if (requireLive && !space.isMarked(address)) return "an unmarked large object";
    return size;
  }
  return describeEnclosingObject(space, model, offset) ?? "between large objects";
}

/** How every reason for a value where no object starts begins (gc/object-start.ts). */
const NOT_AN_OBJECT_START = "not an object start";
const NO_OBJECT_START = `${NOT_AN_OBJECT_START}: in no object (free or dead memory)`;
