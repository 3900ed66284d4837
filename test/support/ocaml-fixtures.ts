import { readFileSync } from "node:fs";
import { findLlvmTool, runTool } from "../../src/toolchain/llvm-toolchain.js";
import { objdumpDisassembly } from "./llvm-tools.js";
import { ocamlDescriptorSizeBytes } from "../../src/stackmap/ocaml-frametable.js";
import { compileFormatsLl } from "./compile-formats.js";

/**
 * The OCaml frame-table sources of ll/ and oracles that read the compiled objects with LLVM's
 * own tools, independently of rootwalk's decoders.
 */
export const OCAML_SOURCES = ["ocaml-basic.ll", "ocaml-frame-pointer.ll", "ocaml-stack-args.ll", "ocaml-big-frame.ll"] as const;

/** Functions of the sources that have no gc strategy (not in the table). */
export const NOT_MANAGED = new Set(["not_managed"]);

export interface OcamlFixture {
  source: string;
  path: string;
  bytes: Uint8Array;
  /** `caml<M>` module name llc derives from the file name. */
  module: string;
}

export function ocamlFixture(source: string): OcamlFixture {
  const path = compileFormatsLl(source);
  const stem = source.slice(0, source.indexOf("."));
  return { source, path, bytes: readFileSync(path), module: stem[0]!.toUpperCase() + stem.slice(1) };
}

/** `nm` of the object: symbol name -> value. */
export function nmSymbols(path: string): Map<string, number> {
  const text = runTool(findLlvmTool("llvm-nm"), [path]);
  const symbols = new Map<string, number>();
  for (const match of text.matchAll(/^([0-9a-f]{16}) \S (.+)$/gm)) symbols.set(match[2]!, Number.parseInt(match[1]!, 16));
  return symbols;
}

/** The bytes `llvm-objdump -s -j <section>` prints. */
export function objdumpSectionBytes(path: string, section: string): Uint8Array {
  const text = runTool(findLlvmTool("llvm-objdump"), ["-s", "-j", section, path]);
  const bytes: number[] = [];
  for (const match of text.matchAll(/^ ([0-9a-f]{4,}) ((?:[0-9a-f]{2,8} ){1,4})/gm)) {
    for (const group of match[2]!.trim().split(" ")) {
      for (let i = 0; i < group.length; i += 2) bytes.push(Number.parseInt(group.slice(i, i + 2), 16));
    }
  }
  return Uint8Array.from(bytes);
}

/**
 * The slots each function null-initialises in its prologue (`movq $0, N(%rsp)` / `N(%rbp)`):
 * LLVM's gcroot lowering stores null into every root before anything else, so these are the
 * roots' slots, read from the machine code. Function start offset -> { base, offsets }.
 */
export function nullInitialisedSlots(path: string): Map<number, { base: "rsp" | "rbp"; offsets: number[] }> {
  const slots = new Map<number, { base: "rsp" | "rbp"; offsets: number[] }>();
  let current: { base: "rsp" | "rbp"; offsets: number[] } | undefined;
  for (const line of objdumpDisassembly(path).split("\n")) {
    const fn = /^([0-9a-f]+) <.+>:$/.exec(line);
    if (fn !== null) {
      current = { base: "rsp", offsets: [] };
      slots.set(Number.parseInt(fn[1]!, 16), current);
      continue;
    }
    const init = /\tmovq\t\$0, (-?\d+)?\(%(rsp|rbp)\)$/.exec(line);
    if (init !== null && current !== undefined) {
      current.base = init[2] as "rsp" | "rbp";
      current.offsets.push(Number(init[1] ?? 0));
    }
  }
  return slots;
}

export interface OcamlDescriptorSpec {
  returnAddress: number;
  frameSize: number;
  /** Raw u16 values; negative numbers are stored as two's complement. */
  live: readonly number[];
}

/** Writes a table exactly as OcamlGCPrinter does (u16 count, align 8, descriptors aligned to 8). */
export function encodeOcaml(descriptors: readonly OcamlDescriptorSpec[], count = descriptors.length): Uint8Array {
  const size = 8 + descriptors.reduce((n, d) => n + ocamlDescriptorSizeBytes(d.live.length), 0);
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  view.setUint16(0, count, true);
  let at = 8;
  for (const d of descriptors) {
    view.setBigUint64(at, BigInt(d.returnAddress), true);
    view.setUint16(at + 8, d.frameSize, true);
    view.setUint16(at + 10, d.live.length, true);
    d.live.forEach((off, k) => view.setUint16(at + 12 + 2 * k, off & 0xffff, true));
    at += ocamlDescriptorSizeBytes(d.live.length);
  }
  return bytes;
}
