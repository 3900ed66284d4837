import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { CORPUS, CORPUS_DIR, compileCorpusEntry, corpusEntry, corpusReadobjLines, type CorpusEntry, type CorpusFeature } from "../ll/corpus.js";
import { activeLlvm } from "../../src/toolchain/llvm-selection.js";
import { generateManyRecordsModule } from "../ll/many-records-generator.js";
import { objdumpDisassembly, readobjRelocations } from "../support/llvm-tools.js";
import { objdumpCallSites, readobjStackmap, type ObjdumpFunction } from "../support/objdump-frames.js";
import {
  DYNAMIC_STACK_SIZE,
  parseReadobjStackmap,
  recordsOfFunction,
  statepointShape,
  type ReadobjRecord,
  type ReadobjStackMap,
} from "../support/readobj-stackmap.js";

/**
 * The `.ll` corpus compiles with LLVM 14, every entry has a stack map, the features each entry
 * claims to cover really appear in the compiled object, and the objdump frame-size oracle agrees
 * with LLVM's StackSize wherever StackSize is meaningful.
 */

const DEFAULT_STATEPOINT_ID = 0xabcdef00n;
const DEOPT_BUNDLE_STATEPOINT_ID = 0xabcdef0fn;
const UINT64_MAX = 0xffff_ffff_ffff_ffffn;

/** Everything the checks look at, computed once per entry. */
interface Compiled {
  entry: CorpusEntry;
  source: string;
  objPath: string;
  readobj: string;
  map: ReadobjStackMap;
  disassembly: string;
  /** Disassembly text per function name. */
  functionText: Map<string, string>;
  frames: Map<string, ObjdumpFunction>;
  /** Function table index -> function name (from the .rela.llvm_stackmaps relocations). */
  tableFunctions: string[];
  /** Whether the Function Address relocation of table entry i is against a section symbol. */
  tableAgainstSection: boolean[];
  /** Record IDs the source gives to stackmap and patchpoint intrinsics (as u64). */
  stackmapIds: Set<bigint>;
  patchpointIds: Set<bigint>;
}

function splitFunctions(disassembly: string): Map<string, string> {
  const result = new Map<string, string>();
  let name: string | undefined;
  let lines: string[] = [];
  const flush = (): void => {
    if (name !== undefined) result.set(name, lines.join("\n"));
  };
  for (const line of disassembly.split("\n")) {
    const header = /^[0-9a-f]+ <(.+)>:$/.exec(line);
    if (header !== null) {
      flush();
      name = header[1] as string;
      lines = [];
    } else if (name !== undefined) {
      lines.push(line);
    }
  }
  flush();
  return result;
}

function intrinsicIds(source: string, pattern: RegExp): Set<bigint> {
  const ids = new Set<bigint>();
  for (const match of source.matchAll(pattern)) ids.add(BigInt.asUintN(64, BigInt(match[1] as string)));
  return ids;
}

function compile(entry: CorpusEntry): Compiled {
  const source = readFileSync(entry.file, "utf8");
  const objPath = compileCorpusEntry(entry);
  const readobj = readobjStackmap(objPath);
  const map = parseReadobjStackmap(readobj);
  const disassembly = objdumpDisassembly(objPath);
  const frames = objdumpCallSites(objPath);
  const relocations = readobjRelocations(objPath).get(".rela.llvm_stackmaps") ?? [];
  const tableFunctions: string[] = [];
  const tableAgainstSection: boolean[] = [];
  map.functions.forEach((_, index) => {
    const relocation = relocations.find((candidate) => candidate.offset === 16 + 24 * index);
    if (relocation === undefined) throw new Error(`${entry.name}: no relocation for function record ${index}`);
    const named = frames.get(relocation.symbol);
    const inSection = [...frames.values()].find((fn) => fn.section === relocation.symbol && BigInt(fn.startOffset) === relocation.addend);
    const fn = named ?? inSection;
    if (fn === undefined) throw new Error(`${entry.name}: cannot resolve ${relocation.symbol}+${relocation.addend}`);
    tableFunctions.push(fn.name);
    tableAgainstSection.push(named === undefined);
  });
  return {
    entry,
    source,
    objPath,
    readobj,
    map,
    disassembly,
    functionText: splitFunctions(disassembly),
    frames,
    tableFunctions,
    tableAgainstSection,
    stackmapIds: intrinsicIds(source, /@llvm\.experimental\.stackmap\(i64 (-?\d+)/g),
    patchpointIds: intrinsicIds(source, /@llvm\.experimental\.patchpoint\.\w+\(i64 (-?\d+)/g),
  };
}

/** Records with the function they belong to. */
function recordsWithFunctions(c: Compiled): { record: ReadobjRecord; fn: ObjdumpFunction; stackSize: bigint }[] {
  return c.map.functions.flatMap((function_, index) => {
    const fn = c.frames.get(c.tableFunctions[index] as string) as ObjdumpFunction;
    return recordsOfFunction(c.map, index).map((record) => ({ record, fn, stackSize: function_.stackSize }));
  });
}

/** Records that come from statepoints: statepoint-shaped and not a stackmap/patchpoint ID of the source. */
function statepointRecords(c: Compiled): ReturnType<typeof recordsWithFunctions> {
  return recordsWithFunctions(c).filter(
    ({ record }) => statepointShape(record) !== undefined && !c.stackmapIds.has(record.id) && !c.patchpointIds.has(record.id),
  );
}

function allLocations(c: Compiled): ReadobjRecord["locations"] {
  return c.map.records.flatMap((record) => record.locations);
}

function isCallReturn(fn: ObjdumpFunction, offset: number): boolean {
  return fn.callSites.some((site) => site.returnOffset === offset);
}

/** One check per feature; each throws (expect) if the compiled object does not show it. */
const FEATURE_CHECKS: Record<CorpusFeature, (c: Compiled) => void> = {
  "location:register": (c) => expect(c.readobj).toMatch(/: Register R#\d+, size/),
  "location:direct": (c) => expect(c.readobj).toMatch(/: Direct R#\d+ \+ -?\d+, size/),
  "location:indirect": (c) => expect(c.readobj).toMatch(/: Indirect \[R#\d+ \+ -?\d+\], size/),
  "location:constant": (c) => expect(c.readobj).toMatch(/: Constant \d+, size/),
  "location:constant-index": (c) => expect(c.readobj).toMatch(/: ConstantIndex #\d+ \(\d+\), size/),
  "location:vector-register": (c) => expect(allLocations(c).some((location) => location.kind === "Register" && location.sizeBytes > 8)).toBe(true),
  "live-outs": (c) => expect(c.map.records.some((record) => record.liveOuts.length > 0)).toBe(true),
  "live-outs:ymm": (c) => {
    expect(c.readobj).toContain("(32-bytes)");
    expect(c.map.records.some((record) => record.liveOuts.some((liveOut) => liveOut.sizeBytes === 32))).toBe(true);
  },
  "constants:int64-extremes": (c) => {
    expect(c.readobj).toContain("9223372036854775808");
    expect(c.map.constants).toContain(1n << 63n);
    expect(c.map.constants).toContain((1n << 63n) - 1n);
  },
  "constants:sign-extended": (c) =>
    // A negative small constant: sign-extended to 32 bits, printed unsigned (>= 2^31).
    expect(allLocations(c).some((location) => location.kind === "Constant" && location.value >= 2 ** 31)).toBe(true),
  "constants:deduplicated": (c) => {
    expect(new Set(c.map.constants).size).toBe(c.map.constants.length);
    const recordsUsing = new Map<number, number>();
    for (const record of c.map.records) {
      const indices = new Set(record.locations.flatMap((location) => (location.kind === "ConstantIndex" ? [location.index] : [])));
      for (const index of indices) recordsUsing.set(index, (recordsUsing.get(index) ?? 0) + 1);
    }
    expect(Math.max(0, ...recordsUsing.values())).toBeGreaterThanOrEqual(2);
  },
  "ids:extremes": (c) => {
    const ids = c.map.records.map((record) => record.id);
    expect(ids).toContain(0n);
    expect(ids).toContain(1n << 63n);
    expect(ids).toContain(UINT64_MAX);
  },
  "records:duplicate-offset": (c) => {
    const seen = new Set<string>();
    let duplicate = false;
    for (const { record, fn } of recordsWithFunctions(c)) {
      const key = `${fn.name}+${record.instructionOffset}`;
      if (seen.has(key)) duplicate = true;
      seen.add(key);
    }
    expect(duplicate).toBe(true);
  },
  "records:many": (c) => {
    expect(c.map.functions.length).toBeGreaterThanOrEqual(50);
    expect(c.map.records.length).toBeGreaterThanOrEqual(200);
  },
  stackmap: (c) => {
    expect(c.stackmapIds.size).toBeGreaterThan(0);
    const ids = new Set(c.map.records.map((record) => record.id));
    for (const id of c.stackmapIds) expect(ids.has(id)).toBe(true);
  },
  patchpoint: (c) => {
    expect(c.patchpointIds.size).toBeGreaterThan(0);
    const ids = new Set(c.map.records.map((record) => record.id));
    for (const id of c.patchpointIds) expect(ids.has(id)).toBe(true);
  },
  statepoint: (c) => expect(statepointRecords(c).length).toBeGreaterThan(0),
  "records:mixed-kinds": (c) => {
    FEATURE_CHECKS.stackmap(c);
    FEATURE_CHECKS.patchpoint(c);
    FEATURE_CHECKS.statepoint(c);
  },
  "function:without-records": (c) => {
    const withRecords = new Set(c.tableFunctions);
    const ordered = [...c.frames.values()].sort((a, b) => a.startOffset - b.startOffset);
    const between = ordered.some(
      (fn, index) =>
        !withRecords.has(fn.name) &&
        ordered.slice(0, index).some((other) => withRecords.has(other.name)) &&
        ordered.slice(index + 1).some((other) => withRecords.has(other.name)),
    );
    expect(between).toBe(true);
  },
  "function:internal": (c) => expect(c.tableAgainstSection).toContain(true),
  "frame:dynamic": (c) => {
    const dynamic = c.map.functions.flatMap((fn, index) => (fn.stackSize === DYNAMIC_STACK_SIZE ? [c.tableFunctions[index] as string] : []));
    expect(c.readobj).toContain("stack size: 18446744073709551615");
    // A variable-sized alloca: RSP is set from a register, with no realignment.
    expect(
      dynamic.some((name) => {
        const text = c.functionText.get(name) ?? "";
        return /(sub|mov)q\s+%r\w+, %rsp/.test(text) && !/andq\s+\$-(?:\d+|0x[0-9a-f]+), %rsp/.test(text);
      }),
    ).toBe(true);
  },
  "frame:realigned": (c) => {
    const realigned = c.map.functions.some(
      (fn, index) =>
        fn.stackSize === DYNAMIC_STACK_SIZE && /andq\s+\$-(?:\d+|0x[0-9a-f]+), %rsp/.test(c.functionText.get(c.tableFunctions[index] as string) ?? ""),
    );
    expect(realigned).toBe(true);
  },
  "frame:frame-pointer": (c) => expect([...c.frames.values()].some((fn) => fn.framePointer)).toBe(true),
  "frame:large": (c) => expect(c.map.functions.some((fn) => fn.stackSize !== DYNAMIC_STACK_SIZE && fn.stackSize > 65536n)).toBe(true),
  "frame:o0": (c) => expect(c.entry.llcFlags).toContain("-O0"),
  "frame:pushed-args": (c) => {
    const sites = [...c.frames.values()].flatMap((fn) => fn.callSites);
    expect(sites.some((site) => site.pushedArgBytes > 0)).toBe(true);
    expect(c.disassembly).toMatch(/pushq\t[^\n]*\n(?:\s+[0-9a-f]+:\s+R_X86_64[^\n]*\n)?\s+[0-9a-f]+:\s+callq/);
  },
  "control:shrink-wrap": (c) => {
    const shrinkWrapped = [...c.functionText.values()].some((text) => {
      const first = /^\s*[0-9a-f]+:\s+(\S+)/m.exec(text)?.[1];
      return first !== undefined && !/^(push|sub|mov)/.test(first) && /pushq\s+%r/.test(text) && /callq/.test(text);
    });
    expect(shrinkWrapped).toBe(true);
  },
  "control:jump-table": (c) => expect(c.disassembly).toMatch(/jmpq\s+\*/),
  "control:call-chain": (c) => {
    const chain = ["chain_f0", "chain_f1", "chain_f2", "gc_safepoint_poll"];
    const records = recordsWithFunctions(c);
    for (let index = 0; index + 1 < chain.length; index += 1) {
      const fn = c.frames.get(chain[index] as string);
      expect(fn, chain[index]).toBeDefined();
      const site = fn?.callSites.find((candidate) => candidate.target === chain[index + 1]);
      expect(site, `${chain[index]} calls ${chain[index + 1]}`).toBeDefined();
      expect(records.some(({ record, fn: owner }) => owner === fn && record.instructionOffset === site?.returnOffset)).toBe(true);
    }
  },
  "statepoint:deopt": (c) => expect(statepointRecords(c).some(({ record }) => (statepointShape(record)?.deoptCount ?? 0) > 0)).toBe(true),
  "statepoint:deopt-direct": (c) => expect(statepointRecords(c).some(({ record }) => record.id === DEOPT_BUNDLE_STATEPOINT_ID)).toBe(true),
  "statepoint:derived-pairs": (c) => {
    const differing = statepointRecords(c).some(({ record }) => {
      const locations = statepointShape(record)?.gcLocations ?? [];
      for (let index = 0; index + 1 < locations.length; index += 2) {
        if (locations[index]?.text !== locations[index + 1]?.text) return true;
      }
      return false;
    });
    expect(differing).toBe(true);
  },
  "statepoint:gc-in-csr": (c) => {
    const inCsr = statepointRecords(c).some(({ record }) =>
      (statepointShape(record)?.gcLocations ?? []).some((location) => location.kind === "Register" && [3, 12, 13, 14, 15].includes(location.dwarfReg)),
    );
    expect(inCsr).toBe(true);
    expect(c.readobj).toMatch(/Register R#(3|1[2-5]),/);
  },
  "statepoint:invoke": (c) => {
    expect(c.source).toMatch(/\binvoke\b/);
    expect(c.source).toMatch(/\blandingpad\b/);
    expect(statepointRecords(c).some(({ record, fn }) => isCallReturn(fn, record.instructionOffset))).toBe(true);
  },
  "statepoint:null-undef": (c) => {
    const gc = statepointRecords(c).flatMap(({ record }) => statepointShape(record)?.gcLocations ?? []);
    expect(gc.some((location) => location.kind === "Constant" && location.value === 0)).toBe(true);
    expect(gc.some((location) => location.kind === "ConstantIndex" && location.value === 0xfefefefen)).toBe(true);
  },
  "statepoint:alloca": (c) => {
    const gc = statepointRecords(c).flatMap(({ record }) => statepointShape(record)?.gcLocations ?? []);
    expect(gc.some((location) => location.kind === "Direct")).toBe(true);
  },
  "statepoint:gc-transition": (c) => expect(statepointRecords(c).some(({ record }) => ((statepointShape(record)?.flags ?? 0) & 1) === 1)).toBe(true),
  "statepoint:patch-bytes": (c) =>
    // No call at all: the record offset follows a nop sled, not a call.
    expect(
      statepointRecords(c).some(({ record, fn }) => {
        if (isCallReturn(fn, record.instructionOffset)) return false;
        const text = c.functionText.get(fn.name) ?? "";
        return /nop[wl]?\s/.test(text);
      }),
    ).toBe(true),
  "statepoint:custom-id": (c) =>
    expect(statepointRecords(c).some(({ record }) => record.id !== DEFAULT_STATEPOINT_ID && record.id !== DEOPT_BUNDLE_STATEPOINT_ID)).toBe(true),
  "statepoint:calling-convention": (c) => expect(statepointRecords(c).some(({ record }) => (statepointShape(record)?.callingConvention ?? 0) !== 0)).toBe(true),
};

describe("the .ll corpus", () => {
  const compiled = new Map<string, Compiled>();
  const get = (name: string): Compiled => {
    const found = compiled.get(name);
    if (found === undefined) throw new Error(`${name} was not compiled`);
    return found;
  };

  beforeAll(() => {
    for (const entry of CORPUS) compiled.set(entry.name, compile(entry));
  });

  it("has at least 18 sources, each with a header saying what it covers and how it is built", () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(18);
    expect(new Set(CORPUS.map((entry) => entry.name)).size).toBe(CORPUS.length);
    for (const entry of CORPUS) {
      const source = readFileSync(entry.file, "utf8");
      expect(source.startsWith(`; rootwalk corpus: ${entry.name}`), entry.name).toBe(true);
      expect(source, entry.name).toMatch(/^; Covers: /m);
      expect(source, entry.name).toMatch(/^; Build: /m);
      expect(entry.covers.length, entry.name).toBeGreaterThan(0);
    }
  });

  it("covers every feature somewhere", () => {
    const covered = new Set(CORPUS.flatMap((entry) => entry.covers));
    expect([...Object.keys(FEATURE_CHECKS)].filter((feature) => !covered.has(feature as CorpusFeature))).toEqual([]);
  });

  it("keeps many-records.ll in sync with its generator", () => {
    const path = join(CORPUS_DIR, "many-records.ll");
    const generated = generateManyRecordsModule();
    if (process.env["ROOTWALK_UPDATE_CORPUS"] === "1") writeFileSync(path, generated);
    expect(readFileSync(path, "utf8")).toBe(generated);
  });

  describe.each(CORPUS.map((entry) => [entry.name, entry] as const))("%s", (name, entry) => {
    it("compiles to an object with a v3 stack map that has records", () => {
      const c = get(name);
      expect(c.map.version).toBe(3);
      expect(c.map.records.length).toBeGreaterThan(0);
      expect(c.readobj).toMatch(/Num Records: [1-9]\d*/);
      const counted = c.map.functions.reduce((sum, fn) => sum + fn.recordCount, 0n);
      expect(counted).toBe(BigInt(c.map.records.length));
    });

    it("meets its expectations", () => {
      const c = get(name);
      const expectations = entry.expect ?? {};
      if (expectations.records !== undefined) expect(c.map.records.length).toBe(expectations.records);
      if (expectations.minRecords !== undefined) expect(c.map.records.length).toBeGreaterThanOrEqual(expectations.minRecords);
      if (expectations.minFunctions !== undefined) {
        expect(c.map.functions.length).toBeGreaterThanOrEqual(expectations.minFunctions);
      }
      const hasDynamic = c.map.functions.some((fn) => fn.stackSize === DYNAMIC_STACK_SIZE);
      expect(hasDynamic).toBe(expectations.dynamicFrame ?? false);
      const hasPushedArgs = [...c.frames.values()].some((fn) => fn.callSites.some((site) => site.pushedArgBytes > 0));
      expect(hasPushedArgs).toBe(expectations.pushedArgs ?? false);
      if (expectations.framePointer !== undefined) {
        expect([...c.frames.values()].some((fn) => fn.framePointer)).toBe(expectations.framePointer);
      }
      const lines = new Set(c.readobj.split("\n").map((line) => line.trim()));
      for (const line of corpusReadobjLines(expectations, activeLlvm().major)) expect(lines.has(line), line).toBe(true);
    });

    it.each(entry.covers.map((feature) => [feature] as const))("shows %s", (feature) => {
      FEATURE_CHECKS[feature](get(name));
    });

    it("agrees with the objdump frame oracle at every record", () => {
      const c = get(name);
      for (const { record, fn, stackSize } of recordsWithFunctions(c)) {
        const where = `${fn.name}+${record.instructionOffset} (record ${record.id})`;
        const state = fn.frameAt.get(record.instructionOffset);
        expect(state, `${where}: no instruction starts there`).toBeDefined();
        if (stackSize === DYNAMIC_STACK_SIZE) {
          expect(fn.dynamic, where).toBe(true);
          expect(state?.frameSizeBytes, where).toBeUndefined();
          continue;
        }
        expect(fn.dynamic, where).toBe(false);
        expect(fn.conflicts, where).toEqual([]);
        // StackSize counts the fixed frame; pushed outgoing arguments come on top of it.
        expect(state?.baseBytes, where).toBe(Number(stackSize));
        expect((state?.frameSizeBytes ?? NaN) - (state?.pushedArgBytes ?? NaN), where).toBe(Number(stackSize));
        if (state?.pushedArgBytes === 0) expect(state.frameSizeBytes, where).toBe(Number(stackSize));
      }
    });

    it("puts every call-based statepoint record at a call's return address", () => {
      const c = get(name);
      for (const { record, fn } of statepointRecords(c)) {
        if (record.id !== DEFAULT_STATEPOINT_ID && record.id !== DEOPT_BUNDLE_STATEPOINT_ID) continue;
        expect(isCallReturn(fn, record.instructionOffset), `${fn.name}+${record.instructionOffset}`).toBe(true);
      }
    });
  });

  it("sees the pushed stack arguments of the >6-argument calls at -O2", () => {
    const c = get("stack-args");
    const fn = c.frames.get("pushes_stack_args") as ObjdumpFunction;
    const sites = fn.callSites.map((site) => [site.target, site.pushedArgBytes, site.frameSizeBytes]);
    expect(sites).toEqual([
      ["sink8", 16, 24 + 16],
      ["sink10", 32, 24 + 32],
    ]);
    // Both records sit at those return addresses; StackSize alone would be off by the pushes.
    const records = recordsOfFunction(c.map, 0).map((record) => record.instructionOffset);
    expect(records).toEqual(fn.callSites.map((site) => site.returnOffset));
    expect(c.functionText.get("pushes_stack_args")).toMatch(/pushq\t\$(?:10|0xa)\n\s+[0-9a-f]+:\s+pushq\t%rax\n\s+[0-9a-f]+:\s+callq/);
  });

  it("finds the call chain's frames with and without a frame pointer", () => {
    for (const name of ["call-chain", "call-chain-frame-pointer"]) {
      const c = get(name);
      const withFp = name === "call-chain-frame-pointer";
      for (const fnName of ["chain_f0", "chain_f1", "chain_f2"]) {
        expect(c.frames.get(fnName)?.framePointer, `${name}: ${fnName}`).toBe(withFp);
      }
    }
  });

  it("sees the patchpoint record at the start of the patchpoint, not at its return address", () => {
    const c = get("mixed-kinds");
    const fn = c.frames.get("patchpoint_caller") as ObjdumpFunction;
    const record = c.map.records.find((candidate) => candidate.id === 101n) as ReadobjRecord;
    expect(isCallReturn(fn, record.instructionOffset)).toBe(false);
    const indirect = fn.callSites.find((site) => site.target === "*%r11");
    expect(indirect?.returnOffset).toBe(record.instructionOffset + 13);
  });
});

describe("corpusEntry", () => {
  it("finds entries by name and rejects unknown names", () => {
    expect(corpusEntry("stack-args").name).toBe("stack-args");
    expect(() => corpusEntry("no-such-entry")).toThrow(/no corpus entry/);
  });
});
