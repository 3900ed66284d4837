import { readFileSync } from "node:fs";
import koffi from "koffi";
import { ElfFile } from "../elf/elf-file.js";
import { RootwalkError, hex } from "../errors.js";
import { registerPlimmixBytes } from "../loader/plimmix-loader.js";
import { registerFile, registerStackMapBytes } from "../loader/register-maps.js";
import { HOST_ARCHITECTURE } from "./thread-record.js";
import { blobFormat } from "../loader/stack-map-file.js";
import type { SafepointRegistry } from "../safepoints/registry.js";
import { llvmStackMapLength } from "../stackmap/llvm-stackmap.js";
import { PLIMMIX_SYMBOL_PREFIX, plimmixMapLength } from "../stackmap/plimmix-map.js";
import { parseProcMaps, readableBytesFrom, readProcSelfMapsText } from "../unwind/proc-maps.js";
import { NativeMemory } from "./native-memory.js";
import type { RuntimeLibrary } from "./runtime-library.js";

/** The longest map read from live memory (the fallback), bytes. */
const MAX_LIVE_MAP_BYTES = 1 << 30;

/**
 * `gc_init(map)`: registers the stack map the program passes. Preferred: the whole file the map
 * lives in (runtime.c finds it with dladdr: rw_init_path, rw_init_base), whose `.eh_frame` makes
 * frames with pushed call arguments right, once per file and load address. Fallback: the live
 * bytes, their length from the format's counts (no `.eh_frame`: such frames may be wrong).
 */
export class MapRegistration {
  mapsRegistered = 0;
  private readonly registeredFiles = new Set<string>();

  constructor(
    private readonly runtime: RuntimeLibrary,
    private readonly registry: SafepointRegistry,
  ) {}

  register(address: number): void {
    const readable = readableBytesAt(address);
    if (readable < 8) throw new RootwalkError("GC", `gc_init(${hex(address)}): the map pointer does not point into readable memory`);
    const head = new Uint8Array(koffi.view(BigInt(address), 8));
    const format = blobFormat(head);
    if (format === undefined) {
      const bytes = [...head].map((b) => b.toString(16).padStart(2, "0")).join(" ");
      throw new RootwalkError(
        "GC",
        `gc_init(${hex(address)}): the map is neither an LLVM stack map v3 (first byte 3) nor a _GC_MAP_ v1 blob (first word 1); first bytes ${bytes}`,
      );
    }
    if (this.registerFileHolding(address, format)) return;
    this.registerLiveBytes(address, format, readable);
    this.mapsRegistered++;
  }

  /** Registers the file whose map is at `address` (once); false if no loaded file holds it. */
  private registerFileHolding(address: number, format: "llvm-v3" | "plimmix-v1"): boolean {
    const path = this.runtime.rwInitPath() as string;
    const base = Number(this.runtime.rwInitBase() as number | bigint);
    if (path === "" || base === 0) return false;
    let bytes: Uint8Array;
    let elf: ElfFile;
    try {
      bytes = readFileSync(path);
      elf = ElfFile.parse(bytes);
    } catch {
      return false;
    }
    if (!fileHoldsMap(elf, address - base, format)) return false;
    const key = `${path}@${base}`;
    if (!this.registeredFiles.has(key)) {
      registerFile(this.registry, bytes, { path, loadBias: base, format });
      this.registeredFiles.add(key);
      this.mapsRegistered++;
    }
    return true;
  }

  private registerLiveBytes(address: number, format: "llvm-v3" | "plimmix-v1", readable: number): void {
    const misalignment = address % 8;
    const memory = new NativeMemory(address - misalignment, Math.min(readable + misalignment, MAX_LIVE_MAP_BYTES) & ~7);
    const readWord = (a: number): bigint => memory.readWordBigInt(a);
    const name = `gc_init@${hex(address)}`;
    let length: number;
    try {
      length = format === "llvm-v3" ? llvmStackMapLength(readWord, address, readable) : plimmixMapLength(readWord, address, readable);
    } catch (e) {
      throw e instanceof RootwalkError ? new RootwalkError("GC", `gc_init(${hex(address)}): a corrupted map: ${e.message}`) : e;
    }
    const bytes = new Uint8Array(koffi.view(BigInt(address), length)).slice();
    if (format === "llvm-v3") registerStackMapBytes(this.registry, bytes, { name, architecture: HOST_ARCHITECTURE });
    else registerPlimmixBytes(this.registry, bytes, { name });
  }
}

/** Whether the map at link-time address `offset` is the file's (its .llvm_stackmaps, or a _GC_MAP_ symbol). */
function fileHoldsMap(elf: ElfFile, offset: number, format: "llvm-v3" | "plimmix-v1"): boolean {
  if (format === "llvm-v3") {
    const section = elf.section(".llvm_stackmaps");
    return section !== undefined && offset >= section.addr && offset < section.addr + section.size;
  }
  return elf.symbols().some((s) => s.name.startsWith(PLIMMIX_SYMBOL_PREFIX) && s.value === offset);
}

/** Bytes readable from `address` to the end of its mapping (0 when /proc/self/maps cannot be read). */
function readableBytesAt(address: number): number {
  let text: string;
  try {
    text = readProcSelfMapsText();
  } catch {
    return 0;
  }
  return readableBytesFrom(parseProcMaps(text), address);
}
