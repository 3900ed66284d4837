import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as api from "../../src/index.js";
import { compileCorpusEntry, corpusEntry } from "../ll/corpus.js";

/*
 * walkStack and the Unwinder as a JavaScript caller may call them (the README's library example,
 * with one argument wrong each time). Each wrong value was walked or ignored without a word: an
 * SP or return address with a fraction gave frames at fractional addresses, a string an empty
 * walk ("no frames" as an answer), an unknown mode or a maxDepth of 0, -1, 1.5 or NaN the default;
 * null or a number as registers was a TypeError from inside the walk. Each must be an
 * InvalidArgumentError naming the field, the value and what is expected. So must a registry passed
 * where its snapshot is read (or the other way round), bytes for a Memory, an array for the
 * scanner's thread provider: each was a TypeError from inside the lookup or the walk.
 */

const registry = new api.SafepointRegistry();
api.registerObjectFile(registry, readFileSync(compileCorpusEntry(corpusEntry("call-chain"))), { path: "call-chain.o" });
const snapshot = registry.snapshot();
const ra = api.listSafepoints(snapshot)[0]!.returnAddress;
const memory = new api.SimulatedMemory(0x7000_0000, 4096);
const sp = 0x7000_0100;
const ADDRESS = "expected an address: a whole number in [0, 2^53)";
const SNAPSHOT = "snapshot: found a SafepointRegistry, expected a RegistrySnapshot (registry.snapshot() of a SafepointRegistry)";

const CASES: [string, () => unknown, string][] = [
  ["an SP with a fraction", () => api.walkStack(snapshot, memory, { sp: sp + 0.5, ra }, { mode: "lenient" }), `start.sp: found ${sp + 0.5}, ${ADDRESS}`],
  [
    "an SP that is a string",
    () => api.walkStack(snapshot, memory, { sp: "0x70000100" as unknown as number, ra }, { mode: "lenient" }),
    `start.sp: found "0x70000100", ${ADDRESS}`,
  ],
  [
    "a return address with a fraction",
    () => api.walkStack(snapshot, memory, { sp, ra: ra + 0.5 }, { mode: "lenient" }),
    `start.ra: found ${ra + 0.5}, ${ADDRESS}`,
  ],
  ["a negative return address", () => api.walkStack(snapshot, memory, { sp, ra: -8 }, { mode: "lenient" }), `start.ra: found -8, ${ADDRESS}`],
  [
    "a chunk's stackTop past 2^53",
    () => api.walkStack(snapshot, memory, [{ sp, ra, stackTop: 2 ** 60 }], { mode: "lenient" }),
    `chunks[0].stackTop: found ${2 ** 60}, ${ADDRESS}`,
  ],
  [
    "no start",
    () => api.walkStack(snapshot, memory, null as unknown as api.WalkStart, { mode: "lenient" }),
    "start: found null, expected { sp, ra, registers? }",
  ],
  [
    "registers that are no RegisterContext",
    () => api.walkStack(snapshot, memory, { sp, ra, registers: 5 as unknown as api.RegisterContext }, { mode: "lenient" }),
    "start.registers: found 5, expected a RegisterContext",
  ],
  ["an unknown mode", () => api.walkStack(snapshot, memory, { sp, ra }, { mode: "fast" as "strict" }), "options.mode: found fast, expected strict | lenient"],
  ["a registry for its snapshot", () => api.walkStack(registry as unknown as api.RegistrySnapshot, memory, { sp, ra }, { mode: "lenient" }), SNAPSHOT],
  [
    "bytes for the memory",
    () => api.walkStack(snapshot, new Uint8Array(64) as unknown as api.Memory, { sp, ra }, { mode: "lenient" }),
    "memory: found a Uint8Array, expected a Memory",
  ],
  ["listSafepoints given the registry", () => api.listSafepoints(registry as unknown as api.RegistrySnapshot), SNAPSHOT],
  ["safepointAt at an address with a fraction", () => api.safepointAt(snapshot, ra + 0.5), `returnAddress: found ${ra + 0.5}, ${ADDRESS}`],
  ["safepointAt at a string", () => api.safepointAt(snapshot, String(ra) as unknown as number), `returnAddress: found "${ra}", ${ADDRESS}`],
  ["safepointAt at a bigint at 2^60", () => api.safepointAt(snapshot, 2n ** 60n), `returnAddress: found a bigint ${2n ** 60n}n, ${ADDRESS}`],
  [
    "a return address that is a bigint past 2^64",
    () => api.walkStack(snapshot, memory, { sp, ra: (2n ** 64n) as unknown as number }, { mode: "lenient" }),
    `start.ra: found a bigint ${2n ** 64n}n, ${ADDRESS}`,
  ],
  ["safepointAt given the registry", () => api.safepointAt(registry as unknown as api.RegistrySnapshot, ra), SNAPSHOT],
  [
    "a StackRootScanner given a snapshot",
    () => new api.StackRootScanner(snapshot as unknown as api.SafepointRegistry, () => []),
    "registry: found a RegistrySnapshot, expected a SafepointRegistry",
  ],
  [
    "a StackRootScanner given an array of threads",
    () => new api.StackRootScanner(registry, [] as unknown as () => api.ThreadStack[]),
    "threads: found an array, expected a function",
  ],
  [
    "no registers to RegisterContext.from",
    () => api.RegisterContext.from(undefined as unknown as Record<string, number>, api.X86_64),
    "registers: found undefined, expected an object of callee-saved registers, e.g. { rbx: 0x1000 }",
  ],
  [
    "no architecture to RegisterContext.from (x86-64 is no default)",
    () => (api.RegisterContext.from as (registers: Record<string, number>) => unknown)({ rbx: 1 }),
    "architecture: found undefined, expected an architecture description (X86_64 or AARCH64, exported by rootwalk)",
  ],
  ["no options", () => new api.Unwinder(snapshot, memory, undefined as unknown as api.UnwinderOptions), "options: found undefined, expected"],
  ...[0, -1, 1.5, Number.NaN].map((maxDepth): [string, () => unknown, string] => [
    `maxDepth ${maxDepth}`,
    () => api.walkStack(snapshot, memory, { sp, ra }, { mode: "lenient", maxDepth }),
    `options.maxDepth: found ${maxDepth}, expected a whole number of frames, 1 or more`,
  ]),
];

describe("walkStack's arguments", () => {
  it.each(CASES)("%s is an InvalidArgumentError naming it", (_what, call, message) => {
    expect(call).toThrow(api.InvalidArgumentError);
    expect(call).toThrow(message);
  });

  // Addresses read as 64-bit words are often bigints (`0x34n`): one below 2^53 is that address.
  it("safepointAt takes a bigint return address as the number it is", () => {
    expect(api.safepointAt(snapshot, BigInt(ra))).toEqual(api.safepointAt(snapshot, ra));
    expect(api.safepointAt(snapshot, BigInt(ra))?.returnAddress).toBe(ra);
    expect(api.safepointAt(snapshot, 0x34n)).toBeUndefined();
  });

  it("walkStack takes bigint addresses in its start and chunks as the numbers they are", () => {
    const big = (n: number) => BigInt(n) as unknown as number;
    const walk = api.walkStack(snapshot, memory, { sp: big(sp), ra: big(ra) }, { mode: "lenient", maxDepth: 1 });
    expect(walk.frames.map((f) => [f.sp, f.ra])).toEqual([[sp, ra]]);
    const chunks = api.walkStack(snapshot, memory, [{ sp: big(sp), ra, stackTop: big(0x7000_1000) }], { mode: "lenient", maxDepth: 1 });
    expect(chunks.frames.map((f) => [f.sp, f.ra])).toEqual([[sp, ra]]);
  });

  it("the same walk with right arguments still walks the frame", () => {
    const walk = api.walkStack(snapshot, memory, { sp, ra }, { mode: "lenient", maxDepth: 1 });
    expect(walk.frames.map((f) => [f.sp, f.ra])).toEqual([[sp, ra]]);
  });
});
