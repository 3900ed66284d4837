import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AARCH64 } from "../../src/arch/aarch64.js";
import { findLlvmTool } from "../../src/toolchain/llvm-toolchain.js";

/*
 * The AArch64 description's machine facts against the AArch64 toolchain: the C library's
 * ucontext_t and elf_prstatus layouts (aarch64-linux-gnu-gcc, run under qemu-aarch64), and the
 * sigreturn trampoline's bytes as LLVM's assembler encodes them.
 */

const LAYOUT_C = `#include <stdio.h>
#include <stddef.h>
#include <ucontext.h>
#include <sys/procfs.h>
int main(void) {
  printf("%zu %zu %zu\\n", offsetof(ucontext_t, uc_mcontext.regs), offsetof(ucontext_t, uc_mcontext.sp), offsetof(ucontext_t, uc_mcontext.pc));
  printf("%zu %zu\\n", offsetof(struct elf_prstatus, pr_reg), sizeof(elf_gregset_t) / 8);
  return 0;
}
`;

describe("the AArch64 description", () => {
  it("has the C library's signal-context and core-register layouts", () => {
    const dir = mkdtempSync(join(tmpdir(), "rootwalk-a64-layout-"));
    writeFileSync(join(dir, "layout.c"), LAYOUT_C);
    execFileSync("aarch64-linux-gnu-gcc", ["-static", join(dir, "layout.c"), "-o", join(dir, "layout")]);
    const [regs, sp, pc, prReg, prRegCount] = execFileSync("qemu-aarch64", [join(dir, "layout")], { encoding: "utf8" })
      .split(/\s+/)
      .map(Number);
    const signal = AARCH64.signalContext;
    expect(signal.registersOffsetBytes).toBe(regs);
    expect(signal.registersOffsetBytes + signal.spIndex * AARCH64.wordBytes).toBe(sp);
    expect(signal.registersOffsetBytes + signal.pcIndex * AARCH64.wordBytes).toBe(pc);
    expect(signal.calleeSavedIndex.map((n) => `x${n}`)).toEqual([...AARCH64.calleeSavedNames]);
    expect(AARCH64.coreRegisters.offsetBytes).toBe(prReg);
    expect(AARCH64.coreRegisters.names.length).toBe(prRegCount);
    expect(AARCH64.coreRegisters.names.indexOf(AARCH64.coreRegisters.sp)).toBe(signal.spIndex);
  });

  it("recognises the rt_sigreturn trampoline by the bytes llvm-mc encodes for it", () => {
    const text = execFileSync(findLlvmTool("llvm-mc"), ["-triple=aarch64", "-show-encoding"], { input: "mov x8, #139\nsvc #0\n", encoding: "utf8" });
    const bytes = [...text.matchAll(/encoding: \[([^\]]+)\]/g)].flatMap((m) => m[1]!.split(",").map(Number));
    expect(AARCH64.signalContext.sigreturnCode).toEqual(bytes);
  });

  it("names registers as aadwarf64 numbers them (0-30 x0-x30, 31 sp, 64-95 v0-v31)", () => {
    expect([0, 19, 29, 30, 31, 64, 95, 254, 40].map(AARCH64.registerName)).toEqual(["x0", "x19", "x29", "x30", "sp", "v0", "v31", "cfa", "R#40"]);
  });
});
