import { describe, expect, it } from "vitest";
import { run } from "../support/run-cli.js";
import { assembleFormatsAsm, compileFormatsLl, linkFormatsShared } from "../support/compile-formats.js";
import { compileCorpusEntry, corpusEntry } from "../ll/corpus.js";

type Dumped = { maps: { format: string; safepoints: { roots: { type?: string }[]; frameSizeBytes: number | null; kind: string }[] }[] };

describe("rootwalk dump detects every format", () => {
  const ocaml = compileFormatsLl("ocaml-stack-args.ll");
  const plimmix = assembleFormatsAsm("plimmix-handwritten.s");
  const llvm = compileCorpusEntry(corpusEntry("stack-args"));

  it("json: llvm-v3, plimmix-v1 and ocaml maps side by side, typed roots for the gcroot formats", async () => {
    const { code, stdout, stderr } = await run("dump", llvm, plimmix, ocaml, "--format", "json");
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const out = JSON.parse(stdout) as Dumped;
    expect(out.maps.map((m) => m.format)).toEqual(["llvm-v3", "plimmix-v1", "ocaml"]);
    const gcroot = out.maps.slice(1).flatMap((m) => m.safepoints);
    expect(gcroot.length).toBeGreaterThan(0);
    expect(gcroot.every((s) => s.kind === "gcroot" && s.roots.every((r) => typeof r.type === "string"))).toBe(true);
    expect(new Set(out.maps[1]!.safepoints.flatMap((s) => s.roots.map((r) => r.type)))).toContain("trait");
  });

  it("a library linking several plimmix modules dumps each map", async () => {
    const lib = linkFormatsShared([plimmix]);
    const { code, stdout } = await run("dump", lib, "--format", "json");
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as Dumped).maps.map((m) => m.format)).toEqual(["plimmix-v1"]);
  });

  it("text: gcroot safepoints with frame sizes and typed roots", async () => {
    const { stdout } = await run("dump", ocaml);
    expect(stdout).toMatch(/ocaml blob #0/);
    expect(stdout).toMatch(/gcroot\s+frame \d+ bytes\s+cfa sp\+\d+\s+\(differs from stack size \d+: pushed arguments\)/);
    expect(stdout).toMatch(/roots: \[cfa-\d+\] pointer/);
  });
});
