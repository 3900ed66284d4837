import { readU64 } from "../bytes/word-codec.js";
import koffi from "koffi";
import { RootwalkError, hex } from "../errors.js";
import type { RegistrySnapshot, SafepointRegistry } from "../safepoints/registry.js";
import type { RootPairs } from "../../walker/frame-roots.js";
import type { RootScanObserver, StackRootScanner } from "../../walker/stack-root-scanner.js";
import { DEFAULT_MAX_DEPTH } from "../../walker/unwinder.js";
import type { StoppedThreads } from "./stopped-threads.js";
import type { ThreadRecords } from "./thread-record.js";

/*
 * The NativeScan bench's C reference inside a native run (bench/native/native-scan-ref.c, a shared
 * library built like the runtime): after rootwalk's scan of each stopped thread, the C walk scans
 * the same stopped stack (from the same thread record) with a byte-for-byte copy of the same
 * safepoint table and scan recipes, timing itself; its frames, root pairs (base slot, derived
 * slot, base value) and frame records (frame index, first pair) must equal rootwalk's, or the run fails. The copy is refreshed when the
 * registry's snapshot changes, outside any timing.
 */

type NativeFunction = ReturnType<ReturnType<typeof koffi.load>["func"]>;

export interface ScanReferenceTotals {
  /** Time of every C scan (thread record read and walk), ms. */
  ms: number;
  frames: number;
  pairs: number;
  scans: number;
}

export class NativeScanReference {
  private readonly setTable: NativeFunction;
  private readonly setRecipes: NativeFunction;
  private readonly scan: NativeFunction;
  private readonly lastNs: NativeFunction;
  private readonly pairCount: NativeFunction;
  private readonly baseSlots: NativeFunction;
  private readonly derivedSlots: NativeFunction;
  private readonly baseValues: NativeFunction;
  private readonly frameRecordCount: NativeFunction;
  private readonly frameRecords: NativeFunction;
  private tableOf: RegistrySnapshot | undefined;
  readonly totals: ScanReferenceTotals = { ms: 0, frames: 0, pairs: 0, scans: 0 };

  constructor(libraryPath: string) {
    const lib = koffi.load(libraryPath);
    this.setTable = lib.func("int rwref_set_table(uint32_t cap, uint32_t shift, const uint32_t *keys, const uint32_t *values)");
    this.setRecipes = lib.func(
      "int rwref_set_recipes(uint32_t modules, const int32_t *first, uint32_t safepoints, const int32_t *recipe, uint32_t recipes, const int32_t *frameBytes, const uint32_t *slotStart, const uint16_t *pairCount, uint32_t slotWords, const int32_t *slots, const uint32_t *saveStart, const uint8_t *saveCount, uint32_t saveWords, const int32_t *saves)",
    );
    this.scan = lib.func("int64_t rwref_scan(uint64_t recordAddress, uint64_t maxDepth)");
    this.lastNs = lib.func("uint64_t rwref_last_ns(void)");
    this.pairCount = lib.func("uint64_t rwref_pair_count(void)");
    this.baseSlots = lib.func("uint64_t rwref_base_slots(void)");
    this.derivedSlots = lib.func("uint64_t rwref_derived_slots(void)");
    this.baseValues = lib.func("uint64_t rwref_base_values(void)");
    this.frameRecordCount = lib.func("uint64_t rwref_frame_record_count(void)");
    this.frameRecords = lib.func("uint64_t rwref_frame_records(void)");
  }

  /**
   * Scans the thread whose record is at `recordAddress` in C and checks the result against
   * rootwalk's walk of it (`frames`, `pairs`); throws naming the first difference.
   */
  scanAndCompare(snapshot: RegistrySnapshot, recordAddress: bigint, maxDepth: number, thread: number, rootwalk: { pairs: RootPairs; frames: number }): void {
    if (snapshot !== this.tableOf) this.copyTable(snapshot);
    const frames = Number(this.scan(recordAddress, maxDepth) as number | bigint);
    if (frames < 0)
      throw this.mismatch(
        thread,
        `the C walk stopped at frame #${-1 - frames}, one rootwalk's fast loop does not take (the reference only does the fast loop's work)`,
      );
    const pairCount = Number(this.pairCount() as number | bigint);
    this.totals.ms += Number(this.lastNs() as number | bigint) / 1e6;
    this.totals.frames += frames;
    this.totals.pairs += pairCount;
    this.totals.scans++;
    const { pairs } = rootwalk;
    if (frames !== rootwalk.frames) throw this.mismatch(thread, `${frames} frames in C, ${rootwalk.frames} in rootwalk`);
    if (pairCount !== pairs.count) throw this.mismatch(thread, `${pairCount} root pairs in C, ${pairs.count} in rootwalk`);
    if (pairCount === 0) return;
    const bases = this.words(this.baseSlots(), pairCount * 2);
    const deriveds = this.words(this.derivedSlots(), pairCount * 2);
    const baseValues = this.words(this.baseValues(), pairCount * 2);
    for (let i = 0; i < pairCount; i++) {
      const base = readU64(bases, 2 * i);
      const derived = readU64(deriveds, 2 * i);
      const value = readU64(baseValues, 2 * i);
      if (base !== pairs.baseSlots[i] || derived !== pairs.derivedSlots[i] || value !== pairs.baseValues[i]) {
        throw this.mismatch(
          thread,
          `root pair ${i}: C (${hex(base)}, ${hex(derived)}) = ${hex(value)}, rootwalk (${hex(pairs.baseSlots[i]!)}, ${hex(pairs.derivedSlots[i]!)}) = ${hex(pairs.baseValues[i]!)}`,
        );
      }
    }
    this.compareFrameRecords(thread, pairs);
  }

  /** The C scan's frame records (frame index, first pair) against rootwalk's, value by value. */
  private compareFrameRecords(thread: number, pairs: RootPairs): void {
    const count = Number(this.frameRecordCount() as number | bigint);
    if (count !== pairs.frameCount) throw this.mismatch(thread, `${count} frame records in C, ${pairs.frameCount} in rootwalk`);
    const records = new Int32Array(koffi.view(BigInt(this.frameRecords() as number | bigint), count * 8));
    const ours = pairs.frameRecords;
    for (let k = 0; k < count; k++) {
      if (records[2 * k] !== ours[2 * k] || records[2 * k + 1] !== ours[2 * k + 1]) {
        throw this.mismatch(
          thread,
          `frame record ${k}: C (frame #${records[2 * k]}, first pair ${records[2 * k + 1]}), rootwalk (frame #${ours[2 * k]}, first pair ${ours[2 * k + 1]})`,
        );
      }
    }
  }

  private words(address: unknown, count: number): Uint32Array {
    return new Uint32Array(koffi.view(BigInt(address as number | bigint), count * 4));
  }

  private copyTable(snapshot: RegistrySnapshot): void {
    const table = snapshot.table;
    if (this.setTable(table.capacity, table.hashShift, table.keys, table.values) !== 0) {
      throw new RootwalkError("GC", "the C scan reference cannot copy the safepoint table (out of memory)");
    }
    const r = snapshot.scanRecipes;
    const first = snapshot.firstSafepointBySlot;
    const ok = this.setRecipes(
      first.length,
      first,
      r.count,
      r.recipe,
      r.frameBytes.length,
      r.frameBytes,
      r.slotStart,
      r.pairCount,
      r.slots.length,
      r.slots,
      r.saveStart,
      r.saveCount,
      r.saves.length,
      r.saves,
    );
    if (ok !== 0) throw new RootwalkError("GC", "the C scan reference cannot copy the scan recipes (out of memory)");
    this.tableOf = snapshot;
  }

  private mismatch(thread: number, what: string): RootwalkError {
    return new RootwalkError("GC", `the C scan reference disagrees with rootwalk's scan of thread #${thread}: ${what}`);
  }
}

/**
 * The C reference attached to the root scanner: after every scan (collection or verification),
 * each stopped thread is scanned again in C from its record and compared with the scanner's walk.
 */
export class ScanReferenceCheck implements RootScanObserver {
  readonly reference: NativeScanReference;

  constructor(
    libraryPath: string,
    private readonly registry: SafepointRegistry,
    private readonly scanner: StackRootScanner,
    private readonly stopped: StoppedThreads,
    private readonly records: ThreadRecords,
  ) {
    this.reference = new NativeScanReference(libraryPath);
  }

  scanned(): void {
    const snapshot = this.registry.snapshot();
    this.stopped.threadsIfRead().forEach((s, i) => {
      const walk = this.scanner.lastWalkOf(i);
      if (walk === undefined) throw new RootwalkError("GC", `the scanner has no walk of thread #${s.index}`);
      this.reference.scanAndCompare(snapshot, this.records.recordAddress(s.index), DEFAULT_MAX_DEPTH, s.index, walk);
    });
  }
}
