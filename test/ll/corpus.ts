import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { compileToObject } from "../../src/toolchain/llvm-toolchain.js";
import type { LlvmSelection } from "../../src/toolchain/llvm-selection.js";
import { irSource } from "../support/ir-source.js";

/**
 * The `.ll` corpus: LLVM IR sources that LLVM 14 and 19 compile into objects with `.llvm_stackmaps`
 * sections, each chosen to exercise part of the format or of the frame layout.
 *
 * Every source starts with a comment saying what it covers and how it is built; the entry here
 * repeats the build (optPasses / llcFlags) in a machine-readable form and names the features it
 * covers. `test/toolchain/corpus.test.ts` checks that every named feature really appears in the
 * compiled object (`llvm-readobj --stackmap`, `llvm-objdump -d`), so a feature list cannot
 * silently go stale when LLVM changes.
 */

/** What a corpus source exercises. Each one has a check in test/toolchain/corpus.test.ts. */
export type CorpusFeature =
  // Location kinds.
  | "location:register"
  | "location:direct"
  | "location:indirect"
  | "location:constant"
  | "location:constant-index"
  /** A Register location wider than 8 bytes (a ymm vector value, size 32). */
  | "location:vector-register"
  // Live-outs.
  | "live-outs"
  /** 32-byte (ymm) live-out registers. */
  | "live-outs:ymm"
  // Constants and IDs.
  /** INT64_MIN / INT64_MAX as ConstantIndex entries. */
  | "constants:int64-extremes"
  /** Negative small constants, printed by readobj as unsigned 32-bit. */
  | "constants:sign-extended"
  /** The constant pool holds each value once although several records use it. */
  | "constants:deduplicated"
  /** Record IDs 0, 2^63, UINT64_MAX. */
  | "ids:extremes"
  /** Two records at the same instruction offset in one function. */
  | "records:duplicate-offset"
  /** At least ~50 functions and ~200 records in one blob. */
  | "records:many"
  // Record producers.
  | "stackmap"
  | "patchpoint"
  | "statepoint"
  /** stackmap + patchpoint + statepoint records in one module. */
  | "records:mixed-kinds"
  /** A function with no record between functions that have records. */
  | "function:without-records"
  /** An internal function: its Function Address relocation is against `.text` (+ addend). */
  | "function:internal"
  // Frames.
  /** StackSize UINT64_MAX because of a variable-sized alloca. */
  | "frame:dynamic"
  /** StackSize UINT64_MAX because of stack realignment. */
  | "frame:realigned"
  /** push %rbp; mov %rsp,%rbp prologues. */
  | "frame:frame-pointer"
  /** A frame larger than 64 KiB. */
  | "frame:large"
  /** Compiled at -O0. */
  | "frame:o0"
  /** Outgoing stack arguments pushed right before a call (X86CallFrameOptimization). */
  | "frame:pushed-args"
  /** Shrink-wrapping: a return path before the prologue. */
  | "control:shrink-wrap"
  /** An indirect jump through a jump table. */
  | "control:jump-table"
  /** gc functions calling each other (f0 -> f1 -> f2 -> poll). */
  | "control:call-chain"
  // Statepoint specifics.
  | "statepoint:deopt"
  /** A deopt bundle lowered by llc itself: ID 0xABCDEF0F. */
  | "statepoint:deopt-direct"
  /** (base, derived) pairs with different locations. */
  | "statepoint:derived-pairs"
  /** gc pointers in callee-saved registers. */
  | "statepoint:gc-in-csr"
  | "statepoint:invoke"
  /** null (Constant 0) and undef (ConstantIndex 0xFEFEFEFE) gc pointers. */
  | "statepoint:null-undef"
  /** An alloca in gc-live: a trailing Direct location. */
  | "statepoint:alloca"
  /** Flags = 1 (GC transition). */
  | "statepoint:gc-transition"
  /** A statepoint with patch bytes instead of a call. */
  | "statepoint:patch-bytes"
  /** A user-chosen statepoint ID (statepoint-id attribute). */
  | "statepoint:custom-id"
  /** A non-C calling convention recorded in location 0 (coldcc = 9). */
  | "statepoint:calling-convention";

export interface CorpusExpectations {
  /** Some function has StackSize UINT64_MAX. Default false. */
  dynamicFrame?: boolean;
  /** Some call site pushes outgoing arguments (the StackSize formula is wrong there). Default false. */
  pushedArgs?: boolean;
  /** Some function uses a frame pointer (push %rbp; mov %rsp,%rbp). */
  framePointer?: boolean;
  /** Lower bounds on the blob's header counts. */
  minFunctions?: number;
  minRecords?: number;
  /** Exact number of records, when the source pins it down. */
  records?: number;
  /** Lines that must appear in `llvm-readobj --stackmap` output (trimmed, exact). */
  readobjLines?: string[];
  /**
   * The same for one LLVM major where its code generation differs (replacing readobjLines).
   * LLVM 19: patchpoint live-outs include the callee-saved registers (rbx, r12-r15), an `i1 true`
   * stack map operand is Constant 1 (14: sign-extended, 4294967295), and instruction offsets move.
   */
  readobjLinesByLlvm?: Partial<Record<number, string[]>>;
}

/** The readobj lines an entry expects from LLVM `major`. */
export function corpusReadobjLines(expectations: CorpusExpectations, major: number): string[] {
  return expectations.readobjLinesByLlvm?.[major] ?? expectations.readobjLines ?? [];
}

export interface CorpusEntry {
  /** Short kebab-case name; the file is `<name>.ll` in this directory. */
  name: string;
  /** Absolute path of the `.ll` source. */
  file: string;
  /** `opt` arguments; absent: no opt step. */
  optPasses?: string[];
  /** Extra `llc` arguments (llc's default level is -O2). */
  llcFlags?: string[];
  covers: CorpusFeature[];
  expect?: CorpusExpectations;
}

/** This directory (test/ll). */
export const CORPUS_DIR = dirname(fileURLToPath(import.meta.url));

const RS4GC = ["-passes=rewrite-statepoints-for-gc"];

function entry(name: string, fields: Omit<CorpusEntry, "name" | "file">): CorpusEntry {
  return { name, file: join(CORPUS_DIR, `${name}.ll`), ...fields };
}

export const CORPUS: CorpusEntry[] = [
  entry("location-kinds", {
    covers: ["stackmap", "location:register", "location:direct", "location:indirect", "location:constant", "location:constant-index", "frame:frame-pointer"],
    expect: {
      framePointer: true,
      records: 2,
      readobjLines: ["#3: Direct R#6 + -24, size: 8", "#5: ConstantIndex #0 (4886718345), size: 8"],
    },
  }),
  entry("location-kinds-o0", {
    optPasses: RS4GC,
    llcFlags: ["-O0"],
    covers: [
      "stackmap",
      "statepoint",
      "frame:o0",
      "frame:frame-pointer",
      "location:register",
      "location:direct",
      "location:indirect",
      "location:constant",
      "location:constant-index",
      "constants:sign-extended",
    ],
    expect: { framePointer: true, records: 2, readobjLines: ["#5: Constant 4294967291, size: 8"] },
  }),
  entry("live-outs", {
    covers: ["patchpoint", "live-outs", "live-outs:ymm", "location:vector-register", "frame:realigned"],
    expect: {
      dynamicFrame: true,
      records: 4,
      readobjLines: ["4 live-outs: [ R#7 (8-bytes) R#12 (8-bytes) R#18 (16-bytes) R#19 (32-bytes) ]", "#3: Register R#18, size: 32"],
      readobjLinesByLlvm: {
        19: [
          "8 live-outs: [ R#3 (8-bytes) R#7 (8-bytes) R#12 (8-bytes) R#13 (8-bytes) R#14 (8-bytes) R#15 (8-bytes) R#18 (16-bytes) R#19 (32-bytes) ]",
          "#3: Register R#18, size: 32",
        ],
      },
    },
  }),
  entry("constants", {
    covers: ["stackmap", "location:constant", "location:constant-index", "constants:int64-extremes", "constants:sign-extended", "constants:deduplicated"],
    expect: {
      records: 2,
      readobjLines: [
        "Num Constants: 4",
        "#1: ConstantIndex #0 (9223372036854775808), size: 8",
        "#2: ConstantIndex #1 (9223372036854775807), size: 8",
        "#3: Constant 4294967295, size: 8",
        "#4: Constant 4294967294, size: 8",
        "#5: Constant 4294967293, size: 8",
        "#13: Constant 4294967295, size: 8",
      ],
      readobjLinesByLlvm: {
        19: [
          "Num Constants: 4",
          "#1: ConstantIndex #0 (9223372036854775808), size: 8",
          "#2: ConstantIndex #1 (9223372036854775807), size: 8",
          "#3: Constant 4294967295, size: 8",
          "#4: Constant 4294967294, size: 8",
          "#5: Constant 4294967293, size: 8",
          "#13: Constant 1, size: 8",
          "#15: Constant 4294967295, size: 8",
        ],
      },
    },
  }),
  entry("stackmap-ids", {
    covers: ["stackmap", "ids:extremes", "records:duplicate-offset", "frame:frame-pointer"],
    expect: {
      framePointer: true,
      records: 5,
      readobjLines: [
        "Record ID: 0, instruction offset: 9",
        "Record ID: 18446744073709551615, instruction offset: 9",
        "Record ID: 9223372036854775808, instruction offset: 14",
        "Record ID: 1234605616436508552, instruction offset: 30",
      ],
    },
  }),
  entry("many-records", {
    optPasses: RS4GC,
    covers: ["records:many", "stackmap", "statepoint", "patchpoint", "records:mixed-kinds", "constants:deduplicated"],
    expect: { minFunctions: 50, minRecords: 200 },
  }),
  entry("dynamic-frame", {
    optPasses: RS4GC,
    covers: ["frame:dynamic", "stackmap", "statepoint", "frame:frame-pointer"],
    expect: { dynamicFrame: true, framePointer: true, records: 2, readobjLines: ["#4: Indirect [R#6 + -24], size: 8"] },
  }),
  entry("realigned-frame", {
    optPasses: RS4GC,
    covers: ["frame:realigned", "statepoint", "frame:frame-pointer"],
    expect: { dynamicFrame: true, framePointer: true, records: 2 },
  }),
  entry("deopt-statepoint", {
    optPasses: RS4GC,
    covers: ["statepoint", "statepoint:deopt", "location:indirect", "location:constant-index"],
    expect: {
      records: 2,
      readobjLines: ["#3: Constant 7, size: 8", "#8: Indirect [R#7 + 20], size: 4", "Record ID: 2882400000, instruction offset: 40"],
      readobjLinesByLlvm: { 19: ["#3: Constant 7, size: 8", "#8: Indirect [R#7 + 20], size: 4", "Record ID: 2882400000, instruction offset: 41"] },
    },
  }),
  entry("deopt-direct", {
    covers: ["statepoint", "statepoint:deopt", "statepoint:deopt-direct"],
    expect: { records: 1, readobjLines: ["10 locations:", "#3: Constant 7, size: 8"] },
  }),
  entry("derived-pairs", {
    optPasses: [...RS4GC, "-spp-rematerialization-threshold=0"],
    covers: ["statepoint", "statepoint:derived-pairs"],
    expect: { records: 3 },
  }),
  entry("gc-in-csr", {
    optPasses: RS4GC,
    llcFlags: ["-max-registers-for-gc-values=4", "-fixup-allow-gcptr-in-csr"],
    covers: ["statepoint", "statepoint:gc-in-csr", "location:register", "location:indirect"],
    expect: { records: 3 },
  }),
  entry("invoke-statepoint", {
    optPasses: RS4GC,
    covers: ["statepoint", "statepoint:invoke", "statepoint:deopt"],
    expect: { records: 1, readobjLines: ["#3: Constant 2, size: 8"] },
  }),
  entry("stack-args", {
    optPasses: RS4GC,
    covers: ["statepoint", "frame:pushed-args"],
    expect: {
      pushedArgs: true,
      records: 2,
      readobjLines: ["#4: Indirect [R#7 + 16], size: 8", "#4: Indirect [R#7 + 32], size: 8"],
    },
  }),
  // The chains the walker's native tests stop at a safepoint (test/walker/native/).
  entry("native-chain-args", {
    optPasses: [...RS4GC, "-spp-rematerialization-threshold=0"],
    llcFlags: ["-O2"],
    covers: ["statepoint", "frame:pushed-args", "statepoint:derived-pairs"],
    expect: { pushedArgs: true },
  }),
  entry("native-chain-csr", {
    optPasses: RS4GC,
    llcFlags: ["-O2", "-max-registers-for-gc-values=4", "-fixup-allow-gcptr-in-csr"],
    covers: ["statepoint", "location:register"],
  }),
  entry("native-chain-dynamic", {
    optPasses: RS4GC,
    llcFlags: ["-O2"],
    covers: ["statepoint", "frame:dynamic"],
    expect: { dynamicFrame: true },
  }),
  entry("native-chain-fp", {
    optPasses: RS4GC,
    llcFlags: ["-O2"],
    covers: ["statepoint", "frame:frame-pointer"],
    expect: { framePointer: true },
  }),
  entry("call-chain", {
    optPasses: RS4GC,
    covers: ["statepoint", "control:call-chain"],
    expect: { records: 3 },
  }),
  entry("call-chain-frame-pointer", {
    optPasses: RS4GC,
    covers: ["statepoint", "frame:frame-pointer"],
    expect: { records: 3, framePointer: true },
  }),
  entry("mixed-kinds", {
    optPasses: RS4GC,
    covers: ["records:mixed-kinds", "stackmap", "patchpoint", "statepoint", "function:without-records", "function:internal", "live-outs"],
    expect: {
      records: 5,
      framePointer: true,
      readobjLines: ["3 live-outs: [ R#3 (8-bytes) R#7 (8-bytes) R#14 (8-bytes) ]"],
      readobjLinesByLlvm: { 19: ["6 live-outs: [ R#3 (8-bytes) R#7 (8-bytes) R#12 (8-bytes) R#13 (8-bytes) R#14 (8-bytes) R#15 (8-bytes) ]"] },
    },
  }),
  entry("handwritten-statepoint", {
    covers: [
      "statepoint",
      "statepoint:null-undef",
      "statepoint:alloca",
      "statepoint:gc-transition",
      "statepoint:patch-bytes",
      "statepoint:derived-pairs",
      "statepoint:deopt",
    ],
    expect: {
      records: 3,
      readobjLines: ["#5: ConstantIndex #0 (4278124286), size: 8", "#12: Direct R#7 + 16, size: 8"],
    },
  }),
  entry("statepoint-attributes", {
    optPasses: RS4GC,
    covers: ["statepoint", "statepoint:custom-id", "statepoint:patch-bytes", "statepoint:calling-convention", "frame:large"],
    expect: {
      records: 4,
      readobjLines: ["Record ID: 1432778632, instruction offset: 25", "Record ID: 7, instruction offset: 43", "#1: Constant 9, size: 8"],
      readobjLinesByLlvm: { 19: ["Record ID: 1234605616436508552, instruction offset: 25", "Record ID: 7, instruction offset: 43", "#1: Constant 9, size: 8"] },
    },
  }),
  entry("control-flow", {
    optPasses: RS4GC,
    covers: ["statepoint", "control:shrink-wrap", "control:jump-table"],
    expect: { records: 5 },
  }),
];

/** The entry called `name`; throws if there is none (a typo in a test). */
export function corpusEntry(name: string): CorpusEntry {
  const found = CORPUS.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no corpus entry named ${name}`);
  return found;
}

/**
 * Compiles an entry to an object file (cached under `.cache/objects/`) and returns its path; for
 * the host's x86-64 unless `mtriple` names another target (`aarch64-linux-gnu`), given to llc.
 */
export function compileCorpusEntry(entry: CorpusEntry, options: { cacheDir?: string; llvm?: LlvmSelection; mtriple?: string } = {}): string {
  const llcFlags = [...(entry.llcFlags ?? []), ...(options.mtriple === undefined ? [] : [`-mtriple=${options.mtriple}`])];
  return compileToObject(irSource(entry.file), {
    ...(options.llvm === undefined ? {} : { llvm: options.llvm }),
    ...(entry.optPasses === undefined ? {} : { optPasses: entry.optPasses }),
    ...(llcFlags.length === 0 ? {} : { llcFlags }),
    ...(options.cacheDir === undefined ? {} : { cacheDir: options.cacheDir }),
  });
}
