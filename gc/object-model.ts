import { highU32, joinHalves, lowU32 } from "../src/bytes/word-codec.js";
import { BYTES_IN_WORD } from "./heap-constants.js";

/**
 * The heap's bytes as an object model reads and writes them: little-endian 64-bit words at byte
 * addresses, stored as 32-bit halves (`words[(address - base) >>> 2]` is the low half of the word
 * at `address`). HeapSpace implements it over the caller's ArrayBuffer.
 */
export interface HeapMemory {
  readonly base: number;
  readonly words: Uint32Array;
  readonly bytes: Uint8Array;
  readWord(address: number): number;
  writeWord(address: number, value: number): void;
}

/**
 * What the collector needs to know about objects (after MMTk's ObjectModel): their size, their
 * pointer slots, forwarding and pinning. Marks are not here: the collector keeps them in side
 * tables (a mark bitmap and line marks), so a header written by native code needs no mark state.
 *
 * An object's address is what roots and pointer slots hold. Its storage starts `headerBytes`
 * before it and is `sizeBytes` long (8-aligned, header included). Every method is called on the
 * hot path of tracing or allocation and must not allocate.
 */
export interface ObjectModel {
  /** Bytes of storage before the object's address (8-aligned). */
  readonly headerBytes: number;
  /** Storage (header included, 8-aligned) an object of this shape needs. */
  allocationBytes(pointerSlots: number, rawBytes: number): number;
  /** Writes the header of a fresh object; its body is already zero. */
  initialize(heap: HeapMemory, address: number, pointerSlots: number, rawBytes: number): void;
  /** Storage bytes of the (not forwarded) object at `address`, header included. */
  sizeBytes(heap: HeapMemory, address: number): number;
  pointerSlotCount(heap: HeapMemory, address: number): number;
  /** Address of pointer slot `index` (0 <= index < pointerSlotCount). */
  pointerSlotAddress(heap: HeapMemory, address: number, index: number): number;
  rawByteCount(heap: HeapMemory, address: number): number;
  rawBytesAddress(heap: HeapMemory, address: number): number;
  isForwarded(heap: HeapMemory, address: number): boolean;
  /** Where a forwarded object went. Only meaningful when isForwarded. */
  forwardee(heap: HeapMemory, address: number): number;
  /** Marks the object at `address` (an old copy) as moved to `newAddress`. */
  setForwarding(heap: HeapMemory, address: number, newAddress: number): void;
  isPinned(heap: HeapMemory, address: number): boolean;
  setPinned(heap: HeapMemory, address: number, pinned: boolean): void;
}

/*
 * The default object layout: the one the native runtime's `gc_alloc(pointerSlots, rawBytes)`
 * builds and the only place it is written down.
 *
 *                   63                    32 31                        3   2   1   0
 *   address - 8    +------------------------+----------------------------+---+---+---+
 *   header word    |   pointer slot count   |       raw byte count       | 0 | P | F |
 *                  +------------------------+----------------------------+---+---+---+
 *   address        |  pointer slot 0      (8 bytes: 0 = null, else an object address)  |
 *   ...            |  ...                                                              |
 *   address + 8N-8 |  pointer slot N-1                                                 |
 *   address + 8N   |  raw bytes (rawBytes of them, then zero padding to 8)             |
 *                  +-------------------------------------------------------------------+
 *
 *   - The object's address (what roots point to, what gc_alloc returns) is its first pointer
 *     slot; the header is the word right before it. Storage = 8 + max(8, 8N + align8(raw)):
 *     8-aligned, and never less than 16 bytes, so every object has a body word of its own and
 *     two objects never share an address.
 *   - F (bit 0), forwarded: the object was evacuated. The whole header word is then
 *     `newAddress | 1` (new addresses are 8-aligned, so bits 0-2 are free); the old slot count
 *     and size are gone, which is fine: nothing but `forward` reads an old copy.
 *   - P (bit 1), pinned: the collector never moves the object (set by gc_pin / collector.pin).
 *   - bit 2 is reserved and written as 0. Marks are not in the header (side tables).
 *   - raw byte count < 2^29, pointer slot count < 2^28: the header fields' widths, and far above
 *     any object a heap below 4 GiB can hold.
 *   - A fresh object is all zero apart from its header: null slots, zero raw bytes.
 */
export const HEADER_BYTES = BYTES_IN_WORD;
export const HEADER_FORWARDED_BIT = 1;
export const HEADER_PINNED_BIT = 2;
export const HEADER_FLAG_BITS = 3;
export const MAX_RAW_BYTES = 2 ** 29 - 1;
export const MAX_POINTER_SLOTS = 2 ** 28 - 1;
const MIN_BODY_BYTES = BYTES_IN_WORD;

/*
 * The accessors below run per object in the collector's trace and the verifier's traversal, and
 * spell the layout's numbers as literals: V8 (Node 20) reloads a module constant and checks it
 * for the hole at every use in optimized code (about 6 instructions each; bench/README.md, issue
 * 19's third pass). They stand for BYTES_IN_WORD = HEADER_BYTES = MIN_BODY_BYTES (8),
 * HEADER_FLAG_BITS (3), HEADER_FORWARDED_BIT (1) and HEADER_PINNED_BIT (2), checked here once.
 */
if (BYTES_IN_WORD !== 8 || HEADER_BYTES !== 8 || MIN_BODY_BYTES !== 8 || HEADER_FLAG_BITS !== 3 || HEADER_FORWARDED_BIT !== 1 || HEADER_PINNED_BIT !== 2) {
  throw new Error("object-model.ts: literal layout numbers out of date");
}

/** The low half of the header word of the object at `address`. */
function headerLoIndex(heap: HeapMemory, address: number): number {
  return ((address - heap.base) >>> 2) - 2;
}

export class DefaultObjectModel implements ObjectModel {
  readonly headerBytes = HEADER_BYTES;

  allocationBytes(pointerSlots: number, rawBytes: number): number {
    const body = pointerSlots * 8 + ((rawBytes + 7) & ~7);
    return 8 + (body < 8 ? 8 : body);
  }

  initialize(heap: HeapMemory, address: number, pointerSlots: number, rawBytes: number): void {
    const i = headerLoIndex(heap, address);
    heap.words[i] = rawBytes * 8; // raw count in bits 3..31, flags 0
    heap.words[i + 1] = pointerSlots;
  }

  sizeBytes(heap: HeapMemory, address: number): number {
    const i = headerLoIndex(heap, address);
    return this.allocationBytes(heap.words[i + 1]!, heap.words[i]! >>> 3);
  }

  pointerSlotCount(heap: HeapMemory, address: number): number {
    return heap.words[headerLoIndex(heap, address) + 1]!;
  }

  pointerSlotAddress(_heap: HeapMemory, address: number, index: number): number {
    return address + index * 8;
  }

  rawByteCount(heap: HeapMemory, address: number): number {
    return heap.words[headerLoIndex(heap, address)]! >>> 3;
  }

  rawBytesAddress(heap: HeapMemory, address: number): number {
    return address + this.pointerSlotCount(heap, address) * 8;
  }

  isForwarded(heap: HeapMemory, address: number): boolean {
    return (heap.words[headerLoIndex(heap, address)]! & 1) !== 0;
  }

  forwardee(heap: HeapMemory, address: number): number {
    const i = headerLoIndex(heap, address);
    return joinHalves((heap.words[i]! & ~3) >>> 0, heap.words[i + 1]!);
  }

  setForwarding(heap: HeapMemory, address: number, newAddress: number): void {
    const i = headerLoIndex(heap, address);
    heap.words[i] = lowU32(newAddress) | 1;
    heap.words[i + 1] = highU32(newAddress);
  }

  isPinned(heap: HeapMemory, address: number): boolean {
    return (heap.words[headerLoIndex(heap, address)]! & 2) !== 0;
  }

  setPinned(heap: HeapMemory, address: number, pinned: boolean): void {
    const i = headerLoIndex(heap, address);
    const lo = heap.words[i]!;
    heap.words[i] = pinned ? lo | 2 : lo & ~2;
  }
}

/** The model the native runtime uses; stateless, so one instance serves every heap. */
export const DEFAULT_OBJECT_MODEL: ObjectModel = new DefaultObjectModel();
