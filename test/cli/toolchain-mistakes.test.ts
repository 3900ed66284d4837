// Toolchain mistakes a language implementer makes (issue 17 item 9): each ends in one line naming
// the flag, or a warning where the tools would silently build an object without stack maps.
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../support/run-cli.js";
import { findLlvmTool, repoRoot, runTool } from "../../src/toolchain/llvm-toolchain.js";
import { gcStrategiesOf } from "../../src/toolchain/gc-strategy-check.js";

const PROGRAMS = join(repoRoot(), "test", "native-runtime", "programs");
const PLIMMIX_PROGRAM = join(PROGRAMS, "plimmix-list.ll");
const STATEPOINT_PROGRAM = join(PROGRAMS, "list-tree.ll");
const scratch = mkdtempSync(join(tmpdir(), "rootwalk-toolchain-mistakes-"));

describe("GC strategy against the compile mode", () => {
  it("reads each define's strategy, quoted names included", () => {
    const ir = 'define i64 @f() gc "plimmix" {\n}\ndefine void @"a b"(i8* %x) #0 gc "statepoint-example" {\n}\ndeclare void @g() gc "ocaml"\n';
    expect([...gcStrategiesOf(ir)]).toEqual([
      ["plimmix", "f"],
      ["statepoint-example", '"a b"'],
    ]);
  });

  it('run of a gc "plimmix" module without --plimmix: one line naming the flag, exit 1 (not opt\'s stack dump)', async () => {
    const r = await run("run", PLIMMIX_PROGRAM, "--progress=0");
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/gc "plimmix" \(function @cons\) without --plimmix, expected add --plimmix/);
    expect(r.stderr).not.toMatch(/LLVM ERROR|Stack dump/);
    const c = await run("compile", "--statepoint", PLIMMIX_PROGRAM, "-o", join(scratch, "p.o"));
    expect(c.code).toBe(1);
    expect(c.stderr).toMatch(/add --plimmix/);
  });

  it("a bitcode module: opt's unsupported-GC abort becomes the same one line", async () => {
    const bitcode = join(scratch, "plimmix-list.bc");
    runTool(findLlvmTool("llvm-as"), [PLIMMIX_PROGRAM, "-o", bitcode]);
    const r = await run("run", bitcode, "--progress=0");
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(/^rootwalk run: \S+plimmix-list\.bc: found gc "plimmix", which (opt|llc)\S* does not know here, expected add --plimmix$/);
  });

  it('compile without --statepoint of gc "statepoint-example" code warns that the object has no stack maps', async () => {
    const output = join(scratch, "list-tree.o");
    const r = await run("compile", STATEPOINT_PROGRAM, "-o", output);
    expect(r.code).toBe(0);
    expect(existsSync(output)).toBe(true);
    expect(r.stderr).toMatch(
      /warning: function @cons uses gc "statepoint-example" but --statepoint was not given: the object has no stack maps \(add --statepoint\)/,
    );
    const withFlag = await run("compile", "--statepoint", STATEPOINT_PROGRAM, "-o", output);
    expect(withFlag.stderr).toBe("");
  });

  it("a module naming @__LLVM_StackMaps with no GC strategy: llc emits no stack map, said before the load fails", async () => {
    const source = join(scratch, "no-strategy.ll");
    writeFileSync(
      source,
      "declare void @gc_init(i8*)\n@__LLVM_StackMaps = external global i8\ndefine i64 @rw_main() {\n  call void @gc_init(i8* @__LLVM_StackMaps)\n  ret i64 7\n}\n",
    );
    const r = await run("compile", "--statepoint", source, "-o", join(scratch, "no-strategy.o"));
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      /no-strategy\.ll: warning: no function has a GC strategy \(gc "statepoint-example"\): llc emits no stack map for it and @__LLVM_StackMaps stays undefined/,
    );
  });

  it("--stress 100 (a space) in run and sim: the spelling with '='", async () => {
    for (const command of [["run", STATEPOINT_PROGRAM], ["sim"]]) {
      const r = await run(...command, "--stress", "100");
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toMatch(/^rootwalk( run)?: --stress takes its count after '=': --stress=100$/);
    }
    // A bare --stress before a program is still a bare --stress.
    expect((await run("sim", "--stress", "--scale=0.001", "--workload", "binary-trees", "--json")).code).toBe(0);
  });
});
