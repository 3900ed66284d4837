import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkIrProgram } from "../../src/check/ir-check.js";
import { checkBinary } from "../../src/check/binary-check.js";
import { COLLECTING_RUNTIME_ENTRY_POINTS } from "../../src/check/collecting-runtime.js";
import { FINDING_KINDS, FINDING_KIND_NAMES, type CheckFinding } from "../../src/check/finding-kinds.js";
import { runCli } from "../../src/cli/main.js";
import { checkBeforeBuild } from "../../src/cli/check-command.js";
import { compileProgram } from "../../src/toolchain/compile-program.js";
import { findLlvmTool, linkSharedLibrary, repoRoot, runTool } from "../../src/toolchain/llvm-toolchain.js";
import { activeLlvm } from "../../src/toolchain/llvm-selection.js";
import { NATIVE_PROGRAMS } from "../native-programs/programs.js";
import { generateProgram, renderProgram } from "../fuzz-programs/generate.js";
import { irSource } from "../support/ir-source.js";
import { chainModule } from "../../bench/check-chain.js";
import { buildRunEntry, runNative } from "../support/native-run.js";

/**
 * `rootwalk check` (docs/cli.md "rootwalk check") against a corpus: every kind of mistake in both styles (each
 * file's header says what it is and what the check must report), and every correct program of
 * the project (demo, differential suite, runtime programs that are correct, program-fuzzer
 * seeds 1-24), which must give no finding. `check --generational` adds missing-write-barrier: its
 * mistake files, its edge files (each barrier removed in turn must be found), and the correct
 * programs, which then give that kind only. Runs under LLVM 14 and 19 (vitest.config.ts).
 * `ROOTWALK_CHECK_CAMPAIGN=N` instead checks N generated programs (all correct by construction)
 * and prints how many findings they gave (the false positives) and the time taken.
 */
const HERE = dirname(fileURLToPath(import.meta.url));
const corpus = (name: string): string => irSource(join(HERE, name));
const CAMPAIGN = Number(process.env["ROOTWALK_CHECK_CAMPAIGN"] ?? 0);

interface Mistake {
  file: string;
  kind: CheckFinding["kind"];
  function: string;
  value: string | null;
  call: string;
  line?: string;
  /** Found only by check --generational (and nothing without it). */
  generational?: boolean;
}

const MISTAKES: readonly Mistake[] = [
  { file: "sp-no-gc-strategy.ll", kind: "no-gc-strategy", function: "append", value: "%list", call: "@gc_alloc" },
  { file: "pl-no-gc-strategy.ll", kind: "no-gc-strategy", function: "append", value: "%list", call: "@gc_alloc" },
  { file: "sp-integer-across-safepoint.ll", kind: "integer-across-safepoint", function: "rw_main", value: "%key", call: "@gc_collect", line: "hash.c:5" },
  { file: "pl-integer-across-safepoint.ll", kind: "integer-across-safepoint", function: "rw_main", value: "%key", call: "indirect call of %f" },
  { file: "pl-stale-gcroot-copy.ll", kind: "stale-gcroot-copy", function: "rw_main", value: "%copy", call: "@gc_collect" },
  { file: "sp-interior-pointer-argument.ll", kind: "interior-pointer-argument", function: "rw_main", value: "%mid", call: "@read_later" },
  { file: "pl-interior-pointer-argument.ll", kind: "interior-pointer-argument", function: "rw_main", value: "%mid", call: "@read_later" },
  { file: "sp-gc-pointer-in-stack-slot.ll", kind: "gc-pointer-in-stack-slot", function: "rw_main", value: "%keep", call: "@gc_collect" },
  { file: "pl-gc-pointer-in-stack-slot.ll", kind: "gc-pointer-in-stack-slot", function: "rw_main", value: "%keep", call: "@gc_collect" },
  { file: "pl-unrooted-gc-pointer.ll", kind: "unrooted-gc-pointer", function: "rw_main", value: "%o", call: "@gc_collect" },
  { file: "pl-interior-pointer-in-gcroot.ll", kind: "interior-pointer-in-gcroot", function: "rw_main", value: "%tail", call: "%r" },
  { file: "sp-gc-pointer-in-plain-global.ll", kind: "gc-pointer-in-plain-global", function: "rw_main", value: "@cache", call: "@gc_collect" },
  { file: "pl-gc-pointer-in-plain-global.ll", kind: "gc-pointer-in-plain-global", function: "rw_main", value: "@last", call: "@gc_collect" },
  { file: "sp-gc-pointer-in-aggregate.ll", kind: "gc-pointer-in-aggregate", function: "rw_main", value: "%pair", call: "@gc_collect" },
  { file: "sp-inttoptr-gc-pointer.ll", kind: "inttoptr-gc-pointer", function: "rw_main", value: "%field", call: "@gc_collect" },
  { file: "sp-missing-write-barrier.ll", kind: "missing-write-barrier", function: "rw_main", value: "%table", call: "@gc_alloc", generational: true },
  { file: "pl-missing-write-barrier.ll", kind: "missing-write-barrier", function: "rw_main", value: "%tab", call: "@gc_alloc", generational: true },
  { file: "sp-missing-gc-init.ll", kind: "missing-gc-init", function: "rw_main", value: null, call: "no call of @gc_init in the program" },
  { file: "pl-missing-gc-init.ll", kind: "missing-gc-init", function: "rw_main", value: null, call: "no call of @gc_init in the program" },
  // The runtime suite's own bad programs.
  { file: "../native-runtime/programs/stale-pointer.ll", kind: "gc-pointer-in-stack-slot", function: "rw_main", value: "%stale", call: "@gc_collect" },
  { file: "../native-runtime/programs/no-init.ll", kind: "missing-gc-init", function: "rw_main", value: null, call: "no call of @gc_init in the program" },
];

/** The runtime suite's programs that are correct (the others break a rule on purpose). */
const CORRECT_RUNTIME_PROGRAMS = ["deep", "heap-exhausted", "list-tree", "many-args", "no-safepoint-loop", "plimmix-list", "stuck-globals", "threads"];

function correctPrograms(): { name: string; files: string[] }[] {
  const demo = readdirSync(join(repoRoot(), "src", "demo")).filter((f) => f.endsWith(".ll"));
  return [
    ...demo.map((f) => ({ name: `demo ${f}`, files: [irSource(join(repoRoot(), "src", "demo", f))] })),
    ...NATIVE_PROGRAMS.map((p) => ({ name: `native program ${p.name}`, files: p.files.map(irSource) })),
    ...CORRECT_RUNTIME_PROGRAMS.map((n) => ({ name: `runtime program ${n}`, files: [irSource(join(HERE, "..", "native-runtime", "programs", `${n}.ll`))] })),
    { name: "sp-correct-edges", files: [corpus("sp-correct-edges.ll")] },
    { name: "pl-correct-edges", files: [corpus("pl-correct-edges.ll")] },
    { name: "sp-collects-option (without --collects)", files: [corpus("sp-collects-option.ll")] },
    { name: "sp-write-barrier-edges", files: [corpus("sp-write-barrier-edges.ll")] },
    { name: "pl-write-barrier-edges", files: [corpus("pl-write-barrier-edges.ll")] },
  ];
}

/** A generated program written where the check can read it (one file per seed and LLVM). */
function generatedSource(seed: number): string {
  const dir = join(repoRoot(), ".cache", "check-fuzz", `llvm${activeLlvm().major}`);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `fuzz-${seed}.ll`);
  writeFileSync(path, renderProgram(generateProgram(seed)));
  return path;
}

describe.skipIf(CAMPAIGN > 0)("rootwalk check", () => {
  describe("finds every kind of mistake, exactly once", () => {
    for (const m of MISTAKES) {
      it(`${m.file}: ${m.kind}`, () => {
        const findings = checkIrProgram([corpus(m.file)], m.generational === true ? { generational: true } : {});
        if (m.generational === true) expect(checkIrProgram([corpus(m.file)])).toEqual([]);
        expect(findings.map((f) => ({ kind: f.kind, function: f.function, value: f.value, call: f.call }))).toEqual([
          { kind: m.kind, function: m.function, value: m.value, call: m.call },
        ]);
        if (m.line !== undefined) expect(findings[0]!.line).toBe(m.line);
      });
    }
    it("covers every IR kind, in both styles where the style can make the mistake", () => {
      const covered = new Set(MISTAKES.map((m) => `${m.file.startsWith("sp-") ? "sp" : m.file.startsWith("pl-") ? "pl" : "runtime"} ${m.kind}`));
      const both = [
        "no-gc-strategy",
        "integer-across-safepoint",
        "interior-pointer-argument",
        "gc-pointer-in-stack-slot",
        "gc-pointer-in-plain-global",
        "missing-write-barrier",
        "missing-gc-init",
      ];
      for (const kind of both) {
        expect(covered).toContain(`sp ${kind}`);
        expect(covered).toContain(`pl ${kind}`);
      }
      // Only gcroot code has gcroot slots; only statepoint code relocates SSA values (inttoptr's
      // result then counts as a base; an aggregate is not relocated).
      const gcrootOnly = ["stale-gcroot-copy", "unrooted-gc-pointer", "interior-pointer-in-gcroot"];
      const statepointOnly = ["gc-pointer-in-aggregate", "inttoptr-gc-pointer"];
      for (const kind of gcrootOnly) expect(covered).toContain(`pl ${kind}`);
      for (const kind of statepointOnly) expect(covered).toContain(`sp ${kind}`);
      const irKinds = FINDING_KIND_NAMES.filter((k) => k !== "call-without-safepoint");
      expect([...both, ...gcrootOnly, ...statepointOnly].sort()).toEqual([...irKinds].sort());
    });
    it("names each kind after what the program did: a copy of a rooted pointer is stale-gcroot-copy, a pointer never rooted is unrooted-gc-pointer", () => {
      // pl-stale-gcroot-copy.ll loads %copy from its gcroot slot; pl-unrooted-gc-pointer.ll never
      // stores %o in one (it was reported as stale-gcroot-copy before the kinds were split).
      const kinds = (file: string): string[] => checkIrProgram([corpus(file)]).map((f) => `${f.kind} ${f.value}`);
      expect(kinds("pl-stale-gcroot-copy.ll")).toEqual(["stale-gcroot-copy %copy"]);
      expect(kinds("pl-unrooted-gc-pointer.ll")).toEqual(["unrooted-gc-pointer %o"]);
      expect(FINDING_KINDS["stale-gcroot-copy"].meaning).toMatch(/stored to or loaded from a gcroot slot/);
      expect(FINDING_KINDS["unrooted-gc-pointer"].meaning).toMatch(/never stored in a gcroot slot/);
      expect(FINDING_KINDS["gc-pointer-in-plain-global"].fix).toMatch(/gc_add_global/);
    });
    it("a 2,000-deep call chain (written callee last): the chain's calls collect exactly when its leaf allocates", () => {
      // The plugin finds collecting callers bottom-up over the call graph; the bench times the
      // 20,000-deep chain (bench/check-chain.ts, checkChain20kMs), no test here is timed.
      const dir = mkdtempSync(join(tmpdir(), "rootwalk-check-test-"));
      try {
        const findings = (leafAllocates: boolean): string[] => {
          const file = join(dir, `chain-${leafAllocates}.ll`);
          writeFileSync(file, chainModule(2_000, { pointer: "i8 addrspace(1)*", leafAllocates, holdIntegerAcrossChain: true }));
          return checkIrProgram([file]).map((f) => `${f.kind} @${f.function} ${f.value} ${f.call}`);
        };
        expect(findings(true)).toEqual(["integer-across-safepoint @rw_main %key @f1999"]);
        expect(findings(false)).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
    it("reads bitcode (.bc) as well, and keeps the source line", () => {
      const dir = mkdtempSync(join(tmpdir(), "rootwalk-check-test-"));
      try {
        const bitcode = join(dir, "hash.bc");
        runTool(findLlvmTool("llvm-as"), [corpus("sp-integer-across-safepoint.ll"), "-o", bitcode]);
        expect(checkIrProgram([bitcode]).map((f) => `${f.kind} ${f.value} ${f.call} ${f.line}`)).toEqual([
          "integer-across-safepoint %key @gc_collect hash.c:5",
        ]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
    it("--collects makes an external function a call that can collect", () => {
      const findings = checkIrProgram([corpus("sp-collects-option.ll")], { collects: ["my_poll"] });
      expect(findings.map((f) => `${f.kind} ${f.value} ${f.call}`)).toEqual(["integer-across-safepoint %a @my_poll"]);
    });
  });

  describe("finds nothing in the project's correct programs", () => {
    for (const p of correctPrograms()) {
      it(p.name, () => {
        expect(checkIrProgram(p.files)).toEqual([]);
      });
    }
    it("program-fuzzer seeds 1-24 (both styles)", () => {
      const styles = new Set<string>();
      for (let seed = 1; seed <= 24; seed++) {
        styles.add(generateProgram(seed).features.style);
        expect(checkIrProgram([generatedSource(seed)]), `seed ${seed}`).toEqual([]);
        // --generational: only the one store into an object the generator writes (in @st), when
        // it has no barrier after it.
        const generational = checkIrProgram([generatedSource(seed)], { generational: true }).map((f) => `${f.kind} @${f.function} ${f.value} ${f.call}`);
        expect(generational.length, `seed ${seed}`).toBeLessThanOrEqual(1);
        for (const f of generational) expect(f, `seed ${seed}`).toBe("missing-write-barrier @st %o return");
      }
      expect([...styles].sort()).toEqual(["plimmix", "statepoint"]);
    });
  });

  describe("check --generational: missing-write-barrier", () => {
    const found = (files: string[], options: { collects?: string[] } = {}): string[] =>
      checkIrProgram(files, { generational: true, ...options }).map((f) => `${f.kind} @${f.function} ${f.value} ${f.call}`);
    /** `text` (typed-pointer IR) written to a file, in the form the active LLVM reads. */
    const module = (dir: string, name: string, text: string): string => {
      const path = join(dir, `${name}.ll`);
      writeFileSync(path, text);
      return irSource(path);
    };
    it("the correct edge cases give nothing, and gc_write_barrier never collects, --collects naming it included", () => {
      for (const file of ["sp-write-barrier-edges.ll", "pl-write-barrier-edges.ll"]) {
        expect(found([corpus(file)]), file).toEqual([]);
        expect(found([corpus(file)], { collects: ["gc_write_barrier"] }), file).toEqual([]);
      }
    });
    it("each barrier of the edge files is needed: without it, its function's stores are found", () => {
      const dir = mkdtempSync(join(tmpdir(), "rootwalk-check-test-"));
      try {
        for (const file of ["sp-write-barrier-edges.ll", "pl-write-barrier-edges.ll"]) {
          const lines = readFileSync(corpus(file), "utf8").split("\n");
          const barriers = lines.flatMap((line, k) => (line.includes("call void @gc_write_barrier(") ? [k] : []));
          expect(barriers.length, file).toBeGreaterThanOrEqual(3);
          for (const k of barriers) {
            const owner = lines
              .slice(0, k)
              .reverse()
              .find((line) => line.startsWith("define "))!;
            const name = /@([\w.]+)\(/.exec(owner)![1]!;
            const mutated = join(dir, `${file}-${k}.ll`);
            writeFileSync(mutated, lines.filter((_, j) => j !== k).join("\n"));
            const findings = checkIrProgram([mutated], { generational: true });
            expect(findings.length, `${file} without line ${k + 1}`).toBeGreaterThan(0);
            for (const f of findings) expect(`${f.kind} @${f.function}`).toBe(`missing-write-barrier @${name}`);
          }
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
    it("a freshly allocated object needs no barrier only until a call that can collect", () => {
      const dir = mkdtempSync(join(tmpdir(), "rootwalk-check-test-"));
      try {
        const text = readFileSync(corpus("sp-write-barrier-edges.ll"), "utf8");
        // In @pair, a collection between the allocation and the stores: %n may be old by then.
        const alloc = /( {2}%n = call .*@gc_alloc\(i64 2, i64 8\)\n)/.exec(text)![1]!;
        const mutated = join(dir, "collect-before-init.ll");
        writeFileSync(mutated, text.replace(alloc, `${alloc}  call void @gc_collect()\n`));
        expect(found([mutated])).toEqual(["missing-write-barrier @pair %n return", "missing-write-barrier @pair %n return"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
    it("a barrier on one path only, of another object, or after the safepoint is missing; one after a loop without safepoints is not", () => {
      const dir = mkdtempSync(join(tmpdir(), "rootwalk-check-test-"));
      try {
        const sp = module(dir, "sp-barrier-paths", SP_BARRIER_PATHS);
        expect(found([sp])).toEqual([
          "missing-write-barrier @one_path %o @gc_collect",
          "missing-write-barrier @other_object %o @gc_collect",
          "missing-write-barrier @after_safepoint %o @gc_collect",
        ]);
        const store = checkIrProgram([sp], { generational: true })[0]!.store;
        expect(store).toEqual({ stored: "%v", field: "%slots" });
        const pl = module(dir, "pl-barrier-reload", PL_BARRIER_RELOAD);
        // The slot was stored to between the store and the reload: the barrier is of another object.
        expect(found([pl])).toEqual(["missing-write-barrier @overwritten_root %a return"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
    it("the project's correct programs: under --generational only missing barriers, one per store", () => {
      for (const p of correctPrograms()) {
        const findings = checkIrProgram(p.files, { generational: true });
        for (const f of findings) expect(f.kind, p.name).toBe("missing-write-barrier");
        const stores = findings.map((f) => `${f.function} ${f.where} ${f.store?.field} ${f.store?.stored}`);
        expect(new Set(stores).size, p.name).toBe(stores.length);
      }
    });
    it("the command: check --generational prints the store and the object, exit 1; compile and run's check step takes it too", async () => {
      const out = await cli(["check", "--generational", corpus("pl-missing-write-barrier.ll")]);
      expect(out.code).toBe(1);
      const lines = out.stdout.trimEnd().split("\n");
      expect(lines[0]).toMatch(
        /: missing-write-barrier in @rw_main, %loop: %young is stored into %tab \(at %slot\) with no gc_write_barrier\(%tab\) after it before the call of @gc_alloc$/,
      );
      expect(lines[2]).toMatch(/^ {2}fix: call gc_write_barrier\(obj\) after the store/);
      expect(await cli(["check", corpus("pl-missing-write-barrier.ll")])).toMatchObject({ code: 0 });
      let stderr = "";
      expect(
        await checkBeforeBuild([corpus("sp-missing-write-barrier.ll")], false, (t) => (stderr += t), "rootwalk run", undefined, { generational: true }),
      ).toBe(true);
      expect(stderr).toMatch(/^rootwalk run: warning: .*missing-write-barrier in @rw_main, %loop: %item is stored into %table/);
      expect(await checkBeforeBuild([corpus("sp-missing-write-barrier.ll")], true, () => {}, "rootwalk run", undefined, { generational: true })).toBe(false);
      expect(await checkBeforeBuild([corpus("sp-missing-write-barrier.ll")], true, () => {}, "rootwalk run")).toBe(true);
      // A binary alone: machine code does not show which stores a barrier follows.
      const object = await compileProgram(corpus("sp-write-barrier-edges.ll"), { mode: "statepoint" });
      const refused = await cli(["check", "--generational", object]);
      expect(refused).toMatchObject({ code: 1, stdout: "" });
      expect(refused.stderr).toBe(
        `rootwalk: --generational: found only binaries (${object}), expected the program's IR (.ll or .bc): the write barrier rule is checked in the IR\n`,
      );
    });
  });

  describe("binaries: calls that can collect without a safepoint record", () => {
    it("finds the helper without a GC strategy in a statepoint and a plimmix object, and nothing in the demos (.o and .so)", async () => {
      const sp = await compileProgram(corpus("sp-no-gc-strategy.ll"), { mode: "statepoint" });
      const pl = await compileProgram(corpus("pl-no-gc-strategy.ll"), { mode: "plimmix" });
      for (const object of [sp, pl]) {
        expect(checkBinary(object).map((f) => `${f.kind} @${f.function} ${f.call}`)).toEqual(["call-without-safepoint @append @gc_alloc"]);
      }
      const demoSp = await compileProgram(irSource(join(repoRoot(), "src", "demo", "demo-trees-statepoint.ll")), { mode: "statepoint" });
      const demoPl = await compileProgram(irSource(join(repoRoot(), "src", "demo", "demo-trees-plimmix.ll")), { mode: "plimmix" });
      const cases: [string, string[]][] = [
        [demoSp, []],
        [demoPl, []],
        [linkSharedLibrary([demoSp]), []],
        [linkSharedLibrary([sp]), ["call-without-safepoint @append @gc_alloc"]],
      ];
      for (const [binary, expected] of cases) {
        expect(
          checkBinary(binary).map((f) => `${f.kind} @${f.function} ${f.call}`),
          binary,
        ).toEqual(expected);
      }
    });
  });

  describe("refuses what it cannot check, in one line", () => {
    it("IR already rewritten by rewrite-statepoints-for-gc", async () => {
      const dir = mkdtempSync(join(tmpdir(), "rootwalk-check-test-"));
      try {
        const rewritten = join(dir, "rewritten.ll");
        runTool(findLlvmTool("opt"), ["-passes=rewrite-statepoints-for-gc", "-S", corpus("sp-integer-across-safepoint.ll"), "-o", rewritten]);
        const out = await cli(["check", rewritten]);
        expect(out.code).toBe(1);
        expect(out.stdout).toBe("");
        const refusal = `program: found ${rewritten}: gc.statepoint calls (in @rw_main), expected IR as written, before rewrite-statepoints-for-gc: check the source, not the rewritten module`;
        expect(out.stderr).toBe(`rootwalk: ${refusal}\n`);
        // compile builds it (plain llc) with a warning that it was not checked; --strict-check refuses.
        const compiled = await cli(["compile", rewritten, "-o", join(dir, "rewritten.o")]);
        expect(compiled).toMatchObject({ code: 0, stderr: `rootwalk compile: warning: not checked: ${refusal}\n` });
        const strict = await cli(["compile", "--strict-check", rewritten, "-o", join(dir, "strict.o")]);
        expect(strict.code).toBe(1);
        expect(strict.stderr).toMatch(/--strict-check and the program could not be checked: not building\n$/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
    it("a file opt cannot read", async () => {
      const dir = mkdtempSync(join(tmpdir(), "rootwalk-check-test-"));
      try {
        const bad = join(dir, "bad.ll");
        writeFileSync(bad, "this is not IR\n");
        const out = await cli(["check", bad]);
        expect(out.code).toBe(1);
        expect(out.stdout).toBe("");
        expect(out.stderr.split("\n")).toHaveLength(2);
        expect(out.stderr).toMatch(/^rootwalk: program: found .*bad\.ll, which opt cannot read \(.*error: expected top-level entity\), expected LLVM IR/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
    it("a --collects name that cannot be a pass parameter", async () => {
      const out = await cli(["check", corpus("sp-collects-option.ll"), "--collects", "a;b"]);
      expect(out).toMatchObject({ code: 1, stdout: "" });
      expect(out.stderr).toMatch(/^rootwalk: --collects: found "a;b", expected function names without/);
    });
  });

  describe("the command", () => {
    it("prints each finding with why and how to fix it, then a summary; exit 1 with findings, 0 clean", async () => {
      const bad = await cli(["check", corpus("pl-stale-gcroot-copy.ll")]);
      expect(bad.code).toBe(1);
      const lines = bad.stdout.trimEnd().split("\n");
      expect(lines[0]).toMatch(/: stale-gcroot-copy in @rw_main, %entry: %copy is live across the call of @gc_collect$/);
      expect(lines[1]).toMatch(/^ {2}why: /);
      expect(lines[2]).toMatch(/^ {2}fix: load the pointer again from its gcroot slot after the call/);
      expect(lines[3]).toMatch(/^check: 1 finding in .* \(1 stale-gcroot-copy\)$/);
      const clean = await cli(["check", corpus("pl-correct-edges.ll")]);
      expect(clean).toMatchObject({ code: 0, stderr: "" });
      expect(clean.stdout).toMatch(/^check: no findings in .*pl-correct-edges.*\n$/);
    });
    it("--json, and --collects NAME,NAME", async () => {
      const out = await cli(["check", "--json", corpus("sp-collects-option.ll"), "--collects", "other,my_poll"]);
      expect(out.code).toBe(1);
      const json = JSON.parse(out.stdout) as { findings: { kind: string; value: string; fix: string }[]; counts: Record<string, number> };
      expect(json.findings.map((f) => `${f.kind} ${f.value}`)).toEqual(["integer-across-safepoint %a"]);
      expect(json.findings[0]!.fix).toMatch(/make the integer after it/);
      expect(json.counts["integer-across-safepoint"]).toBe(1);
    });
    it("a binary: says that it cannot see liveness", async () => {
      const object = await compileProgram(corpus("sp-correct-edges.ll"), { mode: "statepoint" });
      const out = await cli(["check", object]);
      expect(out.stdout).toMatch(/note: a binary shows calls and safepoint records, not which values are live/);
      // @collect_now (no gc strategy) calls gc_collect holding nothing: a binary cannot tell.
      expect(out.stdout).toMatch(/call-without-safepoint in @collect_now\+0x[0-9a-f]+: the call of @gc_collect has no safepoint record/);
      expect(out.code).toBe(1);
    });
    it("compile warns (exit 0), --strict-check refuses (exit 1, no output), --no-check is silent", async () => {
      const dir = mkdtempSync(join(tmpdir(), "rootwalk-check-test-"));
      try {
        const source = corpus("sp-no-gc-strategy.ll");
        const out = join(dir, "a.o");
        const warned = await cli(["compile", "--statepoint", source, "-o", out]);
        expect(warned.code).toBe(0);
        expect(warned.stderr).toMatch(
          /^rootwalk compile: warning: .*no-gc-strategy in @append, %entry: %list is live across the call of @gc_alloc \(rootwalk check explains; --no-check skips the check\)\n$/,
        );
        const strict = await cli(["compile", "--statepoint", "--strict-check", source, "-o", join(dir, "b.o")]);
        expect(strict.code).toBe(1);
        expect(strict.stderr).toMatch(/rootwalk compile: 1 check finding and --strict-check: not building\n$/);
        expect(existsSync(join(dir, "b.o"))).toBe(false);
        const quiet = await cli(["compile", "--statepoint", "--no-check", source, "-o", join(dir, "c.o")]);
        expect(quiet).toMatchObject({ code: 0, stderr: "" });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
    it("run warns on stderr and runs the program", async () => {
      buildRunEntry(); // the compiled CLI the native tests run (a fresh clone may run this file first)
      const r = await runNative([corpus("sp-interior-pointer-argument.ll"), "--no-gc"], 120_000);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^result: 0\n/);
      // First-use build notices (a fresh cache) may come first: the warning leads what is left.
      expect(r.stderr.replace(/^rootwalk: building .*\n/gm, "")).toMatch(
        /^rootwalk run: warning: .*interior-pointer-argument in @rw_main, %entry: %mid is passed to @read_later \(rootwalk check explains; --no-check skips the check\)\n/,
      );
    });
    it("run --strict-check stops before building", async () => {
      const out = await cli(["run", "--strict-check", corpus("pl-stale-gcroot-copy.ll"), "--plimmix"]);
      expect(out.code).toBe(1);
      expect(out.stdout).toBe("");
      expect(out.stderr).toMatch(
        /^rootwalk run: warning: .*stale-gcroot-copy in @rw_main.*\nrootwalk run: 1 check finding and --strict-check: not building\n$/,
      );
    });
  });

  it("the plugin's list of collecting runtime entry points is the TypeScript one", () => {
    const cpp = readFileSync(join(repoRoot(), "src", "check-plugin", "gc-check.cpp"), "utf8");
    const list = /const char \*const COLLECTING_RUNTIME\[\] = \{([^}]*)\}/.exec(cpp)?.[1] ?? "";
    expect([...list.matchAll(/"([^"]+)"/g)].map((m) => m[1])).toEqual([...COLLECTING_RUNTIME_ENTRY_POINTS]);
  });
});

describe.skipIf(CAMPAIGN === 0)("rootwalk check campaign", () => {
  it(
    `${CAMPAIGN} generated programs (correct by construction) give no finding`,
    () => {
      const start = Number(process.env["ROOTWALK_CHECK_CAMPAIGN_START"] ?? 1);
      const falsePositives: string[] = [];
      const barriers: string[] = [];
      const styles: Record<string, number> = {};
      const began = performance.now();
      for (let seed = start; seed < start + CAMPAIGN; seed++) {
        const style = generateProgram(seed).features.style;
        styles[style] = (styles[style] ?? 0) + 1;
        for (const f of checkIrProgram([generatedSource(seed)])) falsePositives.push(`seed ${seed}: ${f.kind} @${f.function} ${f.value} ${f.call}`);
        // --generational: the same, plus one missing-write-barrier per store into an object with no barrier after it.
        for (const f of checkIrProgram([generatedSource(seed)], { generational: true })) {
          if (f.kind === "missing-write-barrier") barriers.push(`seed ${seed}: @${f.function} ${f.value}`);
          else falsePositives.push(`seed ${seed} (--generational): ${f.kind} @${f.function} ${f.value} ${f.call}`);
        }
      }
      const seconds = (performance.now() - began) / 1000;
      console.log(
        `check campaign: ${CAMPAIGN} programs from seed ${start} (${JSON.stringify(styles)}), ${falsePositives.length} findings, ` +
          `--generational: ${barriers.length} missing-write-barrier in ${new Set(barriers.map((b) => b.split(":")[0])).size} programs, ${seconds.toFixed(1)} s`,
      );
      expect(falsePositives).toEqual([]);
    },
    CAMPAIGN * 2_000,
  );
});

/** Statepoint functions whose one barrier does not cover the store, and one (@after_loop) whose does. */
const SP_BARRIER_PATHS = `source_filename = "sp-barrier-paths"
declare void @gc_collect()
declare void @gc_write_barrier(i8 addrspace(1)*)

define void @one_path(i8 addrspace(1)* %o, i8 addrspace(1)* %v, i1 %c) gc "statepoint-example" {
entry:
  %slots = bitcast i8 addrspace(1)* %o to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %v, i8 addrspace(1)* addrspace(1)* %slots
  br i1 %c, label %barrier, label %join
barrier:
  call void @gc_write_barrier(i8 addrspace(1)* %o)
  br label %join
join:
  call void @gc_collect()
  ret void
}

define void @other_object(i8 addrspace(1)* %o, i8 addrspace(1)* %v) gc "statepoint-example" {
entry:
  %slots = bitcast i8 addrspace(1)* %o to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %v, i8 addrspace(1)* addrspace(1)* %slots
  call void @gc_write_barrier(i8 addrspace(1)* %v)
  call void @gc_collect()
  ret void
}

define void @after_safepoint(i8 addrspace(1)* %o, i8 addrspace(1)* %v) gc "statepoint-example" {
entry:
  %slots = bitcast i8 addrspace(1)* %o to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %v, i8 addrspace(1)* addrspace(1)* %slots
  call void @gc_collect()
  call void @gc_write_barrier(i8 addrspace(1)* %o)
  ret void
}

define void @after_loop(i8 addrspace(1)* %o, i8 addrspace(1)* %v, i64 %n) gc "statepoint-example" {
entry:
  %slots = bitcast i8 addrspace(1)* %o to i8 addrspace(1)* addrspace(1)*
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %slot = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slots, i64 %i
  store i8 addrspace(1)* %v, i8 addrspace(1)* addrspace(1)* %slot
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  call void @gc_write_barrier(i8 addrspace(1)* %o)
  call void @gc_collect()
  ret void
}
`;

/** gcroot style: the barrier's argument reloaded from a slot that was stored to since the store. */
const PL_BARRIER_RELOAD = `source_filename = "pl-barrier-reload"
declare void @llvm.gcroot(i8**, i8*)
declare i8* @gc_alloc(i64, i64)
declare void @gc_write_barrier(i8*)

define void @overwritten_root(i8* %o, i8* %b, i8* %v) gc "plimmix" {
entry:
  %r = alloca i8*, align 8
  call void @llvm.gcroot(i8** %r, i8* null)
  store i8* %o, i8** %r
  %a = load i8*, i8** %r
  %slots = bitcast i8* %a to i8**
  store i8* %v, i8** %slots
  store i8* %b, i8** %r
  %a2 = load i8*, i8** %r
  call void @gc_write_barrier(i8* %a2)
  ret void
}

; Its arguments are GC pointers (gcroot style knows them by what is passed to them).
define void @caller() gc "plimmix" {
entry:
  %x = call i8* @gc_alloc(i64 1, i64 0)
  call void @overwritten_root(i8* %x, i8* %x, i8* %x)
  ret void
}
`;

async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}
