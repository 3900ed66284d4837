import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { AARCH64 } from "../../src/arch/aarch64.js";
import { hostArchitecture } from "../../src/arch/host-architecture.js";
import { X86_64 } from "../../src/arch/x86-64.js";
import { programInputKind } from "../../src/native/program-input.js";
import { compileProgram } from "../../src/toolchain/compile-program.js";
import { runTool } from "../../src/toolchain/llvm-toolchain.js";
import { targetGcc } from "../../src/toolchain/target-gcc.js";
import { NATIVE_PROGRAMS } from "../native-programs/programs.js";
import { irSource } from "../support/ir-source.js";

/*
 * `rootwalk run` takes objects and shared libraries built for the machine it runs on
 * (src/arch/host-architecture.ts), and refuses another machine's in one line naming it.
 */

const scratch = mkdtempSync(join(tmpdir(), "rw-program-input-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const entry = NATIVE_PROGRAMS.find((p) => p.name === "sp-invoke")!;
const host = hostArchitecture();
const other = host === X86_64 ? AARCH64 : X86_64;

async function objectFor(target: typeof host): Promise<string> {
  return compileProgram(irSource(entry.files[0]!), { mode: "statepoint", target });
}

describe("programs for the machine rootwalk runs on", () => {
  it("takes this machine's object and shared library", async () => {
    const object = await objectFor(host);
    expect(programInputKind(object)).toBe("object");
    const library = join(scratch, "prog.so");
    runTool(targetGcc(host), ["-shared", "-Wl,-z,notext", "-o", library, object]);
    expect(programInputKind(library)).toBe("shared");
  });

  it("refuses another machine's object by name, in one line", async () => {
    const object = await objectFor(other);
    const machine = other === AARCH64 ? "EM_AARCH64 (183)" : "EM_X86_64 (62)";
    expect(() => programInputKind(object)).toThrow(
      `program: found ${object}, expected PROGRAM.ll, an ${host.name} ELF object (.o) or shared library (.so); this ELF file is for ${machine}, not ${host.name}`,
    );
  });
});
