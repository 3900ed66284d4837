import { existsSync, mkdirSync, rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ToolError } from "../../src/errors.js";
import { findLlvmTool, runTool, writeFileAtomic } from "../../src/toolchain/llvm-toolchain.js";
import { buildPlimmixPlugin, compilePlimmix } from "../../src/toolchain/plimmix-plugin.js";
import { catchError } from "../support/catch-error.js";
import { compileToObject, objdumpDisassembly, sectionSizes } from "../support/llvm-tools.js";
import { parseObjdumpFrames, type ObjdumpFunction } from "../support/objdump-frames.js";
import { markerStores, markerType, type MarkerStore } from "./machine-code.js";
import { decodeOcamlFrametable, decodeV1Map, type V1Function, type V1Map } from "./map-reader.js";
import { ObjectFacts, type Location } from "./object-facts.js";
import { PROGRAMS, derivedSource, mapLabel, ocamlSource, program, programPath, scratchDir, type ExpectedFunction, type PlimmixProgram } from "./programs.js";

/*
 * The plimmix plugin (src/plimmix-plugin/plimmix-gc.cpp) against the machine code it describes.
 *
 * For every program of test/plimmix/ll, at -O0, -O2 and -O2 with frame pointers everywhere, the
 * `_GC_MAP_` v1 bytes are decoded here (with the object's relocations applied) and compared with
 * `llvm-objdump -d`:
 *   - one record per gc function, in module order, at the function's own address;
 *   - the safe points are exactly the return addresses of the function's calls (tail calls are
 *     jumps, not safe points);
 *   - frame size * 8 is what the prologue allocates (pushes + sub), and no call pushes arguments;
 *     a dynamic frame (variable-sized alloca) says -1;
 *   - every root offset is the slot the code stores that root's marker into (SP-relative at the
 *     safe point for static frames, RBP-relative for dynamic ones), with the marker's type;
 *   - the global roots are the globals carrying !plimmix.root, by relocation.
 * The gc "ocaml" form of each program, compiled by llc's built-in printer, must describe the same
 * safe points with the same frame sizes and roots (its offsets are RBP-relative in frame-pointer
 * functions: converted before comparing).
 */

/** llc configurations every program is checked under; the last forces a frame pointer everywhere. */
const CONFIGURATIONS: { name: string; llcFlags: string[]; framePointer: boolean }[] = [
  { name: "-O0", llcFlags: ["-O0"], framePointer: false },
  { name: "-O2", llcFlags: ["-O2"], framePointer: false },
  { name: "-O2 -frame-pointer=all", llcFlags: ["-O2", "-frame-pointer=all"], framePointer: true },
];

interface Compiled {
  object: ObjectFacts;
  frames: Map<string, ObjdumpFunction>;
  markers: MarkerStore[];
  text: string;
}

function inspect(objectPath: string): Compiled {
  const text = objdumpDisassembly(objectPath);
  return {
    object: new ObjectFacts(objectPath),
    frames: parseObjdumpFrames(text, sectionSizes(objectPath)),
    markers: markerStores(text),
    text,
  };
}

function codeOf(compiled: Compiled, name: string): ObjdumpFunction {
  const code = compiled.frames.get(name);
  if (code === undefined) throw new Error(`no code for ${name}`);
  return code;
}

/** Offsets (from the function start) of a list of locations in the function's section. */
function offsetsIn(code: ObjdumpFunction, locations: readonly Location[]): number[] {
  return locations
    .map((location) => {
      expect(location.section).toBe(code.section);
      return location.offset - code.startOffset;
    })
    .sort((a, b) => a - b);
}

/** The largest fixed frame the prologue builds (pushes + sub), from the objdump oracle. */
function prologueBytes(code: ObjdumpFunction): number {
  let bytes = 0;
  for (const state of code.frameAt.values()) bytes = Math.max(bytes, state.baseBytes ?? 0);
  return bytes;
}

/**
 * Where a marker store puts its value, expressed the way v1 expresses root offsets: SP-relative
 * at a safe point for a static frame (SP = CFA - 8 - frameBytes; RBP = CFA - 16), RBP-relative
 * for a dynamic one.
 */
function markerSlotOffset(store: MarkerStore, code: ObjdumpFunction, record: V1Function): number {
  if (record.frameWords === -1) {
    expect(store.base, `${code.name}: marker ${store.mark} in a dynamic frame`).toBe("rbp");
    return store.displacement;
  }
  const frameBytes = record.frameWords * 8;
  if (store.base === "rbp") {
    expect(code.framePointer).toBe(true);
    return store.displacement + frameBytes - 8;
  }
  const state = code.frameAt.get(store.instructionOffset);
  expect(state?.frameSizeBytes, `${code.name}+${store.instructionOffset}: frame state`).toBeDefined();
  return store.displacement - (state?.pushedArgBytes ?? 0);
}

function checkRecord(compiled: Compiled, expected: ExpectedFunction, record: V1Function, forceFramePointer: boolean): void {
  const code = codeOf(compiled, expected.name);
  const where = `${expected.name}`;

  // The function address is the function's symbol, by relocation.
  expect({ section: record.address.section, offset: record.address.offset }, where).toEqual({
    section: code.section,
    offset: code.startOffset,
  });
  expect(record.stackArguments, `${where}: stack arguments`).toBe(expected.stackArguments);

  // Safe points = the return addresses of every call of the function.
  const returnOffsets = code.callSites.map((site) => site.returnOffset).sort((a, b) => a - b);
  expect(offsetsIn(code, record.safepoints), `${where}: safe points`).toEqual(returnOffsets);

  // Frame size.
  if (expected.dynamic === true) {
    expect(record.frameWords, `${where}: dynamic frame`).toBe(-1);
    expect(code.dynamic).toBe(true);
    expect(code.framePointer).toBe(true);
  } else {
    expect(code.dynamic, `${where}: static frame`).toBe(false);
    expect(record.frameWords * 8, `${where}: frame bytes vs prologue`).toBe(prologueBytes(code));
    for (const site of code.callSites) {
      expect(site.baseBytes, `${where}+${site.callOffset}: frame at the call`).toBe(record.frameWords * 8);
      expect(site.pushedArgBytes, `${where}+${site.callOffset}: pushed arguments`).toBe(0);
    }
  }
  expect(code.framePointer, `${where}: frame pointer`).toBe(expected.framePointer === true || forceFramePointer);

  // Roots: each one is the slot its marker is stored into, with the marker's type.
  expect(record.roots.length, `${where}: roots`).toBe(expected.roots);
  if (record.safepoints.length === 0) return;
  const slotOfMark = new Map<number, number>();
  for (const store of compiled.markers.filter((candidate) => candidate.functionName === expected.name)) {
    const offset = markerSlotOffset(store, code, record);
    const previous = slotOfMark.get(store.mark);
    if (previous !== undefined) expect(offset, `${where}: marker ${store.mark} stored twice`).toBe(previous);
    slotOfMark.set(store.mark, offset);
  }
  expect(slotOfMark.size, `${where}: one marker per root`).toBe(expected.roots);
  const markOfSlot = new Map([...slotOfMark].map(([mark, offset]) => [offset, mark]));
  expect(markOfSlot.size, `${where}: distinct slots`).toBe(expected.roots);
  for (const root of record.roots) {
    expect(Math.abs(root.offsetBytes % 8), `${where}: root offset ${root.offsetBytes} aligned`).toBe(0);
    if (record.frameWords === -1) {
      expect(root.offsetBytes).toBeLessThanOrEqual(-8);
    } else {
      expect(root.offsetBytes).toBeGreaterThanOrEqual(0);
      expect(root.offsetBytes).toBeLessThanOrEqual(record.frameWords * 8 - 8);
    }
    const mark = markOfSlot.get(root.offsetBytes);
    expect(mark, `${where}: root at ${root.offsetBytes} is a slot the code stores a root marker into`).toBeDefined();
    expect(root.type, `${where}: type of the root at ${root.offsetBytes}`).toBe(markerType(mark ?? 0));
  }
}

/** Checks one program's map in a compiled (or linked) object. */
function checkMap(compiled: Compiled, entry: PlimmixProgram, forceFramePointer = false): V1Map {
  const { object } = compiled;
  const label = mapLabel(entry);
  const symbol = object.symbol(label);
  expect(symbol.bind).toBe("GLOBAL");
  expect(symbol.type).toBe("OBJECT");
  expect(typeof symbol.sectionIndex).toBe("number");
  const section = object.sectionByIndex(symbol.sectionIndex as number);
  expect(section.name).toBe(".data");
  expect(section.type).toBe("PROGBITS");
  expect(section.flags).toContain("W");
  expect(section.flags).toContain("A");
  expect(section.alignBytes % 8).toBe(0);
  expect(symbol.value % 8, "label 8-aligned").toBe(0);

  const map = decodeV1Map(object, label);
  expect(map.version).toBe(1);
  expect(map.paddingIsZero).toBe(true);
  expect(map.sizeBytes, ".size of the label").toBe(symbol.sizeBytes);
  // No self pointer in front of the label.
  if (symbol.value >= 8) {
    const before = object.relocationAt(section.name, symbol.value - 8);
    expect(before === undefined || before.symbol !== label).toBe(true);
  }

  expect(map.functions.length, "N").toBe(entry.functions.length);
  let expectedGlobalsOffset = 16;
  entry.functions.forEach((expected, index) => {
    const record = map.functions[index] as V1Function;
    expect(record.recordOffset).toBe(expectedGlobalsOffset);
    checkRecord(compiled, expected, record, forceFramePointer);
    expectedGlobalsOffset += 24 + 8 * record.safepoints.length + 8 * record.roots.length;
  });
  expect(map.globalsOffset, "G right after the records").toBe(expectedGlobalsOffset);
  expect(
    map.globals.map((global) => ({ section: global.section, offset: global.offset })),
    "global roots",
  ).toEqual(entry.globals.map((name) => object.locate(name)));
  return map;
}

describe("the plimmix plugin", () => {
  it("builds once and is reused from the cache", () => {
    const plugin = buildPlimmixPlugin();
    expect(existsSync(plugin)).toBe(true);
    expect(plugin).toMatch(/\.cache\/plimmix\/plimmix-gc-llvm\d+-[0-9a-f]{64}\.so$/);
    expect(buildPlimmixPlugin()).toBe(plugin);
  });

  it("says how to install a missing compiler", () => {
    const path = process.env.PATH;
    process.env.PATH = scratchDir("no-such-bin");
    try {
      const error = catchError(() => buildPlimmixPlugin());
      expect(error).toBeInstanceOf(ToolError);
      expect((error as Error).message).toMatch(/g\+\+.*apt-get install g\+\+/);
    } finally {
      process.env.PATH = path;
    }
  });

  for (const configuration of CONFIGURATIONS) {
    describe(`at ${configuration.name}`, () => {
      it.each(PROGRAMS)("$name: the map describes the machine code", (entry) => {
        const compiled = inspect(compilePlimmix(programPath(entry), { llcFlags: configuration.llcFlags }));
        checkMap(compiled, entry, configuration.framePointer);
        // gcroot functions produce no default stack map section.
        expect(compiled.object.sections.some((section) => section.name === ".llvm_stackmaps")).toBe(false);
      });
    });
  }

  it("writes the four root types as declared by the gcroot metadata", () => {
    const entry = program("four-types");
    const map = decodeV1Map(new ObjectFacts(compilePlimmix(programPath(entry), { llcFlags: ["-O2"] })), mapLabel(entry));
    // At -O2 (SelectionDAG) roots come in gcroot order: ATOMIC, TRAIT, COMPLEX, POINTER, null.
    expect(map.functions[0]?.roots.map((root) => root.type)).toEqual([0, 1, 2, 3, 3]);
  });

  it("lays out a map without functions with G at offset 16", () => {
    const entry = program("empty-map");
    const object = new ObjectFacts(compilePlimmix(programPath(entry), { llcFlags: ["-O2"] }));
    const map = decodeV1Map(object, mapLabel(entry));
    expect(map.functions).toEqual([]);
    expect(map.globalsOffset).toBe(16);
    expect(map.sizeBytes).toBe(16 + 8 + 8);
    const bytes = object.sectionBytes(".data").subarray(map.labelOffset, map.labelOffset + 24);
    expect([...new Uint32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + 24))]).toEqual([1, 0, 0, 0, 1, 0]);
  });

  it("links two modules (ld -r): both maps, each under its own label, relocated into one .text", () => {
    const a = program("link-a");
    const b = program("link-b");
    mkdirSync(scratchDir("link"), { recursive: true });
    const linked = scratchDir("link", "a-b.o");
    rmSync(linked, { force: true });
    runTool("ld", ["-r", "-o", linked, compilePlimmix(programPath(a), { llcFlags: ["-O2"] }), compilePlimmix(programPath(b), { llcFlags: ["-O2"] })]);
    const compiled = inspect(linked);
    const mapA = checkMap(compiled, a);
    const mapB = checkMap(compiled, b);
    expect(mapA.labelOffset).not.toBe(mapB.labelOffset);
    expect(compiled.object.locate("a_entry").section).toBe(compiled.object.locate("b_entry").section);
  });

  it("makes two modules with the same source file name collide loudly at link time", () => {
    const a = program("link-a");
    const b = program("link-b");
    const clash = derivedSource(b, "ll-same-name", (text) => text.replace('source_filename = "link/b.c"', 'source_filename = "link/a.c"'));
    mkdirSync(scratchDir("link"), { recursive: true });
    const linked = scratchDir("link", "clash.o");
    const error = catchError(() =>
      runTool("ld", [
        "-r",
        "-o",
        linked,
        compilePlimmix(programPath(a), { llcFlags: ["-O2"] }),
        compileToObject(clash, { llcFlags: [`-load=${buildPlimmixPlugin()}`, "-O2"], cacheDir: scratchDir("objects") }),
      ]),
    );
    expect(error).toBeInstanceOf(ToolError);
    expect((error as Error).message).toMatch(/multiple definition of [`']_GC_MAP_link\/a\.c'/);
  });

  it("writes the same bytes through -filetype=asm (the label is quoted) and the assembler", () => {
    const entry = program("link-a");
    const assembly = scratchDir("asm", "link-a.s");
    const reassembled = scratchDir("asm", "link-a.o");
    mkdirSync(scratchDir("asm"), { recursive: true });
    runTool(findLlvmTool("llc"), ["-O2", `-load=${buildPlimmixPlugin()}`, "-filetype=asm", programPath(entry), "-o", assembly]);
    runTool(findLlvmTool("llvm-mc"), ["-triple=x86_64-pc-linux-gnu", "-filetype=obj", assembly, "-o", reassembled]);
    const direct = new ObjectFacts(compilePlimmix(programPath(entry), { llcFlags: ["-O2"] }));
    const viaAsm = new ObjectFacts(reassembled);
    expect(viaAsm.symbol(mapLabel(entry)).bind).toBe("GLOBAL");
    expect(viaAsm.sectionBytes(".data")).toEqual(direct.sectionBytes(".data"));
    expect(decodeV1Map(viaAsm, mapLabel(entry))).toEqual(decodeV1Map(direct, mapLabel(entry)));
  });
});

describe('the gc "ocaml" form of each program (llc\'s built-in frametable printer)', () => {
  it.each(PROGRAMS)("$name: same safe points, frame sizes and roots as the v1 map", (entry) => {
    const plugin = buildPlimmixPlugin();
    // With the plugin loaded, so that both forms are generated with the same llc options.
    const compileOcaml = (): string => compileToObject(ocamlSource(entry), { llcFlags: [`-load=${plugin}`, "-O2"], cacheDir: scratchDir("objects") });
    if (entry.ocaml === "rejected") {
      expect(catchError(compileOcaml)).toBeInstanceOf(ToolError);
      expect((catchError(compileOcaml) as Error).message).toMatch(/too large for the ocaml GC/);
      return;
    }
    const ocaml = inspect(compileOcaml());
    const frametable = ocaml.object.symbols.find((symbol) => /^caml.*__frametable$/.test(symbol.name));
    if (entry.ocaml === "none") {
      // No gc function with code is left once available_externally ones lose their gc (see ocamlSource).
      expect(frametable).toBeUndefined();
      return;
    }
    const plimmix = inspect(compilePlimmix(programPath(entry), { llcFlags: ["-O2"] }));
    // The gc name changes no instruction.
    expect(ocaml.object.sectionBytes(".text")).toEqual(plimmix.object.sectionBytes(".text"));

    expect(frametable).toBeDefined();
    const descriptors = decodeOcamlFrametable(ocaml.object, frametable?.name ?? "");
    const map = decodeV1Map(plimmix.object, mapLabel(entry));
    expect(descriptors.length).toBe(map.functions.reduce((sum, record) => sum + record.safepoints.length, 0));
    entry.functions.forEach((expected, index) => {
      const record = map.functions[index] as V1Function;
      const code = codeOf(plimmix, expected.name);
      const own = descriptors.filter(
        (descriptor) =>
          descriptor.returnAddress.section === code.section &&
          descriptor.returnAddress.offset > code.startOffset &&
          descriptor.returnAddress.offset <= code.startOffset + code.sizeBytes,
      );
      expect(
        offsetsIn(
          code,
          own.map((descriptor) => descriptor.returnAddress),
        ),
      ).toEqual(offsetsIn(code, record.safepoints));
      const frameBytes = record.frameWords * 8;
      const expectedOffsets = record.roots.map((root) => root.offsetBytes).sort((x, y) => x - y);
      for (const descriptor of own) {
        // OCaml: frame size in bytes (LLVM StackSize); offsets as LLVM computed them, i.e.
        // RBP-relative (negative) in frame-pointer functions.
        expect(descriptor.frameSizeBytes).toBe(frameBytes);
        if (expected.framePointer === true) expect(descriptor.liveOffsets.every((offset) => offset < 0)).toBe(true);
        const converted = descriptor.liveOffsets.map((offset) => (offset < 0 ? offset + frameBytes - 8 : offset));
        expect(converted.sort((x, y) => x - y)).toEqual(expectedOffsets);
      }
    });
  });

  it("is wrong where -O2 pushes stack arguments (llc without the plugin): why the plugin turns that off", () => {
    const entry = program("stack-args");
    const ocaml = inspect(compileToObject(ocamlSource(entry), { llcFlags: ["-O2"], cacheDir: scratchDir("objects") }));
    const code = codeOf(ocaml, "pass_nine");
    const pushing = code.callSites.find((site) => site.pushedArgBytes > 0);
    expect(pushing, "a call whose arguments are pushed").toBeDefined();
    const frametable = ocaml.object.symbols.find((symbol) => /^caml.*__frametable$/.test(symbol.name));
    const descriptor = decodeOcamlFrametable(ocaml.object, frametable?.name ?? "").find(
      (candidate) => candidate.returnAddress.offset === code.startOffset + (pushing?.returnOffset ?? -1),
    );
    // The table records the prologue's frame; SP at that return address is lower by the pushes.
    expect(descriptor?.frameSizeBytes).toBe(pushing?.baseBytes);
    expect(pushing?.frameSizeBytes).toBe((pushing?.baseBytes ?? 0) + (pushing?.pushedArgBytes ?? 0));
    expect(descriptor?.frameSizeBytes).not.toBe(pushing?.frameSizeBytes);
  });
});

/** A gc "plimmix" module the plugin must refuse, and the message it must give. */
interface Rejected {
  name: string;
  ir: string;
  llcFlags?: string[];
  message: RegExp;
}

const PRELUDE = `
declare void @llvm.gcroot(i8**, i8*)
declare i8* @alloc(i64)
declare void @use(i8*)
`;

/** A gc function with one root of metadata `meta`, a call and the given attributes/linkage. */
function gcFunction(options: { meta?: string; linkage?: string; cc?: string; extraAlloca?: string; attributes?: string } = {}): string {
  return `
define ${options.linkage ?? ""} ${options.cc ?? ""} i8* @f(i8* %p) ${options.attributes ?? ""} gc "plimmix" {
entry:
  %slot = alloca i8*, align 8
  ${options.extraAlloca ?? ""}
  call void @llvm.gcroot(i8** %slot, i8* ${options.meta ?? "null"})
  store i8* %p, i8** %slot
  %x = call i8* @alloc(i64 8)
  %y = load i8*, i8** %slot
  call void @use(i8* %y)
  ret i8* %x
}`;
}

const REJECTED: Rejected[] = [
  {
    name: "a root in a realigned frame",
    ir: gcFunction({
      extraAlloca: "%wide = alloca <16 x float>, align 64\n  %w8 = bitcast <16 x float>* %wide to i8*\n  call void @use(i8* %w8)",
    }),
    message: /plimmix GC: function 'f', root #0: the frame is realigned/,
  },
  {
    name: "metadata naming no root type",
    ir: `@FOO_meta = internal constant i8 0\n${gcFunction({ meta: "@FOO_meta" })}`,
    message: /gcroot metadata global 'FOO_meta' names 0 root types/,
  },
  {
    name: "metadata naming two root types",
    ir: `@POINTER_TRAIT_meta = internal constant i8 0\n${gcFunction({ meta: "@POINTER_TRAIT_meta" })}`,
    message: /'POINTER_TRAIT_meta' names 2 root types/,
  },
  {
    name: "call-frame optimization switched back on",
    ir: gcFunction(),
    llcFlags: ["-no-x86-call-frame-opt=false"],
    message: /-no-x86-call-frame-opt is off/,
  },
  {
    name: "a declared global root",
    ir: `@ext = external global i8*, !plimmix.root !0\n!0 = !{}\n${gcFunction()}`,
    message: /global root 'ext' is only declared/,
  },
  {
    name: "a global root that is not one 8-byte slot",
    ir: `@small = global i32 0, !plimmix.root !0\n!0 = !{}\n${gcFunction()}`,
    message: /global root 'small' is 4 bytes/,
  },
  {
    name: "a linkonce_odr gc function",
    ir: gcFunction({ linkage: "linkonce_odr" }),
    message: /function 'f' is in a COMDAT or has weak\/linkonce linkage/,
  },
  {
    name: "a tailcc gc function",
    ir: gcFunction({ cc: "tailcc" }),
    message: /function 'f' uses calling convention 18/,
  },
];

describe("what the plugin refuses (llc fails, naming the function and the reason)", () => {
  it.each(REJECTED)("$name", ({ name, ir, llcFlags, message }) => {
    const path = scratchDir("rejected", `${name.replace(/[^a-z0-9]+/gi, "-")}.ll`);
    writeFileAtomic(path, `source_filename = "rejected.c"\n${PRELUDE}\n${ir}\n`);
    const error = catchError(() =>
      runTool(findLlvmTool("llc"), [`-load=${buildPlimmixPlugin()}`, "-O2", ...(llcFlags ?? []), "-filetype=obj", path, "-o", "/dev/null"]),
    );
    expect(error).toBeInstanceOf(ToolError);
    expect((error as Error).message).toMatch(message);
  });
});
