import { buildLlvmDescriptors } from "../src/loader/llvm-map-loader.js";
import { SimulatedMemory } from "../src/memory/memory.js";
import { SafepointRegistry, type RegistrySnapshot } from "../src/safepoints/registry.js";
import { parseStackMapSection } from "../src/stackmap/llvm-stackmap.js";
import type { ManagedChunk } from "../walker/unwinder.js";
import { type CallSite, type SyntheticMapSpec, callSitesOf, encodeSyntheticStackMap, prng } from "./synthetic-stackmap.js";

/*
 * A synthetic thread stack over a synthetic map: the input of the Walk and Lookup cases, built
 * once in SimulatedMemory and exported byte for byte to the C reference.
 *
 * Frame i (0 = innermost) at sp_i, stack growing down, so sp_0 < sp_1 < ...:
 *   [sp_i + 8k]              root k of frame i (k < 4): a heap-like address
 *   [sp_i + frameSize_i]     return address into frame i+1 (its call site's key)
 *   sp_{i+1} = sp_i + frameSize_i + 8
 * The walk starts at (sp_0, ra_0) and ends when SP reaches stackTop = sp_N (the last slot holds
 * a return address into "the runtime", 0x1, which is never looked up).
 */

export const STACK_BASE = 0x7ffe_0000_0000;
export const ROOT_VALUE_BASE = 0x10_0000_0000;
const FILE_MAGIC = 0x31484e4542575252n; // bytes "RRWBENH1"; must match walk-ref.c

export interface StackCorpus {
  name: string;
  spec: SyntheticMapSpec;
  sites: CallSite[];
  snapshot: RegistrySnapshot;
  memory: SimulatedMemory;
  start: ManagedChunk;
  frames: number;
  roots: number;
  /** Sum of every root value, to check a walk read them all. */
  rootValueSum: number;
  /** Lookup queries (return addresses): hits, or misses. */
  hitQueries: Float64Array;
  missQueries: Float64Array;
  tableBytesPerSafepoint: number;
}

/** Parses + indexes a map with rootwalk's own loader and registry (the path a runtime takes). */
export function registerMap(bytes: Uint8Array): RegistrySnapshot {
  const registry = new SafepointRegistry();
  registry.register({ name: "bench", format: "llvm-v3", descriptors: buildLlvmDescriptors(parseStackMapSection(bytes)), contentKey: "bench" });
  return registry.snapshot();
}

/**
 * What the scan kernel reads per safepoint: its layout in the scan memory
 * (src/safepoints/scan-layout.ts: the table's keys, the recipe index per table cell, the shared
 * recipes), not the descriptor columns that dump and the general unwinder use.
 */
export function scanPathBytesPerSafepoint(snapshot: RegistrySnapshot): number {
  return snapshot.scanLayout.sizeBytes / snapshot.safepointCount;
}

/** Every column of the registered safepoints: the table plus the full FrameDescriptors. */
export function tableBytesPerSafepoint(snapshot: RegistrySnapshot): number {
  let descriptorBytes = 0;
  for (const m of snapshot.moduleBySlot) descriptorBytes += m.descriptors.sizeBytes;
  return (snapshot.table.sizeBytes + descriptorBytes) / snapshot.safepointCount;
}

export function buildStackCorpus(name: string, spec: SyntheticMapSpec, frames: number, queries: number, seed: number): StackCorpus {
  const sites = callSitesOf(spec);
  const snapshot = registerMap(encodeSyntheticStackMap(spec));
  const random = prng(seed);
  const chosen = new Int32Array(frames);
  let stackBytes = 8;
  for (let i = 0; i < frames; i++) {
    chosen[i] = Math.floor(random() * sites.length);
    stackBytes += sites[chosen[i]!]!.frameSizeBytes + 8;
  }
  const memory = new SimulatedMemory(STACK_BASE, stackBytes);
  let sp = STACK_BASE + 8;
  let rootValueSum = 0;
  let roots = 0;
  for (let i = 0; i < frames; i++) {
    const site = sites[chosen[i]!]!;
    if (i === 0) memory.writeWord(sp - 8, site.ra);
    site.rootOffsets.forEach((offset, k) => {
      const value = ROOT_VALUE_BASE + i * 64 + k * 8;
      memory.writeWord(sp + offset, value);
      rootValueSum += value;
      roots++;
    });
    const next = i + 1 < frames ? sites[chosen[i + 1]!]!.ra : 0x1;
    memory.writeWord(sp + site.frameSizeBytes, next);
    sp += site.frameSizeBytes + 8;
  }
  const start: ManagedChunk = { sp: STACK_BASE + 8, ra: sites[chosen[0]!]!.ra, stackTop: sp };
  const hitQueries = new Float64Array(queries);
  const missQueries = new Float64Array(queries);
  for (let q = 0; q < queries; q++) {
    hitQueries[q] = sites[Math.floor(random() * sites.length)]!.ra;
    // Odd addresses next to real ones: never a key, same hash neighbourhood.
    missQueries[q] = sites[Math.floor(random() * sites.length)]!.ra + 1;
  }
  return {
    name,
    spec,
    sites,
    snapshot,
    memory,
    start,
    frames,
    roots,
    rootValueSum,
    hitQueries,
    missQueries,
    tableBytesPerSafepoint: tableBytesPerSafepoint(snapshot),
  };
}

/** The file bench/native/walk-ref.c reads (layout documented there). */
export function stackCorpusFile(c: StackCorpus, queries: Float64Array): Uint8Array {
  const headerBytes = 64;
  const siteBytes = 48;
  const out = new Uint8Array(headerBytes + c.sites.length * siteBytes + queries.length * 8 + c.memory.sizeBytes);
  const dv = new DataView(out.buffer);
  const header = [FILE_MAGIC, c.sites.length, c.memory.base, c.memory.sizeBytes, c.start.sp, c.start.ra, c.start.stackTop!, queries.length];
  header.forEach((v, i) => dv.setBigUint64(i * 8, BigInt(v), true));
  let at = headerBytes;
  for (const s of c.sites) {
    dv.setBigUint64(at, BigInt(s.ra), true);
    dv.setInt32(at + 8, s.frameSizeBytes, true);
    dv.setInt32(at + 12, s.rootOffsets.length, true);
    s.rootOffsets.forEach((o, k) => dv.setInt32(at + 16 + 4 * k, o, true));
    s.derivedOffsets.forEach((o, k) => dv.setInt32(at + 32 + 4 * k, o, true));
    at += siteBytes;
  }
  for (const q of queries) {
    dv.setBigUint64(at, BigInt(q), true);
    at += 8;
  }
  out.set(c.memory.bytes, at);
  return out;
}
