import { readFileSync } from "node:fs";
import { PerformanceObserver, constants } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { encodeSyntheticStackMap } from "../../bench/synthetic-stackmap.js";
import * as api from "../../src/index.js";
import { compileCorpusEntry, corpusEntry } from "../ll/corpus.js";

/*
 * The per-frame lookup of the public API: RegistrySnapshot.find (an address -> the safepoint's
 * index in the snapshot, or -1) and the `...At(index)` readers, which an embedder's own walker
 * calls per frame in place of safepointAt (which builds a SafepointInfo) or lookup (an object per
 * hit). Each answer must be safepointAt's, for several modules at load biases (indices span
 * modules), for descriptors decoded at registration and for descriptors deferred to their first
 * use in blocks (a map registered through the scan kernel's index); bad arguments are
 * InvalidArgumentErrors; and 5 million calls may not allocate (counted scavenges, with the
 * allocating `lookup` as the control that shows the count sees an allocation per call).
 */

const ADDRESS = "expected an address: a whole number in [0, 2^53)";

function objectOf(name: string): Uint8Array {
  return readFileSync(compileCorpusEntry(corpusEntry(name)));
}

/** Three real objects at three load biases: statepoints with derived pairs, a frame-pointer chain, every location kind. */
function severalModules(): api.RegistrySnapshot {
  const registry = new api.SafepointRegistry();
  api.registerObjectFile(registry, objectOf("derived-pairs"), { path: "derived-pairs.o" });
  api.registerObjectFile(registry, objectOf("call-chain-frame-pointer"), { path: "call-chain-frame-pointer.o", loadBias: 0x10_0000 });
  api.registerObjectFile(registry, objectOf("location-kinds-o0"), { path: "location-kinds-o0.o", loadBias: 0x20_0000 });
  return registry.snapshot();
}

/** 3,000 records registered through the scan kernel's index: descriptors deferred, decoded by blocks of 1024. */
function deferredModule(): api.RegistrySnapshot {
  const registry = new api.SafepointRegistry();
  api.registerStackMapBytes(registry, encodeSyntheticStackMap({ functions: 300, recordsPerFunction: 10, rootsPerRecord: 3 }), { name: "synthetic" });
  return registry.snapshot();
}

/** A root's location rebuilt from the index readers, in safepointAt's words. */
function locationFromReaders(snapshot: api.RegistrySnapshot, index: number, root: number, side: api.RootSide): api.RootLocation {
  const register = snapshot.architecture!.registerName(snapshot.rootRegisterAt(index, root, side));
  const operand = snapshot.rootOffsetOrConstantAt(index, root, side);
  switch (snapshot.rootKindAt(index, root, side)) {
    case api.LocationKind.Register:
      return { kind: "register", register };
    case api.LocationKind.Direct:
      return { kind: "direct", register, offsetBytes: operand };
    case api.LocationKind.Indirect:
      return { kind: "indirect", register, offsetBytes: operand };
    case api.LocationKind.Constant:
      return { kind: "constant", value: String(operand) };
    default:
      return { kind: "constant", value: `constants[${operand}]` };
  }
}

/** Every registered safepoint through find and the readers, against safepointAt and lookup; returns the indices found. */
function checkEverySafepoint(snapshot: api.RegistrySnapshot): number[] {
  const indices: number[] = [];
  for (const info of api.listSafepoints(snapshot)) {
    const ra = info.returnAddress;
    const index = snapshot.find(ra);
    indices.push(index);
    expect(snapshot.find(BigInt(ra))).toBe(index);
    const found = snapshot.lookup(ra)!;
    expect(snapshot.moduleAt(index)).toBe(found.module);
    expect(snapshot.descriptorIndexAt(index)).toBe(found.index);
    expect(snapshot.returnAddressAt(index)).toBe(ra);
    expect(snapshot.frameSizeBytesAt(index)).toBe(info.frameSizeBytes ?? -1);
    expect(snapshot.rootCountAt(index)).toBe(info.roots.length);
    const roots = info.roots.map((_, k) => ({
      base: locationFromReaders(snapshot, index, k, "base"),
      derived: locationFromReaders(snapshot, index, k, "derived"),
    }));
    expect(roots).toEqual(info.roots);
  }
  return indices;
}

describe("RegistrySnapshot.find and the index readers", () => {
  it("answer what safepointAt answers, for modules at load biases, indices dense over the snapshot", () => {
    const snapshot = severalModules();
    const indices = checkEverySafepoint(snapshot);
    expect(snapshot.modules.size).toBe(3);
    expect(new Set(snapshot.moduleBySlot.map((m) => m.name)).size).toBe(3);
    // One index per safepoint, 0 .. count - 1, module by module.
    expect([...indices].sort((a, b) => a - b)).toEqual(indices.map((_, i) => i));
    expect(indices.some((i) => snapshot.moduleAt(i).loadBias === 0x20_0000)).toBe(true);
    // The frame-pointer chain has frames with no static size; location-kinds-o0 has every kind.
    expect(indices.some((i) => snapshot.frameSizeBytesAt(i) === -1)).toBe(true);
    const kinds = new Set(indices.flatMap((i) => Array.from({ length: snapshot.rootCountAt(i) }, (_, k) => snapshot.rootKindAt(i, k, "derived"))));
    expect(kinds.size).toBeGreaterThan(1);
  });

  it("read descriptors deferred by blocks (the scan kernel's index) as safepointAt does", () => {
    const snapshot = deferredModule();
    expect(snapshot.moduleBySlot[0]!.deferred).toBeDefined();
    const indices = checkEverySafepoint(snapshot);
    expect(indices.length).toBe(3000);
    expect([...indices].sort((a, b) => a - b)).toEqual(indices.map((_, i) => i));
  });

  it("answer -1 where no safepoint is, for numbers and bigints", () => {
    const snapshot = severalModules();
    const keys = new Set(api.listSafepoints(snapshot).map((s) => s.returnAddress));
    for (const ra of keys) {
      for (const near of [ra + 1, ra - 1, ra + 0x30_0000]) if (!keys.has(near)) expect(snapshot.find(near)).toBe(-1);
    }
    for (const address of [0, 1, 2 ** 32, 2 ** 53 - 1]) {
      expect(snapshot.find(address)).toBe(-1);
      expect(snapshot.find(BigInt(address))).toBe(-1);
    }
    expect(api.RegistrySnapshot.EMPTY.find(0x401000)).toBe(-1);
  });

  it("answer a fresh snapshot's first call (which builds the index) as every later one: a hit, a miss, a bad number", () => {
    const reference = deferredModule();
    const ras = api.listSafepoints(reference).map((s) => s.returnAddress);
    const expected = ras.map((ra) => reference.find(ra));
    for (const k of [0, 1, ras.length - 1]) {
      const fresh = deferredModule();
      expect(fresh.find(ras[k]!)).toBe(expected[k]);
      expect(fresh.find(ras[k]! + 1)).toBe(-1);
    }
    const missFirst = deferredModule();
    expect(missFirst.find(ras[2]! + 1)).toBe(-1);
    expect(ras.map((ra) => missFirst.find(ra))).toEqual(expected);
    const bigintFirst = deferredModule();
    expect(bigintFirst.find(BigInt(ras[3]!))).toBe(expected[3]);
    for (const bad of [ras[4]! + 0.5, -8, NaN, 2 ** 53]) {
      const fresh = deferredModule();
      expect(() => fresh.find(bad)).toThrow(api.InvalidArgumentError);
      expect(fresh.find(ras[4]!)).toBe(expected[4]);
    }
  });

  it("refuse what is no address and no index by name", () => {
    const snapshot = severalModules();
    const ra = api.listSafepoints(snapshot)[0]!.returnAddress;
    const cases: [() => unknown, string][] = [
      [() => snapshot.find(ra + 0.5), `returnAddress: found ${ra + 0.5}, ${ADDRESS}`],
      [() => snapshot.find(-8), `returnAddress: found -8, ${ADDRESS}`],
      [() => snapshot.find(NaN), `returnAddress: found NaN, ${ADDRESS}`],
      [() => snapshot.find(2 ** 53), `returnAddress: found ${2 ** 53}, ${ADDRESS}`],
      [() => snapshot.find(String(ra) as unknown as number), `returnAddress: found "${ra}", ${ADDRESS}`],
      [() => snapshot.find(2n ** 60n), `returnAddress: found a bigint ${2n ** 60n}n, ${ADDRESS}`],
    ];
    const count = api.listSafepoints(snapshot).length;
    const index = snapshot.find(ra);
    for (const bad of [-1, count, 1.5, NaN]) {
      cases.push([() => snapshot.frameSizeBytesAt(bad), `safepoint index: found ${bad}, expected an index find() returned: a whole number in [0, ${count})`]);
    }
    const roots = snapshot.rootCountAt(index);
    cases.push([() => snapshot.rootKindAt(index, roots, "base"), `root: found ${roots}, expected a root of this safepoint: a whole number in [0, ${roots})`]);
    cases.push([() => snapshot.rootKindAt(index, 0, "both" as api.RootSide), 'side: found both, expected "base" or "derived"']);
    for (const [call, message] of cases) {
      expect(call).toThrow(api.InvalidArgumentError);
      expect(call).toThrow(message);
    }
  });
});

/** Minor collections (scavenges) while `work` runs, as the gc performance entries report them. */
async function scavengesDuring(work: () => void): Promise<number> {
  const kinds: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) kinds.push((entry as unknown as { detail: { kind: number } }).detail.kind);
  });
  observer.observe({ entryTypes: ["gc"] });
  work();
  // The entries are delivered after the work, on the event loop.
  await new Promise((resolve) => setTimeout(resolve, 50));
  observer.disconnect();
  return kinds.filter((k) => k === constants.NODE_PERFORMANCE_GC_MINOR).length;
}

describe("the per-frame lookup allocates nothing", () => {
  const snapshot = deferredModule();
  const hits = api.listSafepoints(snapshot).map((s) => s.returnAddress);
  const addresses = new Float64Array(hits.length * 2);
  hits.forEach((ra, i) => {
    addresses[2 * i] = ra;
    addresses[2 * i + 1] = ra + 1;
  });
  const bigints = Array.from(addresses, (a) => BigInt(a));
  const CALLS = 5_000_000;
  const passes = Math.ceil(CALLS / addresses.length);
  let kept: unknown;
  const loops = {
    find: (): number => {
      let sum = 0;
      for (let p = 0; p < passes; p++) for (let q = 0; q < addresses.length; q++) sum += snapshot.find(addresses[q]!);
      return sum;
    },
    findBigint: (): number => {
      let sum = 0;
      for (let p = 0; p < passes; p++) for (let q = 0; q < bigints.length; q++) sum += snapshot.find(bigints[q]!);
      return sum;
    },
    readers: (): number => {
      let sum = 0;
      for (let p = 0; p < passes; p++) {
        for (let q = 0; q < addresses.length; q += 2) {
          const i = snapshot.find(addresses[q]!);
          sum += snapshot.frameSizeBytesAt(i) + snapshot.rootCountAt(i) + snapshot.rootOffsetOrConstantAt(i, 0, "base");
        }
      }
      return sum;
    },
    // The control: an object per hit, kept past the call so the compiler cannot elide it.
    lookup: (): number => {
      let sum = 0;
      for (let p = 0; p < passes; p++) {
        for (let q = 0; q < addresses.length; q++) {
          kept = snapshot.lookup(addresses[q]!);
          sum += kept === undefined ? -1 : 1;
        }
      }
      return sum;
    },
  };

  async function scavengesOf(loop: () => number): Promise<number> {
    // Warmed first (optimized code, every block of descriptors decoded), then counted.
    for (let w = 0; w < 3; w++) loop();
    return scavengesDuring(() => void loop());
  }

  // 5 million calls allocating even 16 bytes each are 80 MB: many scavenges of a young generation
  // of at most 32 MB. None allocating leaves at most one (the observer's own setup).
  it("find, numbers and bigints, and the field readers: no scavenge over 5 million calls", async () => {
    expect(await scavengesOf(loops.find)).toBeLessThanOrEqual(1);
    expect(await scavengesOf(loops.findBigint)).toBeLessThanOrEqual(1);
    expect(await scavengesOf(loops.readers)).toBeLessThanOrEqual(1);
  });

  it("the control: lookup, which allocates its answer, is seen allocating", async () => {
    expect(await scavengesOf(loops.lookup)).toBeGreaterThanOrEqual(2);
  });
});
