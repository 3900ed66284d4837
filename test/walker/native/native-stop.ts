import { irSource } from "../../support/ir-source.js";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { X86_64 } from "../../../src/arch/x86-64.js";
import { cacheKey, compileToObject, findLlvmTool, repoRoot, runTool } from "../../../src/toolchain/llvm-toolchain.js";
import { corpusEntry } from "../../ll/corpus.js";
import { parseReadobjStackmap, recordsOfFunction, statepointShape, type ReadobjLocation } from "../../support/readobj-stackmap.js";

/**
 * REAL stops of LLVM-compiled statepoint code at a safepoint, for the walker's tests.
 *
 * Each variant is a chain of managed functions (`chain-*.ll`, compiled with the real opt + llc)
 * linked non-PIE with a C/asm harness (`harness.c`, `trampoline.S`):
 *
 *   main -> rw_enter -> rw_chain_entry -> f1 -> f2 -> f3 -> gc_safepoint_poll -> handler
 *
 * The handler writes the managed caller's SP (after the return), return address and callee-saved
 * registers as the CPU had them at the call to gc_safepoint_poll, plus a copy of the stack
 * [sp - 256, stackTop). The program runs once under gdb, which stops on the first instruction of
 * gc_safepoint_poll and records its own unwind of the same stop (see gdb-frames.py).
 *
 * Builds are cached by content hash under `.cache/native-stop/`; every call runs gdb afresh
 * (about 0.2 s).
 */

export type NativeStopVariant = "chain-args" | "chain-csr" | "chain-dynamic" | "chain-fp";

export const NATIVE_STOP_VARIANTS: readonly NativeStopVariant[] = ["chain-args", "chain-csr", "chain-dynamic", "chain-fp"];

/** The harness stops x86-64 programs: x86-64's callee-saved registers, in their one order. */
export const CALLEE_SAVED_NAMES = X86_64.calleeSavedNames;
const CALLEE_SAVED_DWARF = X86_64.calleeSavedDwarf;
export type CalleeSavedName = (typeof CALLEE_SAVED_NAMES)[number];
export type CalleeSavedRegisters = Record<CalleeSavedName, number>;

export interface GdbFrame {
  name: string;
  /** Innermost frame: the return address from gc_safepoint_poll; outer frames: their return address. */
  pc: number;
  /** The frame's SP after its call returns (gdb's unwound `rsp`, i.e. the callee's CFA). */
  sp: number;
  /**
   * gdb's unwound callee-saved registers IN this frame (from the inner frames' CFI save slots),
   * exact as bigint (a register may hold a non-address such as -48). null: gdb could not tell.
   */
  registers: Record<CalleeSavedName, bigint | null>;
}

/** A (base, derived) pair; derived === base for a plain root. */
export interface RootPair {
  base: number;
  derived: number;
}

export interface NativeStop {
  variant: string;
  /** The linked non-PIE executable (load bias 0: runtime addresses are link-time addresses). */
  executable: string;
  /** The compiled managed object (input of the link). */
  object: string;
  /** The innermost managed frame's SP after the call to gc_safepoint_poll returns. */
  sp: number;
  /** The return address of that call (a statepoint record's key). */
  ra: number;
  /**
   * Callee-saved registers at the call to gc_safepoint_poll. As numbers: exact for addresses
   * (< 2^47); a register holding a non-address (e.g. -48) is rounded: see exactRegisters.
   */
  registers: CalleeSavedRegisters;
  /** The same, exact (unsigned 64-bit). */
  exactRegisters: Record<CalleeSavedName, bigint>;
  /** Address of `rw_enter_return`: the return address into native code; the walk stops there. */
  boundaryRa: number;
  /** gdb's frame of rw_enter: pc === boundaryRa, sp = SP after rw_chain_entry returns. */
  boundaryFrame: GdbFrame;
  /** Exclusive upper end of the stack copy (just above main's return address). */
  stackTop: number;
  /** One chunk: [sp - 256, stackTop), bytes in address order. */
  memory: { base: number; bytes: Uint8Array }[];
  /** The 4 fake object addresses main passed as (a, b, c, d): 64 bytes each, 64-byte aligned. */
  objects: number[];
  /** Size of each fake object in bytes (derived pointers point into [object, object + size)). */
  objectSize: number;
  /** gdb's unwind: innermost managed frame first, up to (excluding) rw_enter. */
  gdbFrames: GdbFrame[];
  /** The managed program's exit code under gdb (always 0: captureNativeStop throws otherwise). */
  exitCode: number;
  /** What the variant's IR promises (see VariantInfo). */
  info: VariantInfo;
  /**
   * Per managed frame (innermost first), the root pairs that MUST be among the frame's roots:
   * the GC pointers the IR uses after that frame's call (derived pointers as (base, derived)).
   * LLVM may keep more (LLVM 14 also keeps GC-pointer call arguments live): every extra root
   * is still one of `objects` or a pointer into one.
   */
  expectedRoots: { name: string; mustInclude: RootPair[] }[];
}

/** A frame's expected root: object index (0..3 for a..d) + byte offset of the derived pointer. */
interface ObjectRef {
  object: number;
  offset: number;
}

export interface VariantInfo {
  /** Managed function names, innermost first (the frames at the stop). */
  frames: string[];
  /** Frames whose call site pushed outgoing stack arguments (StackSize excludes them). */
  pushedArgsFrames: string[];
  /** Frames holding GC roots in callee-saved registers (`Register R#n` locations). */
  csrRootFrames: string[];
  /** Frames with StackSize UINT64_MAX (variable-sized alloca; frame pointer). */
  dynamicFrames: string[];
  /** Frames with a frame pointer (push %rbp; mov %rsp,%rbp). */
  framePointerFrames: string[];
}

interface VariantBuild {
  source: string;
  optPasses: string[];
  llcFlags: string[];
  info: VariantInfo;
  /** The corpus entry (test/ll/corpus.ts) the program is compiled from. */
  /** Per frame (same order as info.frames): roots used after the call, as (base, derived). */
  mustInclude: { base: ObjectRef; derived: ObjectRef }[][];
}

const RS4GC = "-passes=rewrite-statepoints-for-gc";
const A = 0;
const B = 1;
const C = 2;
const D = 3;
const plain = (object: number): { base: ObjectRef; derived: ObjectRef } => ({
  base: { object, offset: 0 },
  derived: { object, offset: 0 },
});

const BUILDS: Record<NativeStopVariant, VariantBuild> = {
  "chain-args": {
    source: "native-chain-args",
    optPasses: [RS4GC, "-spp-rematerialization-threshold=0"],
    llcFlags: ["-O2"],
    info: {
      frames: ["rw_args_f3", "rw_args_f2", "rw_args_f1", "rw_chain_entry"],
      pushedArgsFrames: ["rw_args_f1"],
      csrRootFrames: [],
      dynamicFrames: [],
      framePointerFrames: [],
    },
    mustInclude: [
      [plain(C), plain(D)],
      [plain(C)],
      [plain(B), { base: { object: B, offset: 0 }, derived: { object: B, offset: 24 } }, plain(C)],
      [plain(A), plain(D)],
    ],
  },
  "chain-csr": {
    source: "native-chain-csr",
    optPasses: [RS4GC],
    llcFlags: ["-O2", "-max-registers-for-gc-values=4", "-fixup-allow-gcptr-in-csr"],
    info: {
      frames: ["rw_csr_f3", "rw_csr_f2", "rw_csr_f1", "rw_chain_entry"],
      pushedArgsFrames: [],
      csrRootFrames: ["rw_csr_f3", "rw_csr_f2", "rw_csr_f1", "rw_chain_entry"],
      dynamicFrames: [],
      framePointerFrames: [],
    },
    mustInclude: [
      [plain(D), plain(C)],
      [plain(B), plain(C), plain(D)],
      [plain(A), plain(B)],
      [plain(A), plain(B), plain(C), plain(D)],
    ],
  },
  "chain-dynamic": {
    source: "native-chain-dynamic",
    optPasses: [RS4GC],
    llcFlags: ["-O2"],
    info: {
      frames: ["rw_dyn_f3", "rw_dyn_f2", "rw_dyn_f1", "rw_chain_entry"],
      pushedArgsFrames: [],
      csrRootFrames: [],
      dynamicFrames: ["rw_dyn_f2"],
      framePointerFrames: ["rw_dyn_f2"],
    },
    mustInclude: [[plain(B), plain(D)], [plain(A)], [plain(C)], [plain(D)]],
  },
  "chain-fp": {
    source: "native-chain-fp",
    optPasses: [RS4GC],
    llcFlags: ["-O2"],
    info: {
      frames: ["rw_fp_f3", "rw_fp_f2", "rw_fp_f1", "rw_chain_entry"],
      pushedArgsFrames: [],
      csrRootFrames: [],
      dynamicFrames: [],
      framePointerFrames: ["rw_fp_f3", "rw_fp_f2", "rw_fp_f1", "rw_chain_entry"],
    },
    mustInclude: [[plain(A), plain(C)], [plain(D)], [plain(B)], [plain(C)]],
  },
};

/** Size of each fake object (8 words), see harness.c. */
export const OBJECT_SIZE = 64;

/** gcc flags of the link: non-PIE so that runtime addresses equal link-time addresses. */
const GCC_FLAGS = ["-no-pie", "-O1", "-Wall", "-Wextra", "-Werror", "-Wl,-z,notext"];

export function nativeStopDirectory(): string {
  return dirname(fileURLToPath(import.meta.url));
}

/**
 * The harnesses' safepoint trampoline: trampoline.S, which includes the native runtime's own stub
 * (src/native/runtime-entry.S). `gccArgs` assemble it and tell the harness how many callee-saved
 * registers the stub's frame holds (RW_CALLEE_SAVED); `keyParts` go into a link's cache key.
 */
export function trampolineBuild(): { gccArgs: string[]; keyParts: Buffer[] } {
  const trampoline = join(nativeStopDirectory(), "trampoline.S");
  const runtimeDir = join(repoRoot(), "src", "native");
  const count = `-DRW_CALLEE_SAVED=${CALLEE_SAVED_NAMES.length}`;
  return {
    gccArgs: [`-I${runtimeDir}`, count, trampoline],
    keyParts: [readFileSync(trampoline), readFileSync(join(runtimeDir, "runtime-entry.S")), Buffer.from(count)],
  };
}

function cacheRoot(): string {
  return join(repoRoot(), ".cache", "native-stop");
}

/** Throws a clear Error unless `command --version` runs. */
function requireCommand(command: string, purpose: string): string {
  const result = spawnSync(command, ["--version"], { encoding: "utf8" });
  if (result.error !== undefined || result.status !== 0) {
    throw new Error(
      `captureNativeStop needs ${command} (${purpose}), but \`${command} --version\` failed` +
        `${result.error === undefined ? "" : `: ${result.error.message}`}; install it (Debian: apt-get install ${command})`,
    );
  }
  return result.stdout;
}

function temporaryName(path: string): string {
  return `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
}

/** The variant's compiled object and linked executable (both cached). */
export function buildNativeStop(variant: NativeStopVariant): { object: string; executable: string } {
  const build = BUILDS[variant];
  if (build === undefined) throw new Error(`unknown native-stop variant ${JSON.stringify(variant)}`);
  const gccVersion = requireCommand("gcc", "to link the native-stop harness");
  const directory = nativeStopDirectory();
  // The programs are part of the loader's .ll corpus (test/ll/native-chain-*.ll), so the loader
  // tests check their stack maps against llvm-readobj and their frame sizes against objdump.
  const entry = corpusEntry(build.source);
  const object = compileToObject(irSource(entry.file), {
    optPasses: entry.optPasses ?? [],
    llcFlags: entry.llcFlags ?? [],
    cacheDir: join(cacheRoot(), "objects"),
  });
  if (JSON.stringify(entry.optPasses) !== JSON.stringify(build.optPasses) || JSON.stringify(entry.llcFlags) !== JSON.stringify(build.llcFlags)) {
    throw new Error(`native-stop ${variant}: flags differ from corpus entry ${build.source}`);
  }
  const harness = join(directory, "harness.c");
  const trampoline = trampolineBuild();
  const key = cacheKey(["native-stop/link/v2", readFileSync(object), readFileSync(harness), ...trampoline.keyParts, JSON.stringify(GCC_FLAGS), gccVersion]);
  const executable = join(cacheRoot(), "bin", `${variant}-${key.slice(0, 32)}`);
  if (!existsSync(executable)) {
    mkdirSync(dirname(executable), { recursive: true });
    const temporary = temporaryName(executable);
    try {
      runTool("gcc", [...GCC_FLAGS, harness, ...trampoline.gccArgs, object, "-o", temporary]);
      renameSync(temporary, executable);
    } finally {
      rmSync(temporary, { force: true });
    }
  }
  return { object, executable };
}

const HEX = /^0x[0-9a-f]+$/;

function hexBig(value: unknown, what: string): bigint {
  if (typeof value !== "string" || !HEX.test(value)) throw new Error(`native stop: ${what} is not a 0x hex string: ${JSON.stringify(value)}`);
  return BigInt(value);
}

function address(value: unknown, what: string): number {
  const big = hexBig(value, what);
  if (big >= 1n << 53n) throw new Error(`native stop: ${what} = ${value as string} does not fit a JS number`);
  return Number(big);
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error(`native stop: ${what} is not an object`);
  return value as Record<string, unknown>;
}

function list(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`native stop: ${what} is not an array`);
  return value;
}

function parseGdbFrame(value: unknown, what: string): GdbFrame {
  const frame = record(value, what);
  if (typeof frame.name !== "string") throw new Error(`native stop: ${what}.name is not a string`);
  const registers = record(frame.registers, `${what}.registers`);
  const exact = {} as Record<CalleeSavedName, bigint | null>;
  for (const name of CALLEE_SAVED_NAMES) {
    const raw = registers[name];
    exact[name] = raw === null ? null : hexBig(raw, `${what}.registers.${name}`);
  }
  return { name: frame.name, pc: address(frame.pc, `${what}.pc`), sp: address(frame.sp, `${what}.sp`), registers: exact };
}

function hexBytes(hex: unknown, what: string): Uint8Array {
  if (typeof hex !== "string" || hex.length % 2 !== 0 || !/^[0-9a-f]*$/.test(hex)) {
    throw new Error(`native stop: ${what} is not an even-length lowercase hex string`);
  }
  return new Uint8Array(Buffer.from(hex, "hex"));
}

/**
 * Builds (cached) and runs the variant once under gdb; returns the handler's snapshot merged with
 * gdb's unwind of the same stop. Throws if gcc or gdb is missing, if gdb cannot unwind to
 * rw_enter, or if the program does not exit 0 (wrong result, or no safepoint reached).
 */
export function captureNativeStop(variant: NativeStopVariant): NativeStop {
  const build = BUILDS[variant];
  if (build === undefined) throw new Error(`unknown native-stop variant ${JSON.stringify(variant)}`);
  requireCommand("gdb", "to record gdb's backtrace of the stop");
  const { object, executable } = buildNativeStop(variant);

  const runs = join(cacheRoot(), "runs");
  mkdirSync(runs, { recursive: true });
  const snapshotPath = join(runs, `${variant}-${process.pid}-${Math.random().toString(36).slice(2)}.json`);
  let text: string;
  try {
    runTool("gdb", ["-nx", "-batch", "-x", join(nativeStopDirectory(), "gdb-frames.py"), "--args", executable, snapshotPath], {
      env: { ...process.env, RW_NATIVE_STOP_SNAPSHOT: snapshotPath },
    });
    text = readFileSync(snapshotPath, "utf8");
  } finally {
    rmSync(snapshotPath, { force: true });
    rmSync(`${snapshotPath}.gdb-tmp`, { force: true });
  }
  const json = record(JSON.parse(text), "snapshot");
  if (json.gdbFrames === undefined) throw new Error(`native stop ${variant}: gdb did not add gdbFrames to the snapshot`);
  if (json.exitCode !== 0) throw new Error(`native stop ${variant}: ${executable} exited with ${String(json.exitCode)} under gdb`);

  const registersJson = list(json.registers, "registers");
  const exactRegisters = {} as Record<CalleeSavedName, bigint>;
  const registers = {} as CalleeSavedRegisters;
  CALLEE_SAVED_NAMES.forEach((name, k) => {
    exactRegisters[name] = hexBig(registersJson[k], `registers[${k}] (${name})`);
    registers[name] = Number(exactRegisters[name]);
  });
  const memory = list(json.memory, "memory").map((chunk, index) => {
    const fields = record(chunk, `memory[${index}]`);
    return { base: address(fields.base, `memory[${index}].base`), bytes: hexBytes(fields.hex, `memory[${index}].hex`) };
  });
  const objects = list(json.objects, "objects").map((value, index) => address(value, `objects[${index}]`));
  const gdbFrames = list(json.gdbFrames, "gdbFrames").map((frame, index) => parseGdbFrame(frame, `gdbFrames[${index}]`));
  const objectAt = (ref: ObjectRef): number => {
    const base = objects[ref.object];
    if (base === undefined) throw new Error(`native stop: no object #${ref.object}`);
    return base + ref.offset;
  };

  return {
    variant,
    executable,
    object,
    sp: address(json.sp, "sp"),
    ra: address(json.ra, "ra"),
    registers,
    exactRegisters,
    boundaryRa: address(json.boundaryRa, "boundaryRa"),
    boundaryFrame: parseGdbFrame(json.gdbBoundary, "gdbBoundary"),
    stackTop: address(json.stackTop, "stackTop"),
    memory,
    objects,
    objectSize: OBJECT_SIZE,
    gdbFrames,
    exitCode: json.exitCode,
    info: structuredClone(build.info),
    expectedRoots: build.info.frames.map((name, index) => ({
      name,
      mustInclude: (build.mustInclude[index] ?? []).map((pair) => ({ base: objectAt(pair.base), derived: objectAt(pair.derived) })),
    })),
  };
}

/** The 8-byte little-endian word at `at` in the stop's memory copy; throws outside the copy. */
export function readStopWord(stop: NativeStop, at: number): bigint {
  for (const chunk of stop.memory) {
    if (at >= chunk.base && at + 8 <= chunk.base + chunk.bytes.byteLength) {
      const view = new DataView(chunk.bytes.buffer, chunk.bytes.byteOffset, chunk.bytes.byteLength);
      return view.getBigUint64(at - chunk.base, true);
    }
  }
  throw new Error(`native stop ${stop.variant}: address 0x${at.toString(16)} is outside the memory copy`);
}

/** True if `value` is one of the stop's objects or points into one. */
export function isObjectPointer(stop: NativeStop, value: number): boolean {
  return stop.objects.some((object) => value >= object && value < object + stop.objectSize);
}

export interface OracleFrame {
  name: string;
  pc: number;
  sp: number;
  /** The function's StackSize in the stack map (bigint: UINT64_MAX for dynamic frames). */
  stackSize: bigint;
  /** The statepoint record's locations, as llvm-readobj spells them (gc part only). */
  locations: string[];
  /** Root values read with gdb's per-frame registers and the snapshot memory. */
  roots: RootPair[];
}

const DWARF_CALLEE_SAVED: Record<number, CalleeSavedName> = Object.fromEntries(CALLEE_SAVED_DWARF.map((dwarf, k) => [dwarf, CALLEE_SAVED_NAMES[k]!]));

/**
 * An independent oracle for the walker: for every gdb frame, the statepoint record keyed by its
 * pc (from `llvm-readobj --stackmap` of the executable), with each gc location read using gdb's
 * sp and unwound callee-saved registers for that frame and the snapshot's stack memory.
 */
export function oracleRoots(stop: NativeStop): OracleFrame[] {
  const map = parseReadobjStackmap(runTool(findLlvmTool("llvm-readobj"), ["--stackmap", stop.executable]));
  const byPc = new Map<number, { stackSize: bigint; locations: ReadobjLocation[] }>();
  map.functions.forEach((fn, index) => {
    for (const rec of recordsOfFunction(map, index)) {
      byPc.set(Number(fn.address) + rec.instructionOffset, { stackSize: fn.stackSize, locations: rec.locations });
    }
  });
  return stop.gdbFrames.map((frame) => {
    const entry = byPc.get(frame.pc);
    if (entry === undefined) throw new Error(`oracle: no stack map record at pc 0x${frame.pc.toString(16)} (${frame.name})`);
    const shape = statepointShape({ id: 0n, instructionOffset: 0, locations: entry.locations, liveOuts: [] });
    if (shape === undefined) throw new Error(`oracle: the record at 0x${frame.pc.toString(16)} is not a statepoint`);
    const register = (dwarf: number): number => {
      if (dwarf === 7) return frame.sp;
      const name = DWARF_CALLEE_SAVED[dwarf];
      const value = name === undefined ? null : frame.registers[name];
      if (value === null || value === undefined) throw new Error(`oracle: R#${dwarf} unknown in frame ${frame.name}`);
      return Number(BigInt.asUintN(64, value));
    };
    const valueOf = (location: ReadobjLocation): number => {
      switch (location.kind) {
        case "Register":
          return register(location.dwarfReg);
        case "Indirect":
          return Number(readStopWord(stop, register(location.dwarfReg) + location.offset));
        case "Direct":
          return register(location.dwarfReg) + location.offset;
        case "Constant":
          return location.value;
        case "ConstantIndex":
          return Number(location.value);
      }
    };
    const roots: RootPair[] = [];
    const gc = shape.gcLocations;
    for (let index = 0; index + 1 < gc.length; index += 2) {
      roots.push({ base: valueOf(gc[index] as ReadobjLocation), derived: valueOf(gc[index + 1] as ReadobjLocation) });
    }
    return { name: frame.name, pc: frame.pc, sp: frame.sp, stackSize: entry.stackSize, locations: gc.map((l) => l.text), roots };
  });
}
