// Every mistake issue 11 lists as "prints a JS stack trace" or "takes the machine": each now ends
// with one line on stderr naming what was found and what was expected, and a documented exit code
// (src/errors.ts describeFailure). A bad output path is refused before any work starts.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HeapExhaustedError } from "../../gc/collector-error.js";
import { describeFailure } from "../../src/errors.js";
import { spellHeapSize } from "../../gc/heap-size-advice.js";
import { CLI, buildRunEntry } from "../support/native-run.js";
import { run } from "../support/run-cli.js";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { compileProgramTo } from "../../src/toolchain/compile-program.js";
import { rootwalkCacheDir } from "../../src/toolchain/cache-dir.js";

const CORPUS_DIR = join(repoRoot(), "test", "ll");

const scratch = mkdtempSync(join(tmpdir(), "rootwalk-mistakes-"));

/** One line, no stack frame ("    at f (file:...)"), the expected exit code. */
function expectOneLine(r: { code: number; stdout: string; stderr: string }, code: number, pattern: RegExp): void {
  expect(r.code).toBe(code);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr.trim()).toMatch(pattern);
  expect(r.stderr.trim().split("\n")).toHaveLength(1);
}

describe("mistakes a person makes end in one line and a documented exit code", () => {
  it("sim --heap 100G", async () => {
    expectOneLine(await run("sim", "--heap", "100G"), 1, /^rootwalk: --heap: found 100G, expected between 1M and 4G$/);
  });

  it("sim --threads 100000 (32 MiB of simulated stack each) is refused, not attempted", async () => {
    expectOneLine(await run("sim", "--workload", "mt-gcbench", "--threads", "100000"), 1, /--threads: found 100000, expected a number from 1 to 32/);
    expectOneLine(await run("sim", "--scale=1e9"), 1, /--scale: found 1e9, expected a number from 0.0001 to 10/);
    // A count is a whole number: 2.5 threads is refused, not quietly rounded down.
    expectOneLine(await run("sim", "--workload", "mt-gcbench", "--threads", "2.5"), 1, /--threads: found 2.5, expected a whole number$/);
    // --stress=N has the same bounds in sim and run.
    expectOneLine(await run("run", "/nonexistent.ll", "--stress=1e12"), 1, /--stress: found 1e12, expected a whole number from 1 to 1000000000$/);
    expectOneLine(await run("sim", "--stress=1e12"), 1, /--stress: found 1e12, expected a whole number from 1 to 1000000000$/);
  });

  it("a FIFO or a device given as input is refused before it is opened (a FIFO hung; /dev/zero was read until memory ran out, by opt too)", () => {
    buildRunEntry();
    const fifo = join(scratch, "fifo");
    spawnSync("mkfifo", [fifo]);
    // The FIFO first: without the check its open waits for a writer (the timeout ends it).
    for (const [path, kind] of [
      [fifo, "a FIFO"],
      ["/dev/zero", "a character device"],
    ] as const) {
      for (const [command, expected] of [
        [["dump"], "a readable file \\(- reads standard input\\)"],
        [["walk"], "a readable file"],
        [["roots"], "a readable core file"],
        [["compile", "-o", join(scratch, "out.o")], "a readable .ll file"],
        [["check"], "a program file \\(.ll, .bc, .o or .so\\)"],
        [["run"], "a program file \\(.ll, .o or .so\\)"],
      ] as const) {
        const r = spawnSync(process.execPath, [CLI, ...command, path], { encoding: "utf8", timeout: 20_000 });
        const who = command[0] === "run" ? "rootwalk run" : "rootwalk";
        expectOneLine(
          { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr },
          1,
          new RegExp(`^${who}: ${path}: found ${kind}, not a regular file, expected ${expected}$`),
        );
      }
    }
  }, 300_000);

  it("a snapshot file holding null, an array, or null elements", async () => {
    for (const [text, expected] of [
      [
        "null",
        /snapshot: found null, expected a JSON object with memory, functions and callsites \(the stack snapshot format: docs\/snapshot-format.md and schemas\/stack-snapshot.schema.json in the package\)$/,
      ],
      ["[1]", /snapshot: found an array, expected a JSON object/],
      ['{"memory":[null],"functions":[],"callsites":[]}', /snapshot memory\[0\].*found null, expected an object/],
      ['{"memory":[],"functions":[],"callsites":[{"ra":"0x1"}]}', /callsites\[0\]\.rootSpOffsets.*found undefined, expected an array/],
    ] as const) {
      const path = join(scratch, "snapshot.json");
      writeFileSync(path, text);
      expectOneLine(await run("walk", path), 1, expected);
    }
  });

  it("a snapshot file missing one of memory, functions and callsites names that one", async () => {
    const whole = { memory: [], functions: [], callsites: [], entryRaSlot: "0x7000" };
    for (const missing of ["memory", "functions", "callsites"] as const) {
      const path = join(scratch, `no-${missing}.json`);
      writeFileSync(path, JSON.stringify({ ...whole, [missing]: undefined }));
      expectOneLine(await run("walk", path), 1, new RegExp(`: snapshot: found no ${missing}, expected a ${missing} array \\(the stack snapshot format`));
    }
  });

  it("a bad -o or --svg path is refused before compiling or running", async () => {
    expectOneLine(
      await run("sim", "--svg", "/nonexistent-folder/heap.svg"),
      1,
      /--svg: found \/nonexistent-folder\/heap.svg, expected a path in an existing folder/,
    );
    expectOneLine(await run("sim", "--svg", scratch), 1, /--svg: .* expected a file path, not a folder/);
    expectOneLine(
      await run("compile", "--statepoint", join(CORPUS_DIR, "call-chain.ll"), "-o", "/nonexistent-folder/a.o"),
      1,
      /-o: found \/nonexistent-folder\/a.o, expected a path in an existing folder/,
    );
    expectOneLine(await run("run", "/nonexistent.ll", "--svg", "/nonexistent-folder/heap.svg"), 1, /--svg: found \/nonexistent-folder\/heap.svg/);
    // access() says yes to root for /proc; creating the file there fails: found before the run.
    expectOneLine(
      await run("sim", "--svg", "/proc/heap.svg"),
      1,
      /--svg: found \/proc\/heap.svg, expected a path a file can be written to \(opening it for writing failed with E[A-Z]+\)$/,
    );
  });

  it("sim --workload deep-recursion at its default scale (10,000 frames) completes", async () => {
    const r = await run("sim", "--workload", "deep-recursion");
    expect(r.stderr).not.toMatch(/RangeError|^\s+at /m);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/deepest stack\s+10000 frames/);
  });

  it("out of memory says so, with a heap size to try, exit 3", async () => {
    const r = await run("sim", "--heap", "1M", "--workload", "binary-trees", "--scale", "4");
    expectOneLine(r, 3, /^rootwalk: heap exhausted: \d+ live bytes of 1048576; try --heap \d+[MG]$/);
    expect(spellHeapSize(1 << 20)).toBe("1M");
    expect(spellHeapSize((1 << 20) + 1)).toBe("2M");
    expect(spellHeapSize(5 << 20)).toBe("6M"); // 1 or 1.5 times a power of two MiB
    expect(spellHeapSize(3 * 2 ** 30)).toBe("3G");
    expect(spellHeapSize(5 * 2 ** 30)).toBe("4G"); // at most the maximum
    // The live data filled the heap (a growing live set): four times the live bytes, not twice the heap.
    expect(describeFailure(new HeapExhaustedError(900_000, 1 << 20, 64, 0)).line).toBe("heap exhausted: 900000 live bytes of 1048576; try --heap 4M");
    // A large request into a mostly empty heap: twice live + request, whatever the heap was.
    expect(describeFailure(new HeapExhaustedError(1 << 20, 64 << 20, 40 << 20, 0)).line).toBe(
      `heap exhausted: ${1 << 20} live bytes of ${64 << 20}; try --heap 96M`,
    );
  });

  it("a bug in rootwalk says it is one, how to report it, and exits 3 without a stack", () => {
    const failure = describeFailure(new TypeError("x is undefined"));
    expect(failure.internal).toBe(true);
    expect(failure.exitCode).toBe(3);
    expect(failure.line).toMatch(/^internal error \(a bug in rootwalk, not in your input\): TypeError: x is undefined; please report it/);
    expect(failure.line).not.toMatch(/\n/);
  });
});

describe("compiler diagnostics come first, binary input is never echoed", () => {
  it("an IR error shows opt's own line and caret before the command that failed", async () => {
    const source = join(scratch, "bad.ll");
    writeFileSync(source, "define i64 @rw_main() {\n  %x = add i64 1, %nope\n  ret i64 %x\n}\n");
    const r = await run("compile", "--statepoint", source, "-o", join(scratch, "bad.o"));
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split("\n");
    expect(lines[0]).toMatch(new RegExp(`^rootwalk: opt(-\\d+)?: ${source}:2:19: error: use of undefined value '%nope'$`));
    expect(lines[1]).toBe("  %x = add i64 1, %nope");
    expect(lines.at(-1)).toMatch(/^opt(-\d+)?: failed \(exit code 1\) running opt/);
  });

  it("a source with control bytes but no zero byte reaches opt: its echo shows them as ?", async () => {
    const source = join(scratch, "control.ll");
    writeFileSync(source, Buffer.from([0x67, 0x61, 0x72, 0x62, 0x1b, 0x5b, 0x32, 0x4a, 0xff, 0xfe, 0x0a]));
    const r = await run("compile", "--statepoint", source, "-o", join(scratch, "control.o"));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/error: expected top-level entity/);
    // eslint-disable-next-line no-control-regex
    expect(r.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f\ufffd]/);
  });

  it("a binary file (an ELF executable, zero bytes) is refused in one line before opt or llc, its bytes never shown", async () => {
    // llc echoed the first "line" of /bin/ls as `?ELF??????>...`: printable bytes of the binary.
    const binary = join(scratch, "binary.ll");
    writeFileSync(binary, Buffer.from([0, 1, 0x67, 0x61, 0x72, 0x62, 0x1b, 0x5b, 0x32, 0x4a, 0xff, 0xfe, 0x0a]));
    for (const mode of ["--statepoint", "--plimmix"]) {
      expectOneLine(
        await run("compile", mode, binary, "-o", join(scratch, "binary.o")),
        1,
        /^rootwalk: source: found \S*binary\.ll, expected LLVM IR \(a \.ll text file, or \.bc bitcode\); this is binary data \(a zero byte at offset 0\)$/,
      );
    }
    for (const args of [
      ["compile", "/bin/ls", "-o", join(scratch, "ls.o")],
      ["run", binary],
    ]) {
      const r = await run(...args);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).not.toMatch(/ELF\?|garb|\?\?/);
    }
    expect((await run("compile", "/bin/ls", "-o", join(scratch, "ls.o"))).stderr).toMatch(/source: found \/bin\/ls, expected LLVM IR .*; this is an ELF file/);
  });

  it("a program with no rw_main (an empty .ll) names the user's file, not the cached library", () => {
    buildRunEntry();
    const empty = join(scratch, "empty.ll");
    writeFileSync(empty, "");
    const r = spawnSync(process.execPath, [CLI, "run", empty], { encoding: "utf8", timeout: 120_000 });
    expectOneLine(
      { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr.replace(/^rootwalk: building .*\n/gm, "") },
      1,
      new RegExp(`^rootwalk run: ${empty}: no function rw_main \\(the program must define i64 @rw_main\\(\\)\\)$`),
    );
    expect(r.stderr).not.toMatch(/prog-[0-9a-f]+\.so/);
  }, 120_000);

  it("a gcroot program declaring _GC_MAP_<name> without that source_filename is told the line to add, not the loader's bare 'undefined symbol'", () => {
    buildRunEntry();
    const program = join(scratch, "no-source-filename.ll");
    writeFileSync(
      program,
      [
        "declare void @gc_init(i8*)",
        "declare i8* @gc_alloc(i64, i64)",
        "declare void @llvm.gcroot(i8**, i8*)",
        '@"_GC_MAP_my-prog" = external global i8',
        'define i64 @rw_main() gc "plimmix" {',
        "  %root = alloca i8*",
        "  call void @llvm.gcroot(i8** %root, i8* null)",
        '  call void @gc_init(i8* @"_GC_MAP_my-prog")',
        "  %o = call i8* @gc_alloc(i64 0, i64 8)",
        "  store i8* %o, i8** %root",
        "  ret i64 0",
        "}",
        "",
      ].join("\n"),
    );
    const r = spawnSync(process.execPath, [CLI, "run", program, "--plimmix", "--no-gc"], { encoding: "utf8", timeout: 120_000 });
    expectOneLine(
      { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr.replace(/^rootwalk: building .*\n/gm, "") },
      1,
      /^rootwalk run: cannot load the program: the program uses the map label _GC_MAP_my-prog, which no module defines: .*\(no-source-filename\.ll: no source_filename\); add the line source_filename = "my-prog" to no-source-filename\.ll$/,
    );
  }, 120_000);

  it("an object that cannot be copied to -o names the user's path, not the cached object", async () => {
    // checkOutputPath passes /proc for root (access() says writable), and creating a file there
    // fails: the copy's error carried the cache path (Node's copyfile error names the source).
    const output = "/proc/rootwalk-cannot-write.o";
    const error = await compileProgramTo(join(CORPUS_DIR, "call-chain.ll"), output, { mode: "statepoint" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    const failure = describeFailure(error);
    expect(failure.exitCode).toBe(1);
    expect(failure.line).toMatch(new RegExp(`^${output}: (no such file or folder|permission denied|read-only file system|operation not permitted)$`));
    expect(failure.line).not.toContain(rootwalkCacheDir());
  });
});
