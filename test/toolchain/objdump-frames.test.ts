import { describe, expect, it } from "vitest";
import { parseObjdumpFrames, type ObjdumpFunction } from "../support/objdump-frames.js";

/**
 * The frame-size oracle on hand-written disassembly (the shape `llvm-objdump -d -r
 * --no-show-raw-insn` prints), one case per rule. corpus.test.ts checks it against LLVM's own
 * StackSize on real objects.
 */

function disassembly(functions: Record<string, string[]>, start = 0): string {
  const lines = ["", "x.o:\tfile format elf64-x86-64", "", "Disassembly of section .text:", ""];
  let address = start;
  for (const [name, instructions] of Object.entries(functions)) {
    lines.push(`${address.toString(16).padStart(16, "0")} <${name}>:`);
    for (const instruction of instructions) {
      if (instruction.startsWith("RELOC ")) {
        lines.push(`\t\t${(address - 4).toString(16).padStart(16, "0")}:  ${instruction.slice(6)}`);
        continue;
      }
      // Every instruction is 4 bytes long here, except where a test needs addresses.
      lines.push(`${address.toString(16).padStart(8, " ")}:      \t${instruction.replace(" ", "\t")}`);
      address += 4;
    }
    lines.push("");
  }
  return lines.join("\n");
}

function only(text: string, sectionBytes?: number): ObjdumpFunction {
  const functions = parseObjdumpFrames(text, new Map(sectionBytes === undefined ? [] : [[".text", sectionBytes]]));
  expect(functions.size).toBe(1);
  return [...functions.values()][0] as ObjdumpFunction;
}

describe("parseObjdumpFrames", () => {
  it("sums prologue pushes and sub, and gives call sites their return offsets", () => {
    const fn = only(
      disassembly({
        f: [
          "pushq %r14",
          "pushq %rbx",
          "subq $24, %rsp",
          "callq 0x10 <f+0x10>",
          "RELOC R_X86_64_PLT32\tg-0x4",
          "addq $24, %rsp",
          "popq %rbx",
          "popq %r14",
          "retq",
        ],
      }),
    );
    expect(fn.callSites).toEqual([{ callOffset: 12, returnOffset: 16, frameSizeBytes: 40, baseBytes: 40, pushedArgBytes: 0, target: "g" }]);
    expect(fn.frameAt.get(0)?.frameSizeBytes).toBe(0);
    expect(fn.frameAt.get(24)?.frameSizeBytes).toBe(8); // before the last pop
    expect(fn.frameAt.get(28)?.frameSizeBytes).toBe(0); // at retq
    expect(fn.framePointer).toBe(false);
    expect(fn.dynamic).toBe(false);
  });

  it("counts pushes after the prologue as outgoing arguments, released by the next add", () => {
    const fn = only(
      disassembly({
        f: [
          "pushq %rbx",
          "movq %rdi, %rbx",
          "pushq $10",
          "pushq %rax",
          "callq 0x14 <f+0x14>",
          "addq $16, %rsp",
          "pushq (%rax)",
          "subq $8, %rsp",
          "callq 0x24 <f+0x24>",
          // The caller's cleanup merged into the epilogue: 16 bytes of arguments, 0 of frame.
          "addq $16, %rsp",
          "popq %rbx",
          "retq",
        ],
      }),
    );
    expect(fn.callSites.map((site) => [site.frameSizeBytes, site.baseBytes, site.pushedArgBytes])).toEqual([
      [24, 8, 16],
      [24, 8, 16],
    ]);
    expect(fn.frameAt.get(40)?.frameSizeBytes).toBe(8); // popq %rbx
    expect(fn.frameAt.get(44)?.frameSizeBytes).toBe(0); // retq
  });

  it("handles negative immediates and lea adjustments", () => {
    const fn = only(
      disassembly({
        f: ["addq $-128, %rsp", "leaq -16(%rsp), %rsp", "callq 0xc <f+0xc>", "leaq 144(%rsp), %rsp", "retq"],
      }),
    );
    expect(fn.callSites[0]?.frameSizeBytes).toBe(144);
    expect(fn.frameAt.get(16)?.frameSizeBytes).toBe(0);
  });

  it("follows branches: a shrink-wrapped prologue after an early exit", () => {
    const fn = only(
      disassembly({
        f: [
          "testq %rsi, %rsi",
          "je 0x20 <f+0x20>",
          "pushq %rbx",
          "subq $16, %rsp",
          "callq 0x14 <f+0x14>",
          "addq $16, %rsp",
          "popq %rbx",
          "retq",
          "xorl %eax, %eax", // 0x20: the early exit, no frame
          "retq",
        ],
      }),
    );
    expect(fn.callSites[0]?.frameSizeBytes).toBe(24);
    expect(fn.callSites[0]?.pushedArgBytes).toBe(0);
    expect(fn.frameAt.get(0x20)?.frameSizeBytes).toBe(0);
    expect(fn.conflicts).toEqual([]);
  });

  it("simulates blocks reached only indirectly from the post-prologue state", () => {
    const fn = only(
      disassembly({
        f: [
          "pushq %rbx",
          "callq 0x8 <f+0x8>",
          "jmpq *(,%rax,8)",
          "popq %rbx", // 0xc
          "retq",
          "movl $1, %edi", // 0x14: a jump-table target or landing pad
          "callq 0x1c <f+0x1c>",
          "jmp 0xc <f+0xc>",
        ],
      }),
    );
    expect(fn.callSites.map((site) => site.frameSizeBytes)).toEqual([8, 8]);
  });

  it("ends a path at a tail call and at ud2", () => {
    const fn = only(
      disassembly({
        f: ["pushq %rax", "callq 0x8 <f+0x8>", "popq %rax", "jmp 0x10 <f+0x10>", "RELOC R_X86_64_PLT32\tother-0x4", "ud2", "callq 0x18 <f+0x18>"],
      }),
    );
    // 0x10 and 0x14 are unreachable by flow: they get the post-prologue state (8).
    expect(fn.callSites.map((site) => site.frameSizeBytes)).toEqual([8, 8]);
    expect(fn.frameAt.get(0x10)?.frameSizeBytes).toBe(8);
  });

  it("marks paths that disagree as conflicts with no size", () => {
    const fn = only(
      disassembly({
        f: ["pushq %rbx", "je 0x10 <f+0x10>", "pushq $1", "nop", "callq 0x14 <f+0x14>", "retq"],
      }),
    );
    expect(fn.conflicts).toEqual([0x10]);
    expect(fn.callSites[0]?.frameSizeBytes).toBeUndefined();
  });

  it("detects frame pointers and dynamic frames", () => {
    const withFp = only(disassembly({ f: ["pushq %rbp", "movq %rsp, %rbp", "pushq %rbx", "pushq %rax", "callq 0x14 <f+0x14>", "retq"] }));
    expect(withFp.framePointer).toBe(true);
    expect(withFp.callSites[0]?.frameSizeBytes).toBe(24);
    for (const adjust of ["subq %rax, %rsp", "movq %rbx, %rsp", "leaq -24(%rbp), %rsp", "andq $-64, %rsp", "leave"]) {
      const fn = only(disassembly({ f: ["pushq %rbp", "movq %rsp, %rbp", adjust, "callq 0x10 <f+0x10>", "retq"] }));
      expect(fn.dynamic, adjust).toBe(true);
      expect(fn.callSites[0]?.frameSizeBytes, adjust).toBeUndefined();
    }
    const notFp = only(disassembly({ f: ["pushq %rbx", "movq %rsp, %rbp", "callq 0xc <f+0xc>", "retq"] }));
    expect(notFp.framePointer).toBe(false);
  });

  it("ignores instructions that only read %rsp or write memory below it", () => {
    const fn = only(
      disassembly({
        f: ["pushq %rax", "movq %rdi, (%rsp)", "cmpq %rax, %rsp", "movq %rsp, %rdi", "callq 0x14 <f+0x14>", "popq %rcx", "retq"],
      }),
    );
    expect(fn.dynamic).toBe(false);
    expect(fn.callSites[0]?.frameSizeBytes).toBe(8);
  });

  it("uses the section size for a call that ends the section", () => {
    const fn = only(disassembly({ f: ["pushq %rax", "callq 0x8 <abort>"] }), 9);
    expect(fn.callSites[0]?.returnOffset).toBe(9);
    expect(fn.callSites[0]?.target).toBe("abort");
    expect(fn.sizeBytes).toBe(9);
  });

  it("reports function start offsets and sizes", () => {
    const functions = parseObjdumpFrames(disassembly({ a: ["retq", "nop"], b: ["pushq %rax", "popq %rax", "retq"] }, 0x40));
    expect([...functions.values()].map((fn) => [fn.name, fn.section, fn.startOffset])).toEqual([
      ["a", ".text", 0x40],
      ["b", ".text", 0x48],
    ]);
    expect(functions.get("a")?.sizeBytes).toBe(8);
  });
});
