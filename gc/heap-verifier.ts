import { highU32, lowU32 } from "../src/bytes/word-codec.js";
import { hex } from "../src/errors.js";
import { BYTES_IN_BLOCK, BYTES_IN_LARGE_PAGE, BYTES_IN_LINE, LOG_BYTES_IN_BLOCK, LOG_BYTES_IN_LARGE_PAGE, LOG_BYTES_IN_LINE } from "./heap-constants.js";
import { BLOCK_MARKED, BLOCK_REUSABLE, BLOCK_UNALLOCATED, type HeapSpace } from "./heap-space.js";
import type { ObjectModel } from "./object-model.js";
import { describePoison } from "./poison.js";

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
 */
export function inspectGraph(
  space: HeapSpace,
  model: ObjectModel,
  roots: readonly number[],
  requireLive: boolean,
  maxMessages = 20,
  describeRoot: RootDescriber = () => undefined,
): GraphInspection {
  const index = TraversalIndex.reused();
  const order: number[] = [];
  const details: VerifyFailure[] = [];
  let failures = 0;
  const h = new Checksum();

  /** Where a pointer was read: root `slot` (holder -1) or pointer slot `slot` of object `holder`. */
  const where = (holder: number, slot: number): VerifyFailureLocation =>
    holder < 0
      ? { kind: "root", index: slot, description: describeRoot(slot) }
      : { kind: "field", object: holder, offsetBytes: model.pointerSlotAddress(space, holder, slot) - holder };
  const fail = (holder: number, slot: number, target: number, reason: string): void => {
    failures++;
    if (details.length < maxMessages) details.push({ location: where(holder, slot), value: target, reason, expected: "a live object" });
  };

  /**
   * The target's traversal index (discovering it), or -1 if it fails a check. The place it was
   * read from is passed as numbers and only spelled out for a failure: this runs per pointer.
   */
  const reach = (target: number, holder: number, slot: number): number => {
    const known = index.get(target);
    if (known >= 0) return known;
    const reason = checkObject(space, model, target, requireLive);
    if (reason !== null) {
      fail(holder, slot, target, reason);
      return -1;
    }
    index.set(target, order.length);
    order.push(target);
    return order.length - 1;
  };

  roots.forEach((root, r) => {
    h.add(root === 0 ? 0 : reach(root, -1, r) + 1);
  });
  for (let k = 0; k < order.length; k++) {
    const obj = order[k]!;
    const slots = model.pointerSlotCount(space, obj);
    const rawCount = model.rawByteCount(space, obj);
    h.add(slots);
    h.add(rawCount);
    // Raw bytes a 32-bit word at a time (they start 8-aligned, after the slots), the tail by bytes.
    const raw = model.rawBytesAddress(space, obj) - space.base;
    const wholeWords = rawCount >>> 2;
    for (let i = 0, w = raw >>> 2; i < wholeWords; i++) h.add32(space.words[w + i]!);
    for (let i = wholeWords << 2; i < rawCount; i++) h.add32(space.bytes[raw + i]!);
    for (let i = 0; i < slots; i++) {
      const v = space.readWord(model.pointerSlotAddress(space, obj, i));
      h.add(v === 0 ? 0 : reach(v, obj, i) + 1);
    }
  }
  h.add(order.length);
  failures += reportOverlaps(space, model, order, roots, details, maxMessages, where);
  return { objects: order.length, checksum: h.digest(), failures, messages: details.map(formatVerifyFailure), details };
}

/**
 * Counts reachable Immix objects whose storage starts inside another reachable object, and adds
 * failures: a pointer into the middle of an object taken for an object's address (a derived
 * pointer reported as a base; the collector has no interior-pointer lookup), whose "header" is
 * the other's data. Sets a bit per reachable object's address in a bitmap of its own (not the
 * mark bits: before a collection they are the last one's), then looks at the bit of every word
 * of each object's body after its first, so it costs about what hashing the raw bytes costs, and
 * runs before a collection too, before evacuation copies the two apart. Large objects start on
 * pages of their own. A failure it keeps names where the inner address was read (a root or a
 * field: found by a search made only for the failures kept), else the outer object.
 */
function reportOverlaps(
  space: HeapSpace,
  model: ObjectModel,
  objects: readonly number[],
  roots: readonly number[],
  details: VerifyFailure[],
  maxMessages: number,
  where: (holder: number, slot: number) => VerifyFailureLocation,
): number {
  const immixEnd = space.base + space.los.bottomPage * BYTES_IN_LARGE_PAGE;
  const starts = ObjectStartBits.reused(space.sizeBytes);
  for (const obj of objects) if (obj < immixEnd) starts.set(obj - space.base);
  let failures = 0;
  for (const obj of objects) {
    if (obj >= immixEnd) continue;
    const end = obj - model.headerBytes + model.sizeBytes(space, obj);
    // Another object's address within (obj, end + header) puts its storage inside this one.
    for (let inner = obj + 8; inner < end + model.headerBytes; inner += 8) {
      if (!starts.has(inner - space.base)) continue;
      failures++;
      if (details.length < maxMessages) {
        const reason =
          `not an object start: inside object ${hex(obj)} (+0x${(inner - obj).toString(16)}, which ends at ${hex(end)}): ` +
          "a pointer into an object was reported as an object's address (a derived pointer as a base?)";
        const holder = findHolder(space, model, objects, roots, inner);
        const location = holder === null ? { kind: "object" as const, object: obj } : where(holder.holder, holder.slot);
        details.push({
          location,
          value: inner,
          reason: location.kind === "object" ? `object ${hex(inner)} starts inside it: ${reason}` : reason,
          expected: "an object's address",
        });
      }
    }
  }
  for (const obj of objects) if (obj < immixEnd) starts.clear(obj - space.base);
  return failures;
}

/**
 * One bit per 8-byte granule of a heap: the reachable objects' addresses of one traversal. One
 * shared bitmap, grown to the largest heap seen and left all clear after each use (its user
 * clears the bits it set), so a verification after every collection neither allocates nor
 * clears the whole map.
 */
class ObjectStartBits {
  private bits = new Uint32Array(0);
  private static shared: ObjectStartBits | undefined;

  static reused(heapBytes: number): ObjectStartBits {
    const map = (ObjectStartBits.shared ??= new ObjectStartBits());
    const words = Math.ceil(heapBytes / 256);
    if (map.bits.length < words) map.bits = new Uint32Array(words);
    return map;
  }

  set(offset: number): void {
    const g = offset >>> 3;
    this.bits[g >>> 5]! |= 1 << (g & 31);
  }

  has(offset: number): boolean {
    const g = offset >>> 3;
    return (this.bits[g >>> 5]! & (1 << (g & 31))) !== 0;
  }

  clear(offset: number): void {
    const g = offset >>> 3;
    this.bits[g >>> 5]! &= ~(1 << (g & 31));
  }
}

/** The first root (holder -1) or pointer field of `objects` that holds `value`, or null. */
function findHolder(
  space: HeapSpace,
  model: ObjectModel,
  objects: readonly number[],
  roots: readonly number[],
  value: number,
): { holder: number; slot: number } | null {
  const r = roots.indexOf(value);
  if (r >= 0) return { holder: -1, slot: r };
  for (const obj of objects) {
    const n = model.pointerSlotCount(space, obj);
    for (let i = 0; i < n; i++) if (space.readWord(model.pointerSlotAddress(space, obj, i)) === value) return { holder: obj, slot: i };
  }
  return null;
}

/** Why `address` is not a valid (live, if `requireLive`) object, or null if it is. */
export function checkObject(space: HeapSpace, model: ObjectModel, address: number, requireLive: boolean): string | null {
  // First: a quarantined block may be protected memory, not to be read.
  if (space.quarantine?.holdsAddress(address)) return space.quarantine.describeHeld(address);
  const poisoned = describePoison(space, address, model.headerBytes);
  if (poisoned !== null) return poisoned;
  const offset = address - space.base;
  if (!Number.isSafeInteger(address) || offset < 0 || offset >= space.sizeBytes) return "outside the heap";
  if ((offset & 7) !== 0) return "misaligned";
  const inLargeSpace = offset >= space.los.bottomPage * BYTES_IN_LARGE_PAGE;
  if (!inLargeSpace) {
    const block = offset >>> LOG_BYTES_IN_BLOCK;
    const state = block < space.immixTopBlock ? space.blockState[block]! : BLOCK_UNALLOCATED;
    if (state === BLOCK_UNALLOCATED) return "in a free block";
    if (offset - model.headerBytes < block * BYTES_IN_BLOCK) return "at the start of a block, with no room for a header";
    if (model.isForwarded(space, address)) return `in evacuated memory (forwarded to ${hex(model.forwardee(space, address))})`;
    const size = model.sizeBytes(space, address);
    const start = offset - model.headerBytes;
    if (start + size > (block + 1) * BYTES_IN_BLOCK) return `with a size (${size} bytes) crossing the end of its block`;
    if (!requireLive) return null;
    if (state !== BLOCK_MARKED && state !== BLOCK_REUSABLE) return "in a block the sweep did not keep";
    const first = start >>> LOG_BYTES_IN_LINE;
    if (space.lineMarks[first] !== space.epoch) return "in a free line";
    if (size > BYTES_IN_LINE) {
      const last = (start + size - 1) >>> LOG_BYTES_IN_LINE;
      for (let l = first + 1; l <= last; l++) if (space.lineMarks[l] !== space.epoch) return `with line ${l - first} of its ${size} bytes free`;
    }
    if (!space.isMarked(address)) return "not marked (between or inside dead objects)";
    return null;
  }
  if (space.los.isObjectAt(offset, model.headerBytes)) {
    const page = offset >>> LOG_BYTES_IN_LARGE_PAGE;
    const size = model.sizeBytes(space, address);
    if (size > space.los.runPages[page]! * BYTES_IN_LARGE_PAGE) return `with a size (${size} bytes) larger than its pages`;
    if (requireLive && !space.isMarked(address)) return "an unmarked large object";
    return null;
  }
  return "between large objects";
}

/**
 * Object address -> traversal index, for one traversal: open addressing on typed arrays (heap
 * addresses are 8-aligned integers below 2^53; 0 marks an empty slot, never an object's address),
 * doubled when half full. A Map here cost more than the rest of the verification.
 */
class TraversalIndex {
  private keys = new Float64Array(1024);
  private values = new Int32Array(1024);
  private count = 0;
  private static shared: TraversalIndex | undefined;

  /**
   * The one index, emptied: a verification after every collection would otherwise regrow it
   * from 1024 slots each time. Emptying costs its capacity, about twice the last graph's objects.
   * (inspectGraph is not reentrant, and runs on one thread.)
   */
  static reused(): TraversalIndex {
    const index = (TraversalIndex.shared ??= new TraversalIndex());
    if (index.count > 0) index.keys.fill(0);
    index.count = 0;
    return index;
  }

  private slotOf(key: number, keys: Float64Array): number {
    const mask = keys.length - 1;
    // High bits of a multiplicative mix of the address's words (8-aligned: drop 3 low bits).
    let i = Math.imul(((key / 8) >>> 0) ^ ((key / 0x8_0000_0000) >>> 0), 0x9e3779b1) >>> (Math.clz32(keys.length) + 1);
    while (keys[i] !== 0 && keys[i] !== key) i = (i + 1) & mask;
    return i;
  }

  /** The index of `key`, or -1. */
  get(key: number): number {
    const i = this.slotOf(key, this.keys);
    return this.keys[i] === key ? this.values[i]! : -1;
  }

  set(key: number, value: number): void {
    if ((this.count + 1) * 2 > this.keys.length) this.grow();
    const i = this.slotOf(key, this.keys);
    if (this.keys[i] !== key) this.count++;
    this.keys[i] = key;
    this.values[i] = value;
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldValues = this.values;
    this.keys = new Float64Array(oldKeys.length * 2);
    this.values = new Int32Array(oldKeys.length * 2);
    for (let j = 0; j < oldKeys.length; j++) {
      if (oldKeys[j] === 0) continue;
      const i = this.slotOf(oldKeys[j]!, this.keys);
      this.keys[i] = oldKeys[j]!;
      this.values[i] = oldValues[j]!;
    }
  }
}

/** Two 32-bit FNV-1a-style lanes over 32-bit values (numbers up to 2^53 are split in halves). */
class Checksum {
  private a = 0x811c9dc5;
  private b = 0x01000193;

  /** A value below 2^32 (one lane step each; the verifier's raw words). */
  add32(value: number): void {
    this.a = Math.imul(this.a ^ value, 0x01000193);
    this.b = Math.imul(this.b ^ value, 0x5bd1e995) ^ (this.b >>> 13);
  }

  add(value: number): void {
    const lo = lowU32(value);
    const hi = highU32(value);
    this.a = Math.imul(this.a ^ lo, 0x01000193);
    this.a = Math.imul(this.a ^ hi, 0x01000193);
    this.b = Math.imul(this.b ^ lo, 0x5bd1e995) ^ (this.b >>> 13);
    this.b = Math.imul(this.b ^ hi, 0x5bd1e995) ^ (this.b >>> 15);
  }

  digest(): string {
    return (this.a >>> 0).toString(16).padStart(8, "0") + (this.b >>> 0).toString(16).padStart(8, "0");
  }
}
