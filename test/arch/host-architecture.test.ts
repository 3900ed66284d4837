import { describe, expect, it } from "vitest";
import { AARCH64 } from "../../src/arch/aarch64.js";
import { hostArchitecture } from "../../src/arch/host-architecture.js";
import { X86_64 } from "../../src/arch/x86-64.js";
import { InvalidArgumentError } from "../../src/errors.js";

describe("the architecture rootwalk runs on (process.arch)", () => {
  it("is x86-64 under Node's x64 and AArch64 under its arm64 (the emulated Node's)", () => {
    expect(hostArchitecture("x64")).toBe(X86_64);
    expect(hostArchitecture("arm64")).toBe(AARCH64);
  });

  it("refuses any other machine by name in one line", () => {
    expect(() => hostArchitecture("riscv64")).toThrow(InvalidArgumentError);
    expect(() => hostArchitecture("riscv64")).toThrow(
      "Node's process.arch: found riscv64, expected x64 (x86-64) or arm64 (AArch64): rootwalk runs programs on x86-64 and AArch64 Linux only",
    );
  });
});
