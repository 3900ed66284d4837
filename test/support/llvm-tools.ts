import { findLlvmTool, runTool } from "../../src/toolchain/llvm-toolchain.js";

/**
 * Thin wrappers around the LLVM 14 inspection tools, returning their text output. Compilation
 * itself (opt, llc, caching) lives in src/toolchain/llvm-toolchain.ts; the `.ll` corpus and its
 * compile helper in test/ll/corpus.ts.
 */

export { compileToObject, linkSharedLibrary, findLlvmTool, runTool } from "../../src/toolchain/llvm-toolchain.js";

/** `llvm-readobj --stackmap <obj>`: the reference decoding of the (first) stack map blob. */
export function readobjStackmap(objPath: string): string {
  return runTool(findLlvmTool("llvm-readobj"), ["--stackmap", objPath]);
}

/** `llvm-objdump -d -r --no-show-raw-insn <obj>`: AT&T disassembly with relocations inline. */
export function objdumpDisassembly(objPath: string): string {
  return runTool(findLlvmTool("llvm-objdump"), ["-d", "-r", "--no-show-raw-insn", objPath]);
}

/** Section name -> size in bytes, from `llvm-objdump -h`. */
export function sectionSizes(objPath: string): Map<string, number> {
  const text = runTool(findLlvmTool("llvm-objdump"), ["-h", objPath]);
  const sizes = new Map<string, number>();
  // "  1 .text         0000008b 0000000000000000 TEXT"
  for (const match of text.matchAll(/^\s*\d+\s+(\S+)\s+([0-9a-f]+)\s+[0-9a-f]+/gm)) {
    sizes.set(match[1] as string, Number.parseInt(match[2] as string, 16));
  }
  return sizes;
}

/** One relocation as `llvm-readobj -r` prints it. */
export interface Relocation {
  /** Offset inside the section the relocations apply to. */
  offset: number;
  type: string;
  /** Symbol name, or a section name (".text") for relocations against a section. */
  symbol: string;
  addend: bigint;
}

/** Relocation section name (".rela.llvm_stackmaps") -> its relocations, from `llvm-readobj -r`. */
export function readobjRelocations(objPath: string): Map<string, Relocation[]> {
  const text = runTool(findLlvmTool("llvm-readobj"), ["-r", objPath]);
  const sections = new Map<string, Relocation[]>();
  let current: Relocation[] | undefined;
  for (const line of text.split("\n")) {
    const section = /^\s*Section \(\d+\) (\S+) \{$/.exec(line);
    if (section !== null) {
      current = [];
      sections.set(section[1] as string, current);
      continue;
    }
    const relocation = /^\s*0x([0-9A-Fa-f]+) (\S+) (\S+) 0x([0-9A-Fa-f]+)$/.exec(line);
    if (relocation !== null && current !== undefined) {
      current.push({
        offset: Number.parseInt(relocation[1] as string, 16),
        type: relocation[2] as string,
        symbol: relocation[3] as string,
        addend: BigInt.asIntN(64, BigInt(`0x${relocation[4] as string}`)),
      });
    }
  }
  return sections;
}
