/*
 * Typed arrays whose memory is not zeroed first, for columns a writer fills completely before
 * anyone reads them (registration's decoded locations, descriptor columns).
 *
 * `new Int32Array(n)` has Node allocate zeroed memory (calloc): for the megabytes a map of 100k
 * records takes, zeroing is a pass over memory as long as the writes themselves (about a third of
 * the time a registration took at 100k records; bench/README.md "Parse + index"). Node's
 * `Buffer.allocUnsafeSlow` allocates without zeroing and without the shared pool, so the array
 * has an ArrayBuffer of its own, exactly its size.
 *
 * Invariant for every user: each element is written before it is read, and the slack past what
 * was written is sliced or subarrayed off before the array leaves its writer (whatever the
 * process held there before is never read).
 */

type TypedArrayConstructor<T> = { new (buffer: ArrayBuffer, byteOffset: number, length: number): T; readonly BYTES_PER_ELEMENT: number };

/**
 * Below this many bytes an array is zeroed as usual: `Buffer.allocUnsafeSlow` costs about a
 * microsecond per call, more than zeroing a small array (a 1k-record registration makes twenty).
 */
const UNZEROED_MIN_BYTES = 64 * 1024;

/** A `length`-element array of `kind` whose contents are whatever the memory held (zeros when small). */
export function uninitializedArray<T>(kind: TypedArrayConstructor<T>, length: number): T {
  const bytes = length * kind.BYTES_PER_ELEMENT;
  const buffer = bytes < UNZEROED_MIN_BYTES ? new ArrayBuffer(bytes) : (Buffer.allocUnsafeSlow(bytes).buffer as ArrayBuffer);
  return new kind(buffer, 0, length);
}
