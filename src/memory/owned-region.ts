import { type ScanRegion, scanMemory } from "./scan-memory.js";

/*
 * A scan-memory region (src/memory/scan-memory.ts) that belongs to one JavaScript object: a
 * simulated stack, a RootPairs buffer, a snapshot's scan tables. The region goes back to the scan
 * memory when `release()` is called, or after the owner became unreachable (a FinalizationRegistry
 * callback, which runs some time after a garbage collection, never during a scan: the owner is
 * reachable while it is used). `replace` swaps in a region of another size (growth) and hands the old
 * one back to the caller, who copies what it keeps and then releases it.
 *
 * The invariant that makes this safe: views on a region are made only by its owner and dropped
 * with it, so nothing reads the bytes after the owner is gone.
 */

const unreachable = new FinalizationRegistry<{ region: ScanRegion }>((held) => held.region.release());

export class OwnedRegion {
  private readonly held: { region: ScanRegion };

  /** Ownership of `region` (already allocated: an owner may need the offset before it exists). */
  constructor(owner: object, region: ScanRegion) {
    this.held = { region };
    unreachable.register(owner, this.held, this);
  }

  static allocate(owner: object, sizeBytes: number, what: string): OwnedRegion {
    return new OwnedRegion(owner, scanMemory().allocate(sizeBytes, what));
  }

  get offset(): number {
    return this.held.region.offset;
  }
  get sizeBytes(): number {
    return this.held.region.sizeBytes;
  }

  /** A fresh zero-filled region of `sizeBytes` in place of this one; returns the old one, to release. */
  replace(sizeBytes: number, what: string): ScanRegion {
    const old = this.held.region;
    this.held.region = scanMemory().allocate(sizeBytes, what);
    return old;
  }

  /** Returns the region now (idempotent); the owner must drop its views. */
  release(): void {
    this.held.region.release();
    unreachable.unregister(this);
  }
}
