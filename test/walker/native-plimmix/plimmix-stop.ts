import { irSource } from "../../support/ir-source.js";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { cacheKey, repoRoot, runTool } from "../../../src/toolchain/llvm-toolchain.js";
import { compilePlimmix } from "../../../src/toolchain/plimmix-plugin.js";
import { CALLEE_SAVED_NAMES, type CalleeSavedName, trampolineBuild } from "../native/native-stop.js";

/**
 * A REAL stop of plimmix (gcroot, `_GC_MAP_` v1) code at a safepoint, for the walker's tests.
 *
 * Two modules, plimmix-a.ll and plimmix-b.ll (source names "plimmix_a.c" and "plimmix_b.c"),
 * compiled by llc -O2 with the plimmix plugin (compilePlimmix), linked non-PIE with harness.c and
 * ../native/trampoline.S:
 *
 *   main: plimmix_a_init, plimmix_b_init, plimmix_a_init   (3 gc_init calls, 2 distinct labels)
 *   main -> rw_enter -> pa_entry (A) -> pb_mid (B) -> pa_deep (A) -> pb_leaf (B) -> gc_safepoint_poll
 *
 * The handler (harness.c) writes the innermost managed frame's SP, return address and
 * callee-saved registers, the stack [sp - 256, stackTop), the executable's .data (which holds the
 * TRAIT cell), and for every distinct pointer passed to gc_init the live bytes from it to the end
 * of .data: a bound, not the map's length (that is for plimmixMapLength to find).
 *
 * Builds are cached by content under `.cache/native-plimmix/`. `capturePlimmixStop()` runs the
 * program directly (ASLR on); `{ gdb: true }` runs it under gdb with ../native/gdb-frames.py,
 * which adds gdb's own unwind of the same stop.
 */

/** One managed frame at the stop, as the IR defines it (innermost first in PLIMMIX_CHAIN). */
export interface ChainFrame {
  name: string;
  /** Module::getSourceFileName() of the module defining the function. */
  module: "plimmix_a.c" | "plimmix_b.c";
  /** The values of the POINTER roots: object index, or null for a root holding null. */
  pointerRoots: (number | null)[];
  /** The object index held at +8 of the TRAIT cell, when the frame has the TRAIT root. */
  traitTarget: number | undefined;
  /** What the frame's one ATOMIC root holds (never reported). */
  atomicValue: number;
  /** The function's own incoming stack arguments (IR arguments - 6). */
  stackArgs: number;
}

/** The frames at the stop, innermost first (see plimmix-a.ll). */
export const PLIMMIX_CHAIN: readonly ChainFrame[] = [
  { name: "pb_leaf", module: "plimmix_b.c", pointerRoots: [6, null, 7], traitTarget: undefined, atomicValue: 0xa700_0000, stackArgs: 0 },
  { name: "pa_deep", module: "plimmix_a.c", pointerRoots: [4, 5], traitTarget: undefined, atomicValue: 0xa700_0001, stackArgs: 2 },
  { name: "pb_mid", module: "plimmix_b.c", pointerRoots: [2, 3], traitTarget: 8, atomicValue: 0xa700_0002, stackArgs: 0 },
  { name: "pa_entry", module: "plimmix_a.c", pointerRoots: [0, 1], traitTarget: undefined, atomicValue: 0xa700_0003, stackArgs: 0 },
];

/** The modules' source names, as their labels `_GC_MAP_<name>` spell them (order of gc_init). */
export const PLIMMIX_MODULES = ["plimmix_a.c", "plimmix_b.c"] as const;

/** The object @pb_global_root (plimmix-b.ll's global root) holds at the stop. */
export const GLOBAL_ROOT_OBJECT = 7;

/** The caller whose call passes arguments on the stack (pa_deep's 8). */
export const STACK_ARGS_CALLER = "pb_mid";

export { CALLEE_SAVED_NAMES, type CalleeSavedName };

export interface GdbFrame {
  name: string;
  pc: number;
  /** gdb's unwound rsp: the SP after the call into the next inner frame returns. */
  sp: number;
}

export interface Piece {
  base: number;
  bytes: Uint8Array;
}

export interface PlimmixStop {
  executable: string;
  /** The compiled modules (inputs of the link). */
  compiled: { a: string; b: string };
  /** The innermost managed frame's SP after the call to gc_safepoint_poll returns. */
  sp: number;
  /** That call's return address (a safepoint of pb_leaf). */
  ra: number;
  /** Callee-saved registers at the call, exact. */
  registers: Record<CalleeSavedName, bigint>;
  /** `rw_enter_return`: the return address into native code; the walk ends there. */
  boundaryRa: number;
  stackTop: number;
  /** [0]: the stack [sp - 256, stackTop); [1]: the executable's .data at the stop. */
  memory: Piece[];
  /** Per distinct gc_init pointer, in registration order: the live bytes [address, end of .data). */
  maps: Piece[];
  /** How many times gc_init was called (duplicates included). */
  gcInitCalls: number;
  /** The nine fake objects O0..O8. */
  objects: number[];
  objectSize: number;
  /** Address of the TRAIT cell {vtable, heap slot}. */
  traitCell: number;
  /** @pb_global_root: its address and the value it held at the stop. */
  globalRoot: { address: number; value: number };
  /** With { gdb: true }: gdb's frames (innermost managed first, up to rw_enter), its rw_enter frame. */
  gdb: { frames: GdbFrame[]; boundary: GdbFrame } | undefined;
}

/** gcc flags of the link: non-PIE, so runtime addresses are link-time addresses. */
const GCC_FLAGS = ["-no-pie", "-O1", "-Wall", "-Wextra", "-Werror"];
const LLC_FLAGS = ["-O2"];

function directory(): string {
  return dirname(fileURLToPath(import.meta.url));
}

function cacheRoot(): string {
  return join(repoRoot(), ".cache", "native-plimmix");
}

function toolVersion(command: string, purpose: string): string {
  const result = spawnSync(command, ["--version"], { encoding: "utf8" });
  if (result.error !== undefined || result.status !== 0) {
    throw new Error(`the native plimmix stop needs ${command} (${purpose}); install it (Debian: apt-get install ${command})`);
  }
  return result.stdout;
}

/** True if gdb runs (the gdb cross-check is optional). */
export function hasGdb(): boolean {
  const result = spawnSync("gdb", ["--version"], { encoding: "utf8" });
  return result.error === undefined && result.status === 0;
}

function temporaryName(path: string): string {
  return `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
}

/** Compiles both modules (plimmix plugin, llc -O2) and links the program; everything cached. */
export function buildPlimmixStop(): { executable: string; compiled: { a: string; b: string } } {
  const gccVersion = toolVersion("gcc", "to link the harness");
  const here = directory();
  const objectsDir = join(cacheRoot(), "objects");
  const a = compilePlimmix(irSource(join(here, "plimmix-a.ll")), { llcFlags: LLC_FLAGS, cacheDir: objectsDir });
  const b = compilePlimmix(irSource(join(here, "plimmix-b.ll")), { llcFlags: LLC_FLAGS, cacheDir: objectsDir });
  const harness = join(here, "harness.c");
  const trampoline = trampolineBuild();
  const key = cacheKey([
    "native-plimmix/link/v2",
    readFileSync(a),
    readFileSync(b),
    readFileSync(harness),
    ...trampoline.keyParts,
    JSON.stringify(GCC_FLAGS),
    gccVersion,
  ]);
  const executable = join(cacheRoot(), "bin", `plimmix-stop-${key.slice(0, 32)}`);
  if (!existsSync(executable)) {
    mkdirSync(dirname(executable), { recursive: true });
    const temporary = temporaryName(executable);
    try {
      runTool("gcc", [...GCC_FLAGS, harness, ...trampoline.gccArgs, a, b, "-o", temporary]);
      renameSync(temporary, executable);
    } finally {
      rmSync(temporary, { force: true });
    }
  }
  return { executable, compiled: { a, b } };
}

// ---- parsing the snapshot ---------------------------------------------------------------------

const HEX = /^0x[0-9a-f]+$/;

function hexBig(value: unknown, what: string): bigint {
  if (typeof value !== "string" || !HEX.test(value)) throw new Error(`plimmix stop: ${what} is not a 0x hex string: ${JSON.stringify(value)}`);
  return BigInt(value);
}

function address(value: unknown, what: string): number {
  const big = hexBig(value, what);
  if (big >= 1n << 53n) throw new Error(`plimmix stop: ${what} = ${String(value)} does not fit a JS number`);
  return Number(big);
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error(`plimmix stop: ${what} is not an object`);
  return value as Record<string, unknown>;
}

function list(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`plimmix stop: ${what} is not an array`);
  return value;
}

function integer(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value)) throw new Error(`plimmix stop: ${what} is not an integer`);
  return value;
}

function hexBytes(value: unknown, what: string): Uint8Array {
  if (typeof value !== "string" || value.length % 2 !== 0 || !/^[0-9a-f]*$/.test(value)) {
    throw new Error(`plimmix stop: ${what} is not an even-length lowercase hex string`);
  }
  return new Uint8Array(Buffer.from(value, "hex"));
}

function piece(value: unknown, what: string, baseField: "base" | "address"): Piece {
  const fields = record(value, what);
  return { base: address(fields[baseField], `${what}.${baseField}`), bytes: hexBytes(fields.hex, `${what}.hex`) };
}

function gdbFrame(value: unknown, what: string): GdbFrame {
  const fields = record(value, what);
  if (typeof fields.name !== "string") throw new Error(`plimmix stop: ${what}.name is not a string`);
  return { name: fields.name, pc: address(fields.pc, `${what}.pc`), sp: address(fields.sp, `${what}.sp`) };
}

/** Parses the handler's JSON (plus gdb's fields when present); see harness.c for the shape. */
export function parsePlimmixSnapshot(text: string, build: { executable: string; compiled: { a: string; b: string } }): PlimmixStop {
  const json = record(JSON.parse(text), "snapshot");
  const registersJson = list(json.registers, "registers");
  const registers = {} as Record<CalleeSavedName, bigint>;
  CALLEE_SAVED_NAMES.forEach((name, k) => (registers[name] = hexBig(registersJson[k], `registers[${k}] (${name})`)));
  const globalRoot = record(json.globalRoot, "globalRoot");
  let gdb: PlimmixStop["gdb"];
  if (json.gdbFrames !== undefined) {
    if (json.exitCode !== 0) throw new Error(`plimmix stop: ${build.executable} exited with ${String(json.exitCode)} under gdb`);
    gdb = {
      frames: list(json.gdbFrames, "gdbFrames").map((frame, index) => gdbFrame(frame, `gdbFrames[${index}]`)),
      boundary: gdbFrame(json.gdbBoundary, "gdbBoundary"),
    };
  }
  return {
    executable: build.executable,
    compiled: build.compiled,
    sp: address(json.sp, "sp"),
    ra: address(json.ra, "ra"),
    registers,
    boundaryRa: address(json.boundaryRa, "boundaryRa"),
    stackTop: address(json.stackTop, "stackTop"),
    memory: list(json.memory, "memory").map((chunk, index) => piece(chunk, `memory[${index}]`, "base")),
    maps: list(json.maps, "maps").map((map, index) => piece(map, `maps[${index}]`, "address")),
    gcInitCalls: integer(json.gcInitCalls, "gcInitCalls"),
    objects: list(json.objects, "objects").map((value, index) => address(value, `objects[${index}]`)),
    objectSize: integer(json.objectSize, "objectSize"),
    traitCell: address(json.traitCell, "traitCell"),
    globalRoot: { address: address(globalRoot.address, "globalRoot.address"), value: address(globalRoot.value, "globalRoot.value") },
    gdb,
  };
}

/**
 * Builds (cached) and runs the program once; returns its snapshot. Directly by default (the
 * program must exit 0 with empty stderr: every managed root check passed); with `gdb: true`
 * under gdb (../native/gdb-frames.py), which adds its unwind of the same stop.
 */
export function capturePlimmixStop(options: { gdb?: boolean } = {}): PlimmixStop {
  const build = buildPlimmixStop();
  const runs = join(cacheRoot(), "runs");
  mkdirSync(runs, { recursive: true });
  const snapshotPath = join(runs, `stop-${process.pid}-${Math.random().toString(36).slice(2)}.json`);
  try {
    if (options.gdb === true) {
      toolVersion("gdb", "to record gdb's backtrace of the stop");
      runTool("gdb", ["-nx", "-batch", "-x", join(directory(), "..", "native", "gdb-frames.py"), "--args", build.executable, snapshotPath], {
        env: { ...process.env, RW_NATIVE_STOP_SNAPSHOT: snapshotPath },
      });
    } else {
      const result = spawnSync(build.executable, [snapshotPath], { encoding: "utf8" });
      if (result.error !== undefined) throw result.error;
      if (result.status !== 0 || result.stderr !== "") {
        throw new Error(`plimmix stop: ${build.executable} exited with ${String(result.status ?? result.signal)}: ${result.stderr.trim()}`);
      }
    }
    return parsePlimmixSnapshot(readFileSync(snapshotPath, "utf8"), build);
  } finally {
    rmSync(snapshotPath, { force: true });
    rmSync(`${snapshotPath}.gdb-tmp`, { force: true });
  }
}
