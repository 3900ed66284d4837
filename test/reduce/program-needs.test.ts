import { describe, expect, it } from "vitest";
import { keepsNeeds, programNeeds } from "../../src/cli/reduce/program-needs.js";

/* What a reduced candidate must keep to be a program (src/cli/reduce/program-needs.ts). */

const GCROOT = `@"_GC_MAP_a-b" = external global i8
declare i8* @gc_alloc(i64, i64)
define i64 @rw_main() gc "plimmix" {
entry:
  call void @gc_init(i8* @"_GC_MAP_a-b")
  ret i64 0
}
`;

describe("programNeeds / keepsNeeds", () => {
  it("reads the strategy and the map symbol; llvm-reduce's unquoted spelling and opaque pointers keep them", () => {
    const needs = programNeeds(GCROOT);
    expect(needs).toEqual({ strategy: "plimmix", mapSymbol: "_GC_MAP_a-b", runtimeArity: { gc_alloc: 2 } });
    if ("missing" in needs) throw new Error("unreachable");
    expect(keepsNeeds(GCROOT, needs)).toBe(true);
    expect(keepsNeeds(GCROOT.replace(/@"_GC_MAP_a-b"\)/, "@_GC_MAP_a-b)").replace("i8*", "ptr"), needs)).toBe(true);
  });

  it("a candidate without rw_main, with another strategy, or without gc_init's symbol is not a program", () => {
    const needs = programNeeds(GCROOT);
    if ("missing" in needs) throw new Error("unreachable");
    expect(keepsNeeds(GCROOT.replace("@rw_main", "@other"), needs)).toBe(false);
    expect(keepsNeeds(GCROOT.replace('gc "plimmix"', 'gc "statepoint-example"'), needs)).toBe(false);
    expect(keepsNeeds(GCROOT.replace('i8* @"_GC_MAP_a-b"', "i8* null"), needs)).toBe(false);
    expect(keepsNeeds(GCROOT.replace(/ {2}call void @gc_init[^\n]*\n/, ""), needs)).toBe(false);
    // The runtime's functions keep their parameters (a declaration dropped with its calls is fine).
    expect(keepsNeeds(GCROOT.replace("@gc_alloc(i64, i64)", "@gc_alloc()"), needs)).toBe(false);
    expect(keepsNeeds(GCROOT.replace(/declare i8\* @gc_alloc[^\n]*\n/, ""), needs)).toBe(true);
  });

  it("names what an original program lacks, for the one-line refusal", () => {
    expect(programNeeds("define i64 @f() {\n  ret i64 0\n}\n")).toEqual({ missing: "no definition of @rw_main" });
    expect(programNeeds(GCROOT.replace(' gc "plimmix"', ""))).toMatchObject({ missing: expect.stringContaining("no GC strategy") });
    expect(programNeeds(GCROOT.replace('i8* @"_GC_MAP_a-b"', "i8* null"))).toMatchObject({ missing: expect.stringContaining("gc_init") });
  });
});
