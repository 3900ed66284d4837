import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { vdsoImageOfThisProcess } from "../../src/native/vdso-image.js";
import { findLlvmTool, runTool } from "../../src/toolchain/llvm-toolchain.js";
import { ModuleMap } from "../../src/unwind/module-map.js";

/*
 * The native runtime's module map (built from /proc/self/maps at each stop) includes the vDSO,
 * whose image is copied from this process's memory: its symbols and CFI are what llvm-nm and
 * llvm-dwarfdump read from the same bytes written to a file.
 */

const scratch = mkdtempSync(join(tmpdir(), "rootwalk-vdso-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the vDSO in a live process's module map", () => {
  const modules = ModuleMap.fromMappings(ModuleMap.parseProcMaps(readFileSync("/proc/self/maps", "utf8")), { pseudoImage: vdsoImageOfThisProcess });
  const vdso = modules.modules.find((m) => m.path === "[vdso]");

  it("is a module with an ELF image read from memory", () => {
    expect(vdso).toBeDefined();
    expect(vdso!.elf().programHeaders.length).toBeGreaterThan(0);
  });

  it("finds each function's CFI where llvm-nm and llvm-dwarfdump put it", () => {
    const image = join(scratch, "vdso.so");
    writeFileSync(image, vdsoImageOfThisProcess({ start: vdso!.start, end: vdso!.end, fileOffset: 0, path: "[vdso]" })!);
    const symbols = runTool(findLlvmTool("llvm-nm"), ["-D", "--defined-only", image])
      .split("\n")
      .map((line) => /^([0-9a-f]+) [Tt] ([^@\s]+)/.exec(line)) // names carry a version: @@LINUX_2.6
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ name: m[2]!, link: Number.parseInt(m[1]!, 16) }));
    const fdeStarts = new Set(
      [...runTool(findLlvmTool("llvm-dwarfdump"), ["--eh-frame", image]).matchAll(/FDE cie=\S+ pc=([0-9a-f]+)\.\.\./g)].map((m) => Number.parseInt(m[1]!, 16)),
    );
    const withFde = symbols.filter((s) => fdeStarts.has(s.link));
    expect(withFde.map((s) => s.name)).toContain("__vdso_clock_gettime");
    for (const s of withFde) {
      const address = vdso!.loadBias + s.link;
      expect(vdso!.functionStart(address + 1), s.name).toBe(address);
      // At a function's first instruction the return address was just pushed: CFA = rsp + 8.
      const row = vdso!.rowAt(address)!;
      expect([row.cfaRegister, row.cfaOffset], s.name).toEqual([7, 8]);
    }
    expect(vdso!.loadBias).toBe(vdso!.start);
  });
});
