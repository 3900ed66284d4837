/*
 * What the machine charges for memory written for the first time (issue 34): a minor page fault
 * per 4 KiB page, whose price varies by an order of magnitude between bare metal, a VM, and a
 * freshly set-up VM whose host backs guest memory on first touch. Registration's cost per record
 * in the Parse cases is, in large part, (fresh pages per registration) x (this price): the bench
 * reports both beside the ratio (bench/HISTORY.md, "Issue 34: what makes registration depend on
 * the machine").
 */

/**
 * What this machine charges for a fresh page: 64 MiB allocated (not zeroed, so the allocator maps
 * fresh memory and nothing touches it first) and one byte written per 4 KiB page, against the same
 * writes to memory already in use; ns per page, median of 5.
 */
export function freshPageCost(): { freshNsPerPage: number; reusedNsPerPage: number; faultsPerPage: number } {
  const bytes = 64 * 2 ** 20;
  const pages = bytes / 4096;
  const reused = new Uint8Array(bytes).fill(1);
  const fresh: number[] = [];
  const again: number[] = [];
  let faults = 0;
  for (let round = 0; round < 5; round++) {
    const f0 = process.resourceUsage().minorPageFault;
    let t0 = process.hrtime.bigint();
    const block = new Uint8Array(Buffer.allocUnsafeSlow(bytes).buffer);
    for (let i = 0; i < bytes; i += 4096) block[i] = 1;
    fresh.push(Number(process.hrtime.bigint() - t0) / pages);
    faults += process.resourceUsage().minorPageFault - f0;
    t0 = process.hrtime.bigint();
    for (let i = 0; i < bytes; i += 4096) reused[i]! += block[i]!;
    again.push(Number(process.hrtime.bigint() - t0) / pages);
  }
  const median = (v: number[]): number => v.sort((a, b) => a - b)[v.length >> 1]!;
  return { freshNsPerPage: median(fresh), reusedNsPerPage: median(again), faultsPerPage: faults / (5 * pages) };
}
