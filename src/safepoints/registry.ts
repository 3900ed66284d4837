import { Map as ImmutableMap } from "immutable";
import { DuplicateSafepointError, InvalidArgumentError, describeValue } from "../errors.js";
import type { Architecture } from "../arch/architecture.js";
import type { FrameDescriptors, FunctionInfo } from "./frame-descriptors.js";
import { GOLDEN_32, MIX_HI_32, SafepointTable } from "./safepoint-table.js";
import { SafepointAddressIndex } from "./address-index.js";
import { TWO_32 } from "../bytes/word-codec.js";
import { ScanLayout } from "./scan-layout.js";
import { ScanRecipes, compileScanRecipes, concatScanRecipes } from "./scan-recipes.js";
import { addressArgument, describeAddressValue } from "../bytes/address-argument.js";
import type { RegistrationLease } from "./registration-pool.js";
import { type RootSide, frameSizeBytesOf, returnAddressOf, rootCountOf, rootKindOf, rootOffsetOrConstantOf, rootRegisterOf } from "./safepoint-fields.js";

export type MapFormat = "llvm-v3" | "plimmix-v1" | "ocaml";

/** What a loader hands to the registry. */
export interface MapToRegister {
  /** A name for messages: the file, the module's source name, or "gc_init@0x…". */
  name: string;
  format: MapFormat;
  /** Descriptors with addresses as the map states them (link-time or section offsets). */
  descriptors: FrameDescriptors;
  /** Added to every address when registered: where the module is loaded. */
  loadBias?: number;
  /**
   * Says which registered maps may hold the same content (e.g. a hash of its bytes, or only their
   * length): registering a map whose key, bias and descriptors (FrameDescriptors.sameAs) equal a
   * registered module's is a no-op that returns that module's handle. The descriptors decide, so
   * two maps with one key are never mistaken for each other; the key only spares comparing them.
   */
  contentKey: string;
}

/**
 * Frame descriptors decoded when first needed (src/loader/deferred-llvm-descriptors.ts): a map
 * whose table and recipes were built and whose every record was checked at registration.
 */
export interface DeferredDescriptors {
  /** Safepoints in the map. */
  readonly count: number;
  /** Every safepoint's descriptor (bias applied), decoded on the first call. */
  all(): FrameDescriptors;
  /** The map's functions, as `all().functions`. */
  functions(): readonly FunctionInfo[];
  /** Descriptors holding safepoint `index` (decoded on first use, kept), at row `rowOf(index)`. */
  descriptorsOf(index: number): FrameDescriptors;
  /** Row of safepoint `index` in what `descriptorsOf(index)` returns. */
  rowOf(index: number): number;
}

/** A map whose table and recipes are already built and whose descriptors are deferred (SafepointRegistry.registerIndexed). */
export interface IndexedMapToRegister {
  name: string;
  format: MapFormat;
  architecture: Architecture;
  contentKey: string;
  /** The table of this map alone, every safepoint in module slot 0, bias applied. */
  table: SafepointTable;
  recipes: ScanRecipes;
  descriptors: DeferredDescriptors;
  loadBias: number;
  /** The buffers the table, recipes and descriptors lie in, handed back by `unregister(handle, { release: true })`. */
  lease?: RegistrationLease;
}

export interface RegisteredModule {
  readonly handle: number;
  readonly name: string;
  readonly format: MapFormat;
  readonly loadBias: number;
  readonly contentKey: string;
  readonly architecture: Architecture;
  /**
   * Absolute addresses (bias applied). For a module with `deferred` descriptors, reading this
   * decodes them all (once): the walker takes `deferred.descriptorsOf(i)` instead.
   */
  readonly descriptors: FrameDescriptors;
  /** `descriptors.functions`, without decoding the descriptors of a deferred module. */
  readonly functions: readonly FunctionInfo[];
  /** Set when the descriptors are decoded on demand (SafepointRegistry.registerIndexed). */
  readonly deferred: DeferredDescriptors | undefined;
  /** The same safepoints compiled for the fast scan loop (same indices as `descriptors`). */
  readonly recipes: ScanRecipes;
  /** Safepoints in the module (`descriptors.count`). */
  readonly safepointCount: number;
  /**
   * The buffers of a registration through the kernel index (src/safepoints/registration-pool.ts):
   * released by `unregister(handle, { release: true })`, after which every read of them throws.
   */
  readonly lease: RegistrationLease | undefined;
}

const TWO_NEG_32 = 1 / TWO_32;
// Module-level copies of the hash's multipliers (slotOfHalves): a local const is a constant in
// TurboFan's code, an imported binding a load and a hole check per use.
const MIX_HI = MIX_HI_32;
const GOLDEN = GOLDEN_32;

/**
 * A consistent view of every registered module and the one table over all of them. A walk takes
 * a snapshot when it starts and uses only that: registering or unregistering a module meanwhile
 * makes a new snapshot and leaves this one as it was (the table is copied on write; the
 * descriptor columns of a module never change after loading).
 *
 * The exception is a module unregistered with `{ release: true }` (its memory handed back for the
 * next registration to reuse): a snapshot holding it refuses from then on every read of that
 * memory (the table, the recipes, lookups, readers, a first scan layout, a walk) with a
 * ReleasedModuleError; what it had already copied out (its scan layout, its `find` index) keeps
 * answering as before. Never an answer read from reused memory.
 */
export class RegistrySnapshot {
  /**
   * Per module slot, the snapshot index of the module's first safepoint: the prefix sums of
   * `safepointCount` in slot order, so safepoint i of module slot m is index firstIndexBySlot[m] + i
   * (the numbering of `scanRecipes`, without joining the recipes).
   */
  private readonly firstIndexBySlot: Int32Array;
  /** Safepoints of all modules (a repeat of one safepoint within a module has its own index; `find` answers the first). */
  private readonly indexCount: number;
  /** The leases of the modules whose memory can be released (registered through the kernel index). */
  private readonly leases: readonly RegistrationLease[];
  private readonly ownTable: SafepointTable;

  constructor(
    readonly modules: ImmutableMap<number, RegisteredModule>,
    table: SafepointTable,
    /** Module per table module slot (slots are dense indices valid for this snapshot only). */
    readonly moduleBySlot: readonly RegisteredModule[],
  ) {
    this.ownTable = table;
    this.leases = moduleBySlot.flatMap((m) => (m.lease === undefined ? [] : [m.lease]));
    this.firstIndexBySlot = new Int32Array(moduleBySlot.length);
    let first = 0;
    moduleBySlot.forEach((m, slot) => {
      this.firstIndexBySlot[slot] = first;
      first += m.safepointCount;
    });
    this.indexCount = first;
  }

  /** The table over every module (a ReleasedModuleError once a module's memory was released). */
  get table(): SafepointTable {
    this.checkReadable();
    return this.ownTable;
  }

  /** Throws ReleasedModuleError when a module of this snapshot was unregistered with `{ release: true }`. */
  checkReadable(): void {
    const leases = this.leases;
    for (let i = 0; i < leases.length; i++) leases[i]!.check();
  }

  private joined: { recipes: ScanRecipes; firstSafepoint: Int32Array } | undefined;

  /**
   * The scan recipes of every module as one set (joined on first use): the safepoint in table
   * slot t has recipe `scanRecipes.recipe[firstSafepointBySlot[module] + descriptor]`.
   */
  get scanRecipes(): ScanRecipes {
    this.checkReadable();
    return (this.joined ??= this.join()).recipes;
  }
  /** Per module slot, the index of its first safepoint in `scanRecipes`. */
  get firstSafepointBySlot(): Int32Array {
    this.checkReadable();
    return (this.joined ??= this.join()).firstSafepoint;
  }
  private layout: ScanLayout | undefined;

  /** The table and recipes in the scan memory, for the scan kernel (laid out on first use). */
  get scanLayout(): ScanLayout {
    this.checkReadable();
    return (this.layout ??= new ScanLayout(this, this.table, this.scanRecipes, this.firstSafepointBySlot));
  }

  private join(): { recipes: ScanRecipes; firstSafepoint: Int32Array } {
    if (this.moduleBySlot.length === 0) return { recipes: ScanRecipes.EMPTY, firstSafepoint: new Int32Array(0) };
    return concatScanRecipes(this.moduleBySlot.map((m) => m.recipes));
  }

  /** The machine of every registered module (the registry refuses a second one); undefined when empty. */
  get architecture(): Architecture | undefined {
    return this.moduleBySlot[0]?.architecture;
  }

  static readonly EMPTY = new RegistrySnapshot(ImmutableMap(), new SafepointTable(), []);

  /**
   * The module and descriptor index of the safepoint at `returnAddress`, or undefined: the
   * convenient form, which allocates its answer object on every hit. A walker's per-frame lookup
   * is `find` and the `...At(index)` readers, which allocate nothing.
   */
  lookup(returnAddress: number): { module: RegisteredModule; index: number } | undefined {
    const table = this.table;
    const slot = table.find(returnAddress);
    if (slot < 0) return undefined;
    return { module: this.moduleBySlot[table.moduleSlotAt(slot)]!, index: table.descriptorAt(slot) };
  }

  /**
   * The index in this snapshot (0 to the modules' safepoints - 1, module by module in slot order) of the
   * safepoint at `returnAddress` (absolute), or -1 when none is registered there. Allocates
   * nothing: one probe of the table and its cell's payload, as a C table lookup (src/safepoints/address-index.ts). A number is the
   * fast path; a bigint is taken exactly (converted first, a few ns more). Anything but a whole
   * number in [0, 2^53) (or such a bigint) is an InvalidArgumentError, checked on the miss path only:
   * an address equal to a key is one.
   */
  find(returnAddress: number | bigint): number {
    if (typeof returnAddress !== "number") return this.find(addressArgument(returnAddress, "returnAddress"));
    // The probe of SafepointAddressIndex written out here: its columns are fields of the snapshot,
    // so no object sits between the snapshot and the key load (one dependent load fewer per call).
    const addresses = this.findAddresses;
    let i = Math.imul((returnAddress >>> 0) ^ Math.imul((returnAddress * TWO_NEG_32) >>> 0, MIX_HI), GOLDEN) >>> this.findShift;
    for (;;) {
      const key = addresses[i]!;
      if (key === returnAddress) return this.findCells[i]!;
      if (key === 0) break;
      i = (i + 1) & this.findMask;
    }
    // A miss is an answer once the index is built and the number is an address (a fraction, -8,
    // NaN miss too; those are InvalidArgumentErrors).
    if (this.findBuilt === true && Number.isSafeInteger(returnAddress) && returnAddress >= 0) return -1;
    return this.missed(returnAddress);
  }

  /*
   * The per-frame lookup's index (SafepointAddressIndex: its key column, its cell -> snapshot
   * index column, its mask and shift), held as fields: an empty index of two cells (it finds
   * nothing) until the first miss builds the real one (O(capacity), once per snapshot). Never
   * undefined, so a hit tests nothing but the key.
   */
  private findAddresses: Float64Array = SafepointAddressIndex.UNBUILT.addresses;
  private findCells: Int32Array = SafepointAddressIndex.UNBUILT.cells;
  private findMask: number = SafepointAddressIndex.UNBUILT.mask;
  private findShift: number = SafepointAddressIndex.UNBUILT.shift;
  private findBuilt = false;

  /** `find`'s rare miss: the first one builds the index (and asks again); a number that is no address throws. */
  private missed(address: number): number {
    if (this.findBuilt === false) {
      const index = this.indexAddresses();
      this.findAddresses = index.addresses;
      this.findCells = index.cells;
      this.findMask = index.mask;
      this.findShift = index.shift;
      this.findBuilt = true;
      return this.find(address);
    }
    addressArgument(address, "returnAddress");
    return -1;
  }

  private indexAddresses(): SafepointAddressIndex {
    const table = this.table;
    return SafepointAddressIndex.of(table, (cell) => this.firstIndexBySlot[table.moduleSlotAt(cell)]! + table.descriptorAt(cell));
  }

  /** The module of safepoint `index` (an index `find` returned). */
  moduleAt(index: number): RegisteredModule {
    return this.moduleBySlot[this.slotOfIndex(index)]!;
  }
  /** Safepoint `index`'s index in its module's descriptors (`moduleAt(index).descriptors`). */
  descriptorIndexAt(index: number): number {
    return index - this.firstIndexBySlot[this.slotOfIndex(index)]!;
  }
  /** Safepoint `index`'s absolute return address. */
  returnAddressAt(index: number): number {
    const slot = this.slotOfIndex(index);
    return returnAddressOf(this.moduleBySlot[slot]!, index - this.firstIndexBySlot[slot]!);
  }
  /** SP at safepoint `index` to its return-address slot, in bytes; -1 when its frame is found by the frame pointer. */
  frameSizeBytesAt(index: number): number {
    const slot = this.slotOfIndex(index);
    return frameSizeBytesOf(this.moduleBySlot[slot]!, index - this.firstIndexBySlot[slot]!);
  }
  /** The (base, derived) pairs at safepoint `index`. */
  rootCountAt(index: number): number {
    const slot = this.slotOfIndex(index);
    return rootCountOf(this.moduleBySlot[slot]!, index - this.firstIndexBySlot[slot]!);
  }
  /** The kind (LocationKind) of root `root`'s `side` location at safepoint `index`. */
  rootKindAt(index: number, root: number, side: RootSide): number {
    const slot = this.slotOfIndex(index);
    return rootKindOf(this.moduleBySlot[slot]!, index - this.firstIndexBySlot[slot]!, root, side);
  }
  /** The DWARF register number of root `root`'s `side` location (the register, or the base of its address). */
  rootRegisterAt(index: number, root: number, side: RootSide): number {
    const slot = this.slotOfIndex(index);
    return rootRegisterOf(this.moduleBySlot[slot]!, index - this.firstIndexBySlot[slot]!, root, side);
  }
  /** Root `root`'s `side` location: a Direct/Indirect byte offset from its register, a Constant's value, a ConstantIndex's pool index, a Register's offset field (0). */
  rootOffsetOrConstantAt(index: number, root: number, side: RootSide): number {
    const slot = this.slotOfIndex(index);
    return rootOffsetOrConstantOf(this.moduleBySlot[slot]!, index - this.firstIndexBySlot[slot]!, root, side);
  }

  /** The module slot holding safepoint `index`; an InvalidArgumentError for an index that is none of this snapshot's. */
  private slotOfIndex(index: number): number {
    this.checkReadable();
    const first = this.firstIndexBySlot;
    if (!(Number.isInteger(index) && index >= 0 && index < this.indexCount)) {
      throw new InvalidArgumentError("safepoint index", describeAddressValue(index), `an index find() returned: a whole number in [0, ${this.indexCount})`);
    }
    let lo = 0;
    let hi = first.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (first[mid]! <= index) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  get safepointCount(): number {
    return this.ownTable.size;
  }
}

/**
 * Two modules at the same addresses: each .o starts at 0 until it is placed, so two objects
 * collide unless each is registered at the address it is loaded at.
 */
const TWO_MODULES_ADVICE =
  "to register both, give each the address it is loaded at: { loadBias } (registerObjectFile(registry, bytes, { path, loadBias }); an unlinked .o starts at 0)";

export class SafepointRegistry {
  private current = RegistrySnapshot.EMPTY;
  private nextHandle = 1;

  snapshot(): RegistrySnapshot {
    return this.current;
  }

  /**
   * Registers a map and returns its handle. Throws DuplicateSafepointError (and changes nothing)
   * when a return address is already registered by another module, or appears twice in this one
   * with different contents.
   */
  register(map: MapToRegister): number {
    const loadBias = map.loadBias ?? 0;
    if (!Number.isSafeInteger(loadBias)) throw new InvalidArgumentError("loadBias", String(map.loadBias), "a safe integer");
    // A snapshot walks one machine (its slots, contexts and return-address rule are that
    // architecture's): a map of another architecture is refused by name.
    const architecture = map.descriptors.architecture;
    const walked = this.current.architecture;
    if (walked !== undefined && architecture !== walked) {
      throw new InvalidArgumentError(
        map.name,
        `${architecture.name} stack maps`,
        `${walked.name} stack maps like the modules already registered: one registry walks one architecture`,
      );
    }
    for (const module of this.current.modules.values()) {
      if (module.contentKey === map.contentKey && module.loadBias === loadBias && module.descriptors.sameAs(map.descriptors, loadBias)) return module.handle;
    }
    const descriptors = map.descriptors.withBias(loadBias);
    const handle = this.nextHandle++;
    const recipes = compileScanRecipes(descriptors);
    const module: RegisteredModule = {
      handle,
      name: map.name,
      format: map.format,
      loadBias,
      contentKey: map.contentKey,
      architecture,
      descriptors,
      functions: descriptors.functions,
      deferred: undefined,
      recipes,
      safepointCount: descriptors.count,
      lease: undefined,
    };
    const slot = this.current.moduleBySlot.length;
    const table = this.current.table.clone(descriptors.count);
    const conflict = insertSafepoints(table, descriptors, slot);
    if (conflict >= 0) {
      const ra = descriptors.returnAddress[conflict]!;
      const existing = table.find(ra);
      const otherSlot = table.moduleSlotAt(existing);
      if (otherSlot === slot) {
        const otherIndex = table.descriptorAt(existing);
        throw new DuplicateSafepointError(
          ra,
          `${map.name} record #${descriptors.recordIndex[otherIndex]}`,
          `${map.name} record #${descriptors.recordIndex[conflict]}`,
        );
      }
      const other = this.current.moduleBySlot[otherSlot]!;
      throw new DuplicateSafepointError(ra, `module "${other.name}"`, `module "${map.name}"`, TWO_MODULES_ADVICE);
    }
    this.current = new RegistrySnapshot(this.current.modules.set(handle, module), table, [...this.current.moduleBySlot, module]);
    return handle;
  }

  /**
   * Registers a map whose table and recipes were built for it alone (the scan kernel's index) and
   * whose descriptors are decoded on demand, into an empty registry: the one case where its table
   * is the registry's table as it is (no other module to collide with or to be the same map as).
   */
  registerIndexed(map: IndexedMapToRegister): number {
    if (this.current.modules.size !== 0) {
      throw new InvalidArgumentError(map.name, `a map indexed alone, with ${this.current.modules.size} modules registered`, "an empty registry");
    }
    const handle = this.nextHandle++;
    const deferred = map.descriptors;
    const recipes = map.recipes;
    const lease = map.lease;
    const module: RegisteredModule = {
      handle,
      name: map.name,
      format: map.format,
      loadBias: map.loadBias,
      contentKey: map.contentKey,
      architecture: map.architecture,
      get descriptors() {
        return deferred.all();
      },
      get functions() {
        return deferred.functions();
      },
      deferred,
      get recipes() {
        lease?.check();
        return recipes;
      },
      safepointCount: deferred.count,
      lease,
    };
    this.current = new RegistrySnapshot(this.current.modules.set(handle, module), map.table, [module]);
    return handle;
  }

  /**
   * Removes exactly the entries of that module. Unknown handles are an InvalidArgumentError.
   *
   * `{ release: true }` also hands the module's memory back for the next registration to reuse
   * (a module registered through the kernel index: src/safepoints/registration-pool.ts), as a
   * runtime unloading a module would. The caller says by it that no snapshot holding the module
   * is read again; one that is gets a ReleasedModuleError (RegistrySnapshot), never an answer
   * read from memory a later registration rewrote. Without it the memory goes when the garbage
   * collector finds every snapshot holding the module dead.
   */
  unregister(handle: number, options?: { release?: boolean }): void {
    const removed = this.current.modules.get(handle);
    if (removed === undefined) {
      throw new InvalidArgumentError("module handle", String(handle), `one of the registered handles [${[...this.current.modules.keys()].join(", ")}]`);
    }
    const modules = this.current.modules.delete(handle);
    const moduleBySlot = [...modules.values()];
    let total = 0;
    for (const m of moduleBySlot) total += m.safepointCount;
    const table = new SafepointTable(total);
    moduleBySlot.forEach((m, slot) => {
      for (let i = 0; i < m.descriptors.count; i++) table.insert(m.descriptors.returnAddress[i]!, slot, i);
    });
    this.current = new RegistrySnapshot(modules, table, moduleBySlot);
    if (options?.release === true) removed.lease?.release(removed.name, handle);
  }
}

/**
 * Inserts every safepoint of `descriptors` into `table` as module `slot`, each key once; returns
 * the first safepoint whose return address is already taken (by another module, or by a
 * different safepoint of this one), or -1. A repeat of the same safepoint in this module is kept
 * once. (The loop ends the function: see src/safepoints/scan-recipes.ts on V8's on-stack code.)
 */
function insertSafepoints(table: SafepointTable, descriptors: FrameDescriptors, slot: number): number {
  const returnAddress = descriptors.returnAddress;
  for (let i = 0; i < descriptors.count; i++) {
    const existing = table.insert(returnAddress[i]!, slot, i);
    if (existing < 0) continue;
    if (table.moduleSlotAt(existing) === slot && sameSafepoint(descriptors, table.descriptorAt(existing), i)) continue;
    return i;
  }
  return -1;
}

/** Two safepoints of one module describe the same frame and roots (a harmless repeat). */
function sameSafepoint(d: FrameDescriptors, a: number, b: number): boolean {
  if (
    d.frameSizeBytes[a] !== d.frameSizeBytes[b] ||
    d.cfaRegister[a] !== d.cfaRegister[b] ||
    d.cfaOffsetBytes[a] !== d.cfaOffsetBytes[b] ||
    d.pairCount[a] !== d.pairCount[b] ||
    d.deoptCount[a] !== d.deoptCount[b] ||
    d.allocaCount[a] !== d.allocaCount[b]
  ) {
    return false;
  }
  for (let p = 0; p < d.pairCount[a]!; p++) {
    for (let k = 0; k < 2; k++) {
      const la = d.pairs[(d.pairStart[a]! + p) * 2 + k]!;
      const lb = d.pairs[(d.pairStart[b]! + p) * 2 + k]!;
      if (d.locations[la * 2] !== d.locations[lb * 2] || d.locations[la * 2 + 1] !== d.locations[lb * 2 + 1]) return false;
    }
  }
  return true;
}

/**
 * Refuses what is no RegistrySnapshot where one is read (a JavaScript caller's registry passed
 * for its snapshot was a TypeError from inside the lookup), naming what it is.
 */
export function checkSnapshotArgument(value: unknown): asserts value is RegistrySnapshot {
  if (!(value instanceof RegistrySnapshot))
    throw new InvalidArgumentError("snapshot", describeValue(value), "a RegistrySnapshot (registry.snapshot() of a SafepointRegistry)");
}

/** Refuses what is no SafepointRegistry where one is kept (a snapshot passed for its registry). */
export function checkRegistryArgument(value: unknown): asserts value is SafepointRegistry {
  if (!(value instanceof SafepointRegistry)) throw new InvalidArgumentError("registry", describeValue(value), "a SafepointRegistry (new SafepointRegistry())");
}
