import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import { REGION_ALIGN_BYTES, SCAN_MEMORY_BYTES, ScanMemory, scanMemory } from "../../src/memory/scan-memory.js";
import { SimulatedMemory } from "../../src/memory/memory.js";

describe("scan memory", () => {
  it("is one 4 GiB shared memory per process, made once", () => {
    const m = scanMemory();
    expect(scanMemory()).toBe(m);
    expect(m.buffer.byteLength).toBe(SCAN_MEMORY_BYTES);
  });

  it("hands out zero-filled whole pages that never overlap, and takes them back", () => {
    const m = new ScanMemory();
    const a = m.allocate(100, "a");
    const b = m.allocate(REGION_ALIGN_BYTES + 1, "b");
    expect(a.offset).toBe(REGION_ALIGN_BYTES);
    expect(a.sizeBytes).toBe(REGION_ALIGN_BYTES);
    expect(b.offset).toBe(a.offset + a.sizeBytes);
    expect(b.sizeBytes).toBe(2 * REGION_ALIGN_BYTES);
    m.bytes.fill(7, a.offset, a.offset + a.sizeBytes);
    a.release();
    a.release();
    const c = m.allocate(REGION_ALIGN_BYTES, "c");
    expect(c.offset).toBe(a.offset);
    expect(m.bytes[c.offset + 5]).toBe(0);
    c.release();
    b.release();
    expect(m.allocatedBytes).toBe(0);
    expect(m.largestFreeBytes).toBe(SCAN_MEMORY_BYTES - REGION_ALIGN_BYTES);
  });

  it("places a region at a coarser alignment when asked, leaving the bytes skipped to reach it free", () => {
    const m = new ScanMemory();
    const align = 16 * REGION_ALIGN_BYTES;
    const a = m.allocate(REGION_ALIGN_BYTES, "a");
    const b = m.allocate(3 * REGION_ALIGN_BYTES, "b", align);
    expect(b.offset).toBe(align);
    expect(b.sizeBytes).toBe(3 * REGION_ALIGN_BYTES);
    const c = m.allocate(REGION_ALIGN_BYTES, "c");
    expect(c.offset).toBe(a.offset + a.sizeBytes); // in the gap before b
    const d = m.allocate(align, "d", align);
    expect(d.offset).toBe(2 * align);
    for (const r of [a, b, c, d]) r.release();
    expect(m.allocatedBytes).toBe(0);
    expect(m.largestFreeBytes).toBe(SCAN_MEMORY_BYTES - REGION_ALIGN_BYTES);
  });

  it("refuses what does not fit with a message naming the region and the 4 GiB limit", () => {
    const m = new ScanMemory();
    const big = m.allocate(3 * 2 ** 30, "thread stacks");
    expect(() => m.allocate(2 * 2 ** 30, "--heap 2G")).toThrow(InvalidArgumentError);
    expect(() => m.allocate(2 * 2 ** 30, "--heap 2G")).toThrow(
      /--heap 2G: found 2147483648 bytes with 3221225472 of the scan memory's 4294967296 in use .*4 GiB scan memory/,
    );
    expect(() => m.allocate(0, "x")).toThrow(/x: found 0, expected a positive whole number of bytes/);
    big.release();
    expect(m.allocate(8 << 20, "--heap 8M").offset).toBe(REGION_ALIGN_BYTES);
  });
});

describe("a simulated memory's range that is no numbers", () => {
  // A JavaScript caller's missing or string base and size: undefined made the MemoryAccessError's
  // own constructor throw a TypeError (it prints both as hex), a string became "at 0xa".
  it.each([
    [undefined, undefined, "base undefined and size undefined"],
    ["0x1000", 64, "base a string and size a number"],
    [0x1000, "64", "base a number and size a string"],
  ])("new SimulatedMemory(%s, %s) is an InvalidArgumentError naming both", (base, size, found) => {
    const make = () => new SimulatedMemory(base as number, size as number);
    expect(make).toThrow(InvalidArgumentError);
    expect(make).toThrow(`memory range: found ${found}, expected two numbers: an 8-aligned base and a size in bytes`);
  });
});
