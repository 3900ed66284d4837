import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { architectureOfMachine } from "../arch/elf-architecture.js";
import { ElfFile } from "../elf/elf-file.js";
import { PT_LOAD } from "../elf/elf-constants.js";
import { symbolAt } from "../elf/symbol-at.js";
import { RootwalkError, hex } from "../errors.js";
import { type CfiRow, cfiRowAt } from "./cfi.js";
import { EhFrameHdr } from "./eh-frame-hdr.js";
import { parseProcMaps } from "./proc-maps.js";
import { type Cie, type EhFrame, type Fde, parseEhFrame, parseFdeAt } from "./eh-frame.js";

/*
 * The module map: every ELF mapped in a process (the program, the runtime's .so, libc, the
 * dynamic loader, the vDSO) with its load bias and unwind information, for climbing native
 * frames by their CFI.
 *
 * Built from mappings (`/proc/PID/maps` lines, a core file's NT_FILE note, or the ranges
 * dl_iterate_phdr reports): one MappedModule per file, spanning all its mappings. Nothing is read
 * until an address inside a module is first looked up (lazy registration): then the file is
 * parsed, its load bias computed from the mapping at the lowest file offset and the PT_LOAD
 * segment containing that offset (bias = mapping start - (p_vaddr + offset - p_offset)), and its
 * FDEs are found through `.eh_frame_hdr` by binary search (each FDE decoded on first use); a
 * file without a header has its whole `.eh_frame` parsed once instead.
 *
 * Addresses given to and returned by the map are absolute (run-time); `link = absolute - bias`.
 */

export interface Mapping {
  start: number;
  end: number;
  /** Offset in the file of the mapping's first byte. */
  fileOffset: number;
  /** The mapped file's path, or a pseudo name such as "[vdso]". */
  path: string;
}

/** Where a module's bytes come from: its file, or memory (the vDSO has no file). */
export type ImageSource = () => Uint8Array;

export class MappedModule {
  private elfCache: ElfFile | undefined;
  private biasCache: number | undefined;
  private hdr: EhFrameHdr | undefined | null;
  private ehFrameBytes: Uint8Array | undefined;
  private ehFrameAddress = 0;
  private fullEhFrame: EhFrame | undefined | null;
  private readonly cies = new Map<number, Cie>();
  private readonly fdes = new Map<number, Fde>();
  private readonly rows = new Map<number, CfiRow | null>();
  private loadError: string | undefined;

  constructor(
    readonly path: string,
    readonly mappings: Mapping[],
    private readonly image: ImageSource,
    /** When known up front (dl_iterate_phdr's dlpi_addr); otherwise computed from the file. */
    knownBias?: number,
  ) {
    this.biasCache = knownBias;
  }

  get start(): number {
    return Math.min(...this.mappings.map((m) => m.start));
  }
  get end(): number {
    return Math.max(...this.mappings.map((m) => m.end));
  }
  get name(): string {
    return this.path.startsWith("[") ? this.path : basename(this.path);
  }

  /** The parsed file; a RootwalkError naming the module when it cannot be read or parsed. */
  elf(): ElfFile {
    if (this.elfCache !== undefined) return this.elfCache;
    if (this.loadError !== undefined) throw new RootwalkError("WALK", this.loadError);
    try {
      this.elfCache = ElfFile.parse(this.image());
      return this.elfCache;
    } catch (e) {
      this.loadError = `module ${this.path}: ${e instanceof Error ? e.message : String(e)}`;
      throw new RootwalkError("WALK", this.loadError);
    }
  }

  get loadBias(): number {
    if (this.biasCache !== undefined) return this.biasCache;
    const elf = this.elf();
    const first = [...this.mappings].sort((a, b) => a.fileOffset - b.fileOffset || a.start - b.start)[0]!;
    const segment = elf.programHeaders.find(
      (p) => p.type === PT_LOAD && first.fileOffset >= p.offset - (p.offset % 4096) && first.fileOffset < p.offset + Math.max(p.fileSize, 1),
    );
    if (segment === undefined) throw new RootwalkError("WALK", `module ${this.path}: no PT_LOAD segment maps file offset ${hex(first.fileOffset)}`);
    this.biasCache = first.start - (segment.vaddr + first.fileOffset - segment.offset);
    return this.biasCache;
  }

  /** The CFI row covering absolute `address`, or undefined when no FDE covers it. */
  rowAt(address: number): CfiRow | undefined {
    const cached = this.rows.get(address);
    if (cached !== undefined) return cached ?? undefined;
    const link = address - this.loadBias;
    const fde = this.fdeFor(link);
    const row = fde === undefined ? null : cfiRowAt(fde, link);
    this.rows.set(address, row);
    return row ?? undefined;
  }

  /** Absolute start of the function (FDE) containing `address`, or undefined. */
  functionStart(address: number): number | undefined {
    const fde = this.fdeFor(address - this.loadBias);
    return fde === undefined ? undefined : fde.pcBegin + this.loadBias;
  }

  /** Absolute start of the function symbol containing absolute `address`, or undefined. */
  symbolStart(address: number): number | undefined {
    const symbol = this.symbolContaining(address - this.loadBias);
    return symbol === undefined ? undefined : symbol.value + this.loadBias;
  }

  /** `name+0xoff` of the function symbol containing absolute `address`, or undefined. */
  symbolize(address: number): string | undefined {
    const link = address - this.loadBias;
    const symbol = this.symbolContaining(link);
    if (symbol === undefined) return undefined;
    return link === symbol.value ? symbol.name : `${symbol.name}+${hex(link - symbol.value)}`;
  }

  private symbolContaining(link: number): { name: string; value: number } | undefined {
    const symbol = symbolAt(this.elf(), undefined, link);
    return symbol === undefined || (symbol.size > 0 && link >= symbol.value + symbol.size) ? undefined : symbol;
  }

  /** `n` bytes of the file image at absolute `address` (through its PT_LOAD), or undefined. */
  codeBytes(address: number, n: number): Uint8Array | undefined {
    const link = address - this.loadBias;
    const elf = this.elf();
    for (const p of elf.programHeaders) {
      if (p.type !== PT_LOAD || link < p.vaddr || link + n > p.vaddr + p.fileSize) continue;
      const offset = p.offset + (link - p.vaddr);
      return elf.bytes.subarray(offset, offset + n);
    }
    return undefined;
  }

  private fdeFor(link: number): Fde | undefined {
    this.loadUnwind();
    let fde: Fde | undefined;
    if (this.hdr) {
      const fdeAddress = this.hdr.fdeAddressFor(link);
      if (fdeAddress === undefined) return undefined;
      const offset = fdeAddress - this.ehFrameAddress;
      fde = this.fdes.get(offset);
      if (fde === undefined) {
        fde = parseFdeAt(this.ehFrameBytes!, offset, this.ehFrameAddress, this.cies, architectureOfMachine(this.elf().machine));
        this.fdes.set(offset, fde);
      }
    } else if (this.fullEhFrame) {
      fde = this.fullEhFrame.findFde(link);
    }
    return fde !== undefined && link >= fde.pcBegin && link < fde.pcBegin + fde.pcRange ? fde : undefined;
  }

  private loadUnwind(): void {
    if (this.hdr !== undefined) return;
    const elf = this.elf();
    this.hdr = null;
    this.fullEhFrame = null;
    const ehFrame = elf.section(".eh_frame");
    if (ehFrame === undefined || !ehFrame.hasFileBytes) return;
    this.ehFrameBytes = ehFrame.bytes();
    this.ehFrameAddress = ehFrame.addr;
    const hdrSection = elf.section(".eh_frame_hdr");
    if (hdrSection !== undefined && hdrSection.hasFileBytes) {
      try {
        const hdr = EhFrameHdr.parse(hdrSection.bytes(), hdrSection.addr);
        if (hdr.ehFrameAddress === ehFrame.addr) {
          this.hdr = hdr;
          return;
        }
      } catch (e) {
        if (!(e instanceof RootwalkError)) throw e;
      }
    }
    this.fullEhFrame = parseEhFrame(this.ehFrameBytes, { sectionAddress: ehFrame.addr, architecture: architectureOfMachine(elf.machine) });
  }
}

/** Every mapped ELF module, sorted by address, looked up by binary search. */
export class ModuleMap {
  private sorted: MappedModule[];
  private starts: Float64Array;
  private ends: Float64Array;
  /** Set by refreshBeforeNextLookup; run (once) by the next lookup. */
  private pendingRefresh: (() => void) | undefined;

  constructor(modules: readonly MappedModule[]) {
    this.sorted = [...modules].sort((a, b) => a.start - b.start);
    this.starts = Float64Array.from(this.sorted.map((m) => m.start));
    this.ends = Float64Array.from(this.sorted.map((m) => m.end));
  }

  /** Takes `other`'s modules (a refreshed map), so holders of this map see the new mappings. */
  replaceWith(other: ModuleMap): void {
    this.sorted = other.sorted;
    this.starts = other.starts;
    this.ends = other.ends;
  }

  get modules(): readonly MappedModule[] {
    this.refreshIfPending();
    return this.sorted;
  }

  /**
   * The mappings may have changed (a live process stopped again): `refresh` (which re-reads them
   * and calls replaceWith) runs before the next lookup, once. A stop whose walks need no module
   * (every frame at a safepoint) never pays for it.
   */
  refreshBeforeNextLookup(refresh: () => void): void {
    this.pendingRefresh = refresh;
  }

  private refreshIfPending(): void {
    const refresh = this.pendingRefresh;
    if (refresh === undefined) return;
    this.pendingRefresh = undefined;
    refresh();
  }

  /**
   * From mappings: file-backed ones grouped by path (read through `readFile`, checked to start
   * with the ELF magic lazily), pseudo mappings only when `pseudoImage` gives their bytes.
   */
  static fromMappings(
    mappings: readonly Mapping[],
    options: { readFile?: (path: string) => Uint8Array; pseudoImage?: (m: Mapping) => Uint8Array | undefined; previous?: ModuleMap } = {},
  ): ModuleMap {
    const readFile = options.readFile ?? ((path: string) => readFileSync(path));
    const byPath = new Map<string, Mapping[]>();
    const modules: MappedModule[] = [];
    for (const m of mappings) {
      if (m.path.startsWith("[") || m.path === "") {
        const image = options.pseudoImage?.(m);
        // Its bias comes from its own program headers like a file's (the vDSO is linked at 0 on
        // x86-64 Linux, but nothing here relies on it).
        if (image !== undefined) modules.push(new MappedModule(m.path, [m], () => image));
        continue;
      }
      let list = byPath.get(m.path);
      if (list === undefined) byPath.set(m.path, (list = []));
      list.push(m);
    }
    // A module mapped at the same place as in `previous` keeps its parsed file and rows.
    const kept = new Map((options.previous?.modules ?? []).map((m) => [`${m.path}@${m.start}`, m]));
    for (const [path, list] of byPath) {
      const start = Math.min(...list.map((m) => m.start));
      modules.push(kept.get(`${path}@${start}`) ?? new MappedModule(path, list, () => readFile(path)));
    }
    return new ModuleMap(modules);
  }

  /** The mappings of `/proc/PID/maps` text that have a path or a [pseudo] name (proc-maps.ts reads it). */
  static parseProcMaps(text: string): Mapping[] {
    return parseProcMaps(text)
      .filter((m) => m.path !== "" && !m.path.endsWith(" (deleted)"))
      .map(({ start, end, fileOffset, path }) => ({ start, end, fileOffset, path }));
  }

  /** The module whose mappings span `address`, or undefined. */
  moduleAt(address: number): MappedModule | undefined {
    this.refreshIfPending();
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.starts[mid]! <= address) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo - 1; i >= 0 && i >= lo - 4; i--) if (address < this.ends[i]!) return this.sorted[i];
    return undefined;
  }

  /** `module!symbol+0xoff`, `module+0xoff`, or the bare address. */
  describe(address: number): string {
    const module = this.moduleAt(address);
    if (module === undefined) return hex(address);
    let symbol: string | undefined;
    try {
      symbol = module.symbolize(address);
    } catch {
      symbol = undefined;
    }
    if (symbol !== undefined) return `${module.name}!${symbol}`;
    let offset = address - module.start;
    try {
      offset = address - module.loadBias;
    } catch {
      // keep the offset from the mapping's start
    }
    return `${module.name}+${hex(offset)}`;
  }
}
