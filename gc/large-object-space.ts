import { BYTES_IN_LARGE_PAGE, LOG_BYTES_IN_LARGE_PAGE } from "./heap-constants.js";

/** Page kinds of the large-object space's side table. */
export const PAGE_FREE = 0;
export const PAGE_OBJECT_START = 1;
export const PAGE_OBJECT_REST = 2;

/**
 * The large-object space: objects above 8 KiB, each on its own run of 4 KiB pages, never moved.
 *
 * It lives at the top of the heap reservation and grows downwards, towards the Immix blocks that
 * grow upwards from the bottom; `bottomPage` is its lowest page. Two side tables over pages:
 * `pageKind` (free, first page of an object, later page of an object) and `runPages` (at the
 * first page of a run, object or free, the run's length), so runs are walked by jumping from
 * one to the next and first-fit needs no separate free list.
 *
 * Invariants: pages below `bottomPage` belong to nobody; the run at `bottomPage` is never free
 * (a free run there is given back by moving `bottomPage` up); adjacent free runs are merged by
 * the sweep.
 */
export class LargeObjectSpace {
  readonly pageKind: Uint8Array;
  readonly runPages: Uint32Array;
  bottomPage: number;
  pagesInUse = 0;
  objectCount = 0;

  constructor(
    readonly totalPages: number,
    /** The lowest page the space may grow down to (the Immix blocks' current top). */
    private readonly floorPage: () => number,
  ) {
    this.pageKind = new Uint8Array(totalPages);
    this.runPages = new Uint32Array(totalPages);
    this.bottomPage = totalPages;
  }

  static pagesFor(sizeBytes: number): number {
    return Math.ceil(sizeBytes / BYTES_IN_LARGE_PAGE);
  }

  /**
   * First page of a fresh run of `pages` pages, or -1 when no free run fits and the space cannot
   * grow down (the caller checked the heap budget). The memory is not zeroed here.
   */
  allocPages(pages: number): number {
    const kind = this.pageKind;
    const run = this.runPages;
    for (let p = this.bottomPage; p < this.totalPages; p += run[p]!) {
      if (kind[p] === PAGE_FREE && run[p]! >= pages) {
        const rest = run[p]! - pages;
        if (rest > 0) {
          kind[p + pages] = PAGE_FREE;
          run[p + pages] = rest;
        }
        return this.claim(p, pages);
      }
    }
    const start = this.bottomPage - pages;
    if (start < this.floorPage()) return -1;
    this.bottomPage = start;
    return this.claim(start, pages);
  }

  private claim(first: number, pages: number): number {
    this.pageKind[first] = PAGE_OBJECT_START;
    this.runPages[first] = pages;
    this.pageKind.fill(PAGE_OBJECT_REST, first + 1, first + pages);
    this.pagesInUse += pages;
    this.objectCount++;
    return first;
  }

  /** True when `offset` (from the heap base) is `headerBytes` into the first page of an object. */
  isObjectAt(offset: number, headerBytes: number): boolean {
    const page = offset >>> LOG_BYTES_IN_LARGE_PAGE;
    return (
      page >= this.bottomPage && page < this.totalPages && this.pageKind[page] === PAGE_OBJECT_START && offset === page * BYTES_IN_LARGE_PAGE + headerBytes
    );
  }

  /**
   * Frees every object whose first page `isLive` rejects, merges free runs and gives a free run
   * at the bottom back. Returns the number of pages freed; `onFree` hears of each freed object's
   * pages (before the merge).
   */
  sweep(isLive: (firstPage: number) => boolean, onFree?: (firstPage: number, pages: number) => void): number {
    const kind = this.pageKind;
    const run = this.runPages;
    let freed = 0;
    let lastFree = -1;
    for (let p = this.bottomPage; p < this.totalPages;) {
      const n = run[p]!;
      if (kind[p] === PAGE_OBJECT_START && !isLive(p)) {
        kind.fill(PAGE_FREE, p, p + n);
        onFree?.(p, n);
        freed += n;
        this.objectCount--;
      }
      if (kind[p] === PAGE_FREE) {
        if (lastFree >= 0) run[lastFree] = run[lastFree]! + n;
        else lastFree = p;
      } else {
        lastFree = -1;
      }
      p += n;
    }
    this.pagesInUse -= freed;
    while (this.bottomPage < this.totalPages && kind[this.bottomPage] === PAGE_FREE) this.bottomPage += run[this.bottomPage]!;
    return freed;
  }

  /** Calls `fn(firstPage, pages)` for every object, lowest address first. */
  forEachObject(fn: (firstPage: number, pages: number) => void): void {
    for (let p = this.bottomPage; p < this.totalPages; p += this.runPages[p]!) {
      if (this.pageKind[p] === PAGE_OBJECT_START) fn(p, this.runPages[p]!);
    }
  }
}
