import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { AARCH64 } from "../../src/arch/aarch64.js";
import type { Architecture } from "../../src/arch/architecture.js";
import { X86_64 } from "../../src/arch/x86-64.js";
import { RUNTIME_GCC_FLAGS, runtimeSources } from "../../src/native/build-runtime.js";
import { runtimeExports } from "../../src/native/runtime-symbol-clash.js";
import { GUARD_BYTES } from "../../src/native/stack-limits.js";
import * as record from "../../src/native/thread-record.js";
import * as barriers from "../../src/native/return-barrier-layout.js";
import { findLlvmTool, repoRoot, runTool } from "../../src/toolchain/llvm-toolchain.js";
import { targetGcc } from "../../src/toolchain/target-gcc.js";
import { AllocationBits } from "../../gc/allocation-bits.js";
import { BYTES_IN_BLOCK, BYTES_IN_LINE, LOG_BYTES_IN_WORD } from "../../gc/heap-constants.js";
import { DefaultObjectModel, MAX_POINTER_SLOTS, MAX_RAW_BYTES, type HeapMemory } from "../../gc/object-model.js";
import { joinHalves, highU32, lowU32 } from "../../src/bytes/word-codec.js";

/*
 * The facts C and TypeScript share, checked where each side states them (style item 13: when two
 * languages must agree, a test fails the moment they differ):
 *   - the thread record (runtime.h rw_thread) and the runtime's enums against
 *     src/native/thread-record.ts: gcc compiles runtime.h followed by one _Static_assert per field,
 *     state, callback kind and constant, generated from the TypeScript values;
 *   - the heap's facts gc_alloc's fast path and rw_heap_reserve use (runtime.h RW_*) against gc/:
 *     the header word and the storage of objects of many shapes against DefaultObjectModel
 *     (object-model.ts), the size limits, the line and block sizes (heap-constants.ts), and the
 *     allocation bitmap's byte, bit and size against AllocationBits (allocation-bits.ts);
 *   - every part of the runtime builds, and exports no internal name (only gc_*, thread_stuck_*,
 *     no_gc_thread and rw_*: runtime-symbol-clash.ts reads that list);
 *   - the callee-saved order of the safepoint stub (runtime-entry.S) against the architecture
 *     description (src/arch/x86-64.ts, aarch64.ts): the stub's CFI, as llvm-dwarfdump prints it,
 *     says where each register was saved, which is frame[k] for register k of the description's order;
 * these three for x86-64 and for AArch64 (the runtime built by the cross gcc, target-gcc.ts);
 *   - where the fault handler reads the interrupted PC (runtime.c RW_FAULT_PC_FIELD) against the
 *     description's signalContext, for x86-64 and for AArch64;
 *   - the signal-context and core-note register layouts of the description against glibc's
 *     <sys/ucontext.h> (REG_*) and <sys/user.h> / <sys/procfs.h> (user_regs_struct, elf_prstatus).
 */

const NATIVE = join(repoRoot(), "src", "native");
const scratch = mkdtempSync(join(tmpdir(), "rw-runtime-layout-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const WORD_BYTES = X86_64.wordBytes;
const ARCHITECTURES: readonly Architecture[] = [X86_64, AARCH64];

/** `_Static_assert(expr, "message")` lines, each naming the TypeScript fact it checks (a bigint: an unsigned 64-bit word). */
function asserts(facts: readonly [expression: string, expected: number | bigint, what: string][]): string {
  return facts
    .map(([expression, expected, what]) => {
      const literal = typeof expected === "bigint" ? `0x${expected.toString(16)}ull` : `${expected}`;
      return `_Static_assert((${expression}) == ${literal}, "${what} = ${literal} in TypeScript");`;
    })
    .join("\n");
}

/** A heap of `words` 64-bit words at `base`, in plain arrays: where DefaultObjectModel writes a header. */
function smallHeap(base: number, words: number): HeapMemory {
  const halves = new Uint32Array(words * 2);
  return {
    base,
    words: halves,
    bytes: new Uint8Array(halves.buffer),
    readWord: (address) => joinHalves(halves[(address - base) >>> 2]!, halves[((address - base) >>> 2) + 1]!),
    writeWord: (address, value) => {
      halves[(address - base) >>> 2] = lowU32(value);
      halves[((address - base) >>> 2) + 1] = highU32(value);
    },
  };
}

/** Object shapes [pointer slots, raw bytes]: empty, around one line (the fast path's limit), the largest. */
const SHAPES: readonly [number, number][] = [
  [0, 0],
  [1, 0],
  [0, 1],
  [3, 5],
  [15, 0],
  [16, 0],
  [0, 120],
  [0, 121],
  [2, 103],
  [12345, 6789],
  [MAX_POINTER_SLOTS, 0],
  [0, MAX_RAW_BYTES],
  [MAX_POINTER_SLOTS, MAX_RAW_BYTES],
];

/** The header DefaultObjectModel.initialize writes for a fresh object of this shape, as one word. */
function typescriptHeader(pointerSlots: number, rawBytes: number): bigint {
  const heap = smallHeap(0x10000, 2);
  new DefaultObjectModel().initialize(heap, heap.base + 8, pointerSlots, rawBytes);
  return (BigInt(heap.words[1]!) << 32n) | BigInt(heap.words[0]!);
}

/** Heap offsets of object addresses, in the first granules, across bytes and blocks, far in. */
const OBJECT_OFFSETS: readonly number[] = [0, 8, 56, 64, 72, 120, 136, 4096 + 24, 3 * BYTES_IN_BLOCK + 13 * 8, (1 << 24) + 40];
const BITMAP_HEAP_BYTES = 1 << 25;

/** The byte AllocationBits.set(offset) changes, and the bit it sets there. */
function typescriptAllocationBit(offset: number): { byte: number; mask: number } {
  const bits = new AllocationBits(BITMAP_HEAP_BYTES);
  bits.set(offset);
  const byte = bits.bits.findIndex((b) => b !== 0);
  return { byte, mask: bits.bits[byte]! };
}

function heapFacts(): [string, number | bigint, string][] {
  const model = new DefaultObjectModel();
  return [
    ["RW_LINE_BYTES", BYTES_IN_LINE, "heap-constants.ts BYTES_IN_LINE"],
    ["RW_BLOCK_BYTES", BYTES_IN_BLOCK, "heap-constants.ts BYTES_IN_BLOCK"],
    ["RW_MAX_POINTER_SLOTS", MAX_POINTER_SLOTS, "object-model.ts MAX_POINTER_SLOTS"],
    ["RW_MAX_RAW_BYTES", MAX_RAW_BYTES, "object-model.ts MAX_RAW_BYTES"],
    ["RW_GRANULE_BYTES", 1 << LOG_BYTES_IN_WORD, "allocation-bits.ts granule (1 << LOG_BYTES_IN_WORD)"],
    ...SHAPES.flatMap(([slots, raw]): [string, number | bigint, string][] => [
      [`RW_HEADER_WORD(${slots}ull, ${raw}ull)`, typescriptHeader(slots, raw), `object-model.ts initialize(${slots}, ${raw}) header word`],
      [`RW_ALLOCATION_BYTES(${slots}ull, ${raw}ull)`, model.allocationBytes(slots, raw), `object-model.ts allocationBytes(${slots}, ${raw})`],
    ]),
    ...OBJECT_OFFSETS.flatMap((offset): [string, number, string][] => {
      const { byte, mask } = typescriptAllocationBit(offset);
      return [
        [`RW_ALLOCATION_BITS_BYTE(${offset}ull)`, byte, `allocation-bits.ts set(${offset}): byte`],
        [`RW_ALLOCATION_BITS_MASK(${offset}ull)`, mask, `allocation-bits.ts set(${offset}): bit mask`],
      ];
    }),
    ...[1, 2, 4096].map((blocks): [string, number, string] => [
      `RW_ALLOCATION_BITS_BYTES(${blocks * BYTES_IN_BLOCK}ull)`,
      AllocationBits.bytesFor(blocks * BYTES_IN_BLOCK),
      `allocation-bits.ts bytesFor(${blocks} blocks)`,
    ]),
  ];
}

function recordFacts(architecture: Architecture): [string, number, string][] {
  const layout = record.threadRecordLayout(architecture);
  const count = layout.registerCount;
  const description = `${architecture.name} calleeSavedDwarf.length`;
  const field = (name: string, word: number, ts: string): [string, number, string] => [
    `offsetof(rw_thread, ${name}) / 8`,
    word,
    `thread-record.ts ${ts} (rw_thread.${name})`,
  ];
  const constants = Object.entries(record).filter(([name]) => /^(ST|JS)_/.test(name)) as [string, number][];
  return [
    ["sizeof(rw_thread) / 8", record.RECORD_WORDS, "thread-record.ts RECORD_WORDS"],
    ["RW_MAX_THREADS", record.MAX_THREADS, "thread-record.ts MAX_THREADS"],
    ["RW_GUARD_BYTES", GUARD_BYTES, "stack-limits.ts GUARD_BYTES"],
    field("state", record.R_STATE, "R_STATE"),
    field("sp", record.R_SP, "R_SP"),
    field("ra", record.R_RA, "R_RA"),
    field("regs", record.R_REGS, "R_REGS"),
    ["sizeof(((rw_thread *)0)->regs) / 8", count, description],
    ["RW_CALLEE_SAVED", count, description],
    field("stack_top", layout.R_STACK_TOP, "R_STACK_TOP"),
    field("boundary_ra", layout.R_BOUNDARY, "R_BOUNDARY"),
    field("cursor", layout.R_CURSOR, "R_CURSOR"),
    field("limit", layout.R_LIMIT, "R_LIMIT"),
    field("stuck_sp", layout.R_STUCK_SP, "R_STUCK_SP"),
    field("left_ns", layout.R_LEFT_NS, "R_LEFT_NS"),
    ...constants.map(([name, value]): [string, number, string] => [name, value, `thread-record.ts ${name}`]),
  ];
}

/** The return barriers' layout (runtime.h rw_thread_barriers) against src/native/return-barrier-layout.ts. */
function barrierFacts(): [string, number, string][] {
  const ts = (name: string): string => `return-barrier-layout.ts ${name}`;
  return [
    ["RW_RETURN_BARRIERS_PER_THREAD", barriers.BARRIERS_PER_THREAD, ts("BARRIERS_PER_THREAD")],
    ["RW_BARRIERS_LOST", barriers.BARRIERS_LOST, ts("BARRIERS_LOST")],
    ["sizeof(rw_return_barrier)", barriers.BARRIER_ENTRY_BYTES, ts("BARRIER_ENTRY_BYTES")],
    ["sizeof(rw_thread_barriers)", barriers.BARRIERS_BYTES, ts("BARRIERS_BYTES")],
    ["offsetof(rw_thread_barriers, armed)", barriers.BARRIERS_ARMED_OFFSET, ts("BARRIERS_ARMED_OFFSET")],
    ["sizeof(((rw_thread_barriers *)0)->armed)", 4, "armed is a u32"],
    ["offsetof(rw_thread_barriers, flags)", barriers.BARRIERS_FLAGS_OFFSET, ts("BARRIERS_FLAGS_OFFSET")],
    ["sizeof(((rw_thread_barriers *)0)->flags)", 4, "flags is a u32"],
    ["offsetof(rw_thread_barriers, entries)", barriers.BARRIERS_ENTRIES_OFFSET, ts("BARRIERS_ENTRIES_OFFSET")],
    ["offsetof(rw_return_barrier, slot)", barriers.BARRIER_SLOT_OFFSET, ts("BARRIER_SLOT_OFFSET")],
    ["offsetof(rw_return_barrier, return_address)", barriers.BARRIER_RETURN_ADDRESS_OFFSET, ts("BARRIER_RETURN_ADDRESS_OFFSET")],
    ["offsetof(rw_return_barrier, frames_below)", barriers.BARRIER_FRAMES_BELOW_OFFSET, ts("BARRIER_FRAMES_BELOW_OFFSET")],
    ["sizeof(rw_return_barriers) / sizeof(rw_return_barriers[0])", record.MAX_THREADS, "one per thread record (MAX_THREADS)"],
  ];
}

function registerLayoutFacts(): [string, number, string][] {
  const signal = X86_64.signalContext;
  const core = X86_64.coreRegisters;
  return [
    ["offsetof(ucontext_t, uc_mcontext.gregs)", signal.registersOffsetBytes, "x86-64.ts signalContext.registersOffsetBytes"],
    ["REG_RSP", signal.spIndex, "x86-64.ts signalContext.spIndex"],
    ["REG_RIP", signal.pcIndex, "x86-64.ts signalContext.pcIndex"],
    ...X86_64.calleeSavedNames.map((name, k): [string, number, string] => [
      `REG_${name.toUpperCase()}`,
      signal.calleeSavedIndex[k]!,
      `x86-64.ts signalContext.calleeSavedIndex[${k}] (${name})`,
    ]),
    ["offsetof(struct elf_prstatus, pr_reg)", core.offsetBytes, "x86-64.ts coreRegisters.offsetBytes"],
    ["sizeof(struct user_regs_struct) / 8", core.names.length, "x86-64.ts coreRegisters.names.length"],
    ...core.names.map((name, i): [string, number, string] => [
      `offsetof(struct user_regs_struct, ${name}) / 8`,
      i,
      `x86-64.ts coreRegisters.names[${i}] (${name})`,
    ]),
  ];
}

/** Compiles runtime.h for `architecture` followed by the assertions; gcc's messages on failure. */
function compileWithAsserts(checks: string, architecture: Architecture = X86_64): { status: number | null; stderr: string } {
  const file = join(scratch, `layout-check-${architecture.nodeArch}.c`);
  const includes = ["runtime.h", "<stddef.h>", "<ucontext.h>", "<sys/procfs.h>", "<sys/user.h>"];
  writeFileSync(file, `${includes.map((h) => `#include ${h.startsWith("<") ? h : `"${h}"`}`).join("\n")}\n${checks}\n`);
  const flags = RUNTIME_GCC_FLAGS.filter((f) => f !== "-shared");
  const r = spawnSync(targetGcc(architecture), [...flags, `-I${NATIVE}`, "-fsyntax-only", file], { encoding: "utf8" });
  return { status: r.status, stderr: r.stderr };
}

/** DWARF register name (as llvm-dwarfdump prints it) -> CFA offset, from the first FDE of the stubs assembled for `architecture`. */
function stubSaveOffsets(architecture: Architecture): Map<string, number> {
  const object = join(scratch, `runtime-entry-${architecture.nodeArch}.o`);
  runTool(targetGcc(architecture), ["-c", join(NATIVE, "runtime-entry.S"), "-o", object]);
  const dump = runTool(findLlvmTool("llvm-dwarfdump"), ["--eh-frame", object]);
  const firstFde = dump.split(/\n(?=[0-9a-f]{8} [0-9a-f]{8} [0-9a-f]{8} FDE)/).find((part) => / FDE /.test(part.split("\n")[0]!));
  const offsets = new Map<string, number>();
  for (const m of (firstFde ?? "").matchAll(/DW_CFA_offset: (\w+) (-?\d+)/g)) offsets.set(m[1]!, Number(m[2]));
  return offsets;
}

describe.each(ARCHITECTURES.map((a) => [a.name, a] as const))("the C runtime for %s agrees with the TypeScript descriptions", (_, architecture) => {
  const count = architecture.calleeSavedDwarf.length;

  it("thread record layout, states and callback kinds: runtime.c vs src/native/thread-record.ts", () => {
    const { status, stderr } = compileWithAsserts(asserts(recordFacts(architecture)), architecture);
    expect(stderr.split("\n").filter((l) => /static assert/.test(l))).toEqual([]);
    expect(status).toBe(0);
  });

  it("the return barriers' layout: runtime.h rw_thread_barriers vs src/native/return-barrier-layout.ts", () => {
    const { status, stderr } = compileWithAsserts(asserts(barrierFacts()), architecture);
    expect(stderr.split("\n").filter((l) => /static assert|error/.test(l))).toEqual([]);
    expect(status).toBe(0);
  });

  it("the heap's facts: runtime.h's header word, storage, size limits, line, block and allocation bitmap vs gc/", () => {
    const { status, stderr } = compileWithAsserts(asserts(heapFacts()), architecture);
    expect(stderr.split("\n").filter((l) => /static assert|error/.test(l))).toEqual([]);
    expect(status).toBe(0);
  });

  it("every part of the runtime builds, and the library exports no internal name", () => {
    const library = join(scratch, `librwruntime-${architecture.nodeArch}.so`);
    runTool(targetGcc(architecture), [...RUNTIME_GCC_FLAGS, "-o", library, ...runtimeSources().compiled, "-ldl"]);
    const exported = [...runtimeExports(library)];
    expect(exported).toContain("gc_alloc");
    expect(exported).toContain("rw_impl_gc_alloc");
    expect(exported.filter((name) => !/^(gc_|rw_|thread_stuck_(start|end)$|no_gc_thread$)/.test(name))).toEqual([]);
  });

  it("the fault handler reads the interrupted PC where the description's signalContext has it (RW_FAULT_PC_FIELD)", () => {
    const signal = architecture.signalContext;
    const pcOffset = signal.registersOffsetBytes + signal.pcIndex * architecture.wordBytes;
    const facts: [string, number, string][] = [
      ["offsetof(ucontext_t, RW_FAULT_PC_FIELD)", pcOffset, `${architecture.name} signalContext.registersOffsetBytes + 8 * pcIndex`],
      ["sizeof(((ucontext_t *)0)->RW_FAULT_PC_FIELD)", architecture.wordBytes, `${architecture.name} wordBytes`],
    ];
    const { status, stderr } = compileWithAsserts(asserts(facts), architecture);
    expect(stderr.split("\n").filter((l) => /static assert|error/.test(l))).toEqual([]);
    expect(status).toBe(0);
  });

  it("the safepoint stub saves the callee-saved registers in the description's order (frame[k] = register k)", () => {
    const offsets = stubSaveOffsets(architecture);
    // frame = CFA - 8 * (count + 1) (then the return address, then the caller's SP = CFA);
    // frame[k] is at CFA - 8 - 8 * count + 8 * k.
    const frameIndex = architecture.calleeSavedDwarf.map((reg) => {
      const offset = offsets.get(architecture.dwarfdumpName(reg));
      return offset === undefined ? undefined : (offset + WORD_BYTES + WORD_BYTES * count) / WORD_BYTES;
    });
    expect(offsets.size).toBe(count);
    expect(frameIndex).toEqual(architecture.calleeSavedDwarf.map((_, k) => k));
  });

  it("the stub's frame offsets (RW_FRAME_*_BYTES, used by the test trampoline) follow from the register count", () => {
    const defines = runTool(targetGcc(architecture), ["-E", "-dM", join(NATIVE, "runtime-entry.S")]);
    const define = (name: string): number => Number(new RegExp(`#define ${name} (\\d+)`).exec(defines)?.[1]);
    expect({ ra: define("RW_FRAME_RA_BYTES"), sp: define("RW_FRAME_SP_BYTES") }).toEqual({ ra: count * WORD_BYTES, sp: (count + 1) * WORD_BYTES });
  });
});

describe("the C runtime agrees with the TypeScript descriptions", () => {
  it("signal-context and core-note register layouts: glibc's headers vs src/arch/x86-64.ts", () => {
    const { status, stderr } = compileWithAsserts(asserts(registerLayoutFacts()));
    expect(stderr.split("\n").filter((l) => /static assert/.test(l))).toEqual([]);
    expect(status).toBe(0);
  });
});
