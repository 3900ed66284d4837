import { ReleasedModuleError } from "../errors.js";

/*
 * The memory of registrations through the scan kernel's index (src/safepoints/kernel-index.ts:
 * the table's columns in one buffer; the section's copy and the scan recipes in another), handed
 * back for reuse when the caller unregisters the module with `{ release: true }`, as a runtime
 * unloading a module would, instead of waiting for V8's garbage collector to find the registry
 * dead (bench/HISTORY.md, issue 34: every registration otherwise writes fresh pages, 1.5-5 us
 * each on a VM, and its external memory triggers collections).
 *
 * Invariants:
 *  - a buffer is in the pool only after the lease holding it was released, and is handed out to
 *    one new lease at a time: it is never reachable through two live leases;
 *  - everything that reads a lease's buffers (a snapshot's table, recipes and layout, the
 *    module's recipes, its deferred descriptors) calls `check()` first, so a snapshot taken
 *    before the release is refused with a ReleasedModuleError, never answered from memory a later
 *    registration has rewritten. What was copied out before the release (a snapshot's scan
 *    layout, its `find` index) stays the snapshot's own and keeps answering;
 *  - bounded: at most POOL_MAX_BUFFERS buffers and at most twice the bytes of the last
 *    registration released; the oldest go first (to the garbage collector, as before);
 *  - a pooled buffer is handed out only for its size class (quarter powers of two), so a
 *    registration takes at most a quarter more memory than it asked for; its contents are
 *    whatever the last registration left: every user writes each byte it exposes first
 *    (src/bytes/uninitialized-array.ts's rule).
 */

const POOL_MAX_BUFFERS = 4;
const pool: ArrayBuffer[] = [];

/** `sizeBytes` rounded up to its size class: a multiple of a quarter of its highest power of two (at least 64 bytes). */
export function sizeClassBytes(sizeBytes: number): number {
  if (sizeBytes <= 64) return 64;
  const quarter = 2 ** (Math.floor(Math.log2(sizeBytes)) - 2);
  return Math.ceil(sizeBytes / quarter) * quarter;
}

/** A buffer of `sizeBytes`' size class: a pooled one when there is one, else fresh (not zeroed when large). */
export function takeBuffer(sizeBytes: number): ArrayBuffer {
  const wanted = sizeClassBytes(sizeBytes);
  for (let i = 0; i < pool.length; i++) {
    if (pool[i]!.byteLength === wanted) return pool.splice(i, 1)[0]!;
  }
  return wanted < 64 * 1024 ? new ArrayBuffer(wanted) : (Buffer.allocUnsafeSlow(wanted).buffer as ArrayBuffer);
}

/** What the pool holds now (tests and the bench read it). */
export function pooledBuffers(): { buffers: number; bytes: number } {
  return { buffers: pool.length, bytes: pool.reduce((sum, b) => sum + b.byteLength, 0) };
}

/** Who released a lease, for the error a later reader gets. */
interface Release {
  readonly moduleName: string;
  readonly handle: number;
}

/** The buffers of one registration, readable until released. */
export class RegistrationLease {
  private released: Release | undefined;
  private buffers: ArrayBuffer[];

  constructor(buffers: ArrayBuffer[]) {
    this.buffers = buffers;
  }

  get isReleased(): boolean {
    return this.released !== undefined;
  }

  /** Throws ReleasedModuleError once the buffers were handed back; every reader of them calls it first. */
  check(): void {
    if (this.released !== undefined) throw new ReleasedModuleError(this.released.moduleName, this.released.handle);
  }

  /** Hands the buffers to the pool (once): from now on `check()` throws. */
  release(moduleName: string, handle: number): void {
    if (this.released !== undefined) return;
    this.released = { moduleName, handle };
    const given = this.buffers;
    this.buffers = [];
    let limitBytes = 0;
    for (const b of given) limitBytes += 2 * b.byteLength;
    pool.push(...given);
    let bytes = pool.reduce((sum, b) => sum + b.byteLength, 0);
    while (pool.length > POOL_MAX_BUFFERS || bytes > limitBytes) bytes -= pool.shift()!.byteLength;
  }
}
