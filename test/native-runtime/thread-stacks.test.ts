import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scanMemory } from "../../src/memory/scan-memory.js";
import { buildRuntime } from "../../src/native/build-runtime.js";
import { loadRuntimeLibrary } from "../../src/native/runtime-library.js";
import { DEFAULT_MAIN_STACK_BYTES, DEFAULT_THREADS, DEFAULT_THREAD_STACK_BYTES } from "../../src/native/run-defaults.js";
import { GUARD_BYTES, STACK_ALIGN_BYTES, stackRegionBytes } from "../../src/native/stack-limits.js";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { OUT_DIR, buildRunEntry, runNative } from "../support/native-run.js";

/*
 * Issue 19 item 3, native stacks: every thread the runtime starts runs on a stack placed in the
 * scan memory (src/native/thread-stacks.ts), with a PROT_NONE guard below it; the options that
 * size the stacks are checked against the 4 GiB scan memory before anything runs
 * (src/native/stack-limits.ts); the runtime's fault handler still hands V8 its own faults.
 */

const PROGRAMS = join(repoRoot(), "test", "native-runtime", "programs");
const scratch = mkdtempSync(join(tmpdir(), "rootwalk-thread-stacks-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

beforeAll(() => {
  buildRunEntry();
}, 300_000);

/** A wasm module: f(address) = i32.load(address) on a memory of one 64 KiB page. */
const OUT_OF_BOUNDS_WASM = [
  0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 6, 1, 0x60, 1, 0x7f, 1, 0x7f, 3, 2, 1, 0, 5, 3, 1, 0, 1, 7, 5, 1, 1, 0x66, 0, 0, 10, 9, 1, 7, 0, 0x20, 0, 0x28, 2, 0,
  0x0b,
];

/**
 * In a child process: `rootwalk run ARGS` with the walk log on, then (the runtime's fault handler
 * still installed) a wasm load out of bounds. Prints the scan memory's native address, the run's
 * exit code and what the wasm load did.
 */
const CHILD = `
import { runCommand } from ${JSON.stringify(join(OUT_DIR, "src", "cli", "run-command.js"))};
import { scanMemory } from ${JSON.stringify(join(OUT_DIR, "src", "memory", "scan-memory.js"))};
import { buildRuntime } from ${JSON.stringify(join(OUT_DIR, "src", "native", "build-runtime.js"))};
import { loadRuntimeLibrary } from ${JSON.stringify(join(OUT_DIR, "src", "native", "runtime-library.js"))};
let out = "";
const status = await runCommand(process.argv.slice(2), { stdout: (t) => (out += t), stderr: (t) => process.stderr.write(t) });
const base = Number(loadRuntimeLibrary(buildRuntime()).rwAddressOf(scanMemory().bytes.subarray(0, 8)));
const { instance } = await WebAssembly.instantiate(new Uint8Array(${JSON.stringify(OUT_OF_BOUNDS_WASM)}));
let wasm;
try { wasm = "loaded " + instance.exports.f(1 << 20); } catch (e) { wasm = String(e); }
process.stdout.write(JSON.stringify({ status, base, wasm, out }) + "\\n");
process.exit(0);
`;

interface LoggedThread {
  thread: number;
  /** The walk log writes addresses as hex strings. */
  frames: { sp: string }[];
}

describe("native thread stacks in the scan memory", () => {
  it("every managed thread's SP, at every collection, lies in its stack region of the scan memory; afterwards V8 still gets its own wasm faults", () => {
    const script = join(scratch, "child.mjs");
    writeFileSync(script, CHILD);
    const log = join(scratch, "walks.jsonl");
    const r = spawnSync(process.execPath, [script, join(PROGRAMS, "threads.ll"), "--stress=1000", "--progress=0", "--json"], {
      encoding: "utf8",
      cwd: repoRoot(),
      timeout: 240_000,
      env: { ...process.env, ROOTWALK_WALK_LOG: log },
    });
    expect(r.status, r.stderr).toBe(0);
    const child = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { status: number; base: number; wasm: string; out: string };
    expect(child.status, child.out).toBe(0);
    // The regions a fresh scan memory hands out, first fit from its first STACK_ALIGN_BYTES boundary
    // after offset 0: rw_main's, then the threads'.
    const main = stackRegionBytes(DEFAULT_MAIN_STACK_BYTES);
    const each = stackRegionBytes(DEFAULT_THREAD_STACK_BYTES);
    const regionOf = (sp: number): number => {
      const offset = sp - child.base - STACK_ALIGN_BYTES;
      if (offset >= GUARD_BYTES && offset < main) return 0;
      const k = Math.floor((offset - main) / each);
      return k >= 0 && k < DEFAULT_THREADS && offset - main - k * each >= GUARD_BYTES ? 1 + k : -1;
    };
    const stops = readFileSync(log, "utf8").trim().split("\n");
    expect(stops.length).toBeGreaterThan(10);
    const regionsSeen = new Set<number>();
    for (const line of stops) {
      for (const t of (JSON.parse(line) as { threads: LoggedThread[] }).threads) {
        for (const f of t.frames) {
          const region = regionOf(Number(f.sp));
          expect(region, `thread #${t.thread} SP ${f.sp} (scan memory at 0x${child.base.toString(16)})`).toBeGreaterThanOrEqual(0);
          expect(region === 0, `thread #${t.thread} on region ${region}`).toBe(t.thread === 0);
          regionsSeen.add(region);
        }
      }
    }
    expect(regionsSeen.size).toBeGreaterThanOrEqual(3); // rw_main's and at least two threads' (4 run)
    // A fault the runtime does not own (a wasm bounds check, on Node's main thread) goes on to V8.
    expect(child.wasm).toBe("RuntimeError: memory access out of bounds");
  }, 300_000);

  it("a stack overflow in a gc_thread_start thread faults on the guard: exit 3, the thread, the guard and --thread-stack named", async () => {
    const r = await runNative([join(PROGRAMS, "thread-overflow.ll"), "--thread-stack", "1M", "--progress=0"], 120_000);
    expect(r.status, r.stderr).toBe(3);
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^rootwalk run: segmentation fault in thread #1 at down\+0x[0-9a-f]+ \(fault address 0x[0-9a-f]+\)$/);
    expect(lines[1]).toBe("  the fault address is in the guard below a gc_thread_start thread's stack (1048576 bytes, --thread-stack): a stack overflow");
    expect(lines).toHaveLength(2);
  }, 180_000);

  it("rw_main overflowing --stack faults on its guard: exit 3 (the same recursion passes with the default stack)", async () => {
    const deep = join(PROGRAMS, "deep.ll");
    const r = await runNative([deep, "--stack", "1M", "--no-gc", "--progress=0"], 120_000);
    expect(r.status, r.stderr).toBe(3);
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^rootwalk run: segmentation fault in thread #0 at \S+ \(fault address 0x[0-9a-f]+\)$/);
    expect(lines[1]).toBe("  the fault address is in the guard below rw_main's stack (1048576 bytes, --stack): a stack overflow");
    const ok = await runNative([deep, "--no-gc", "--progress=0"], 120_000);
    expect(ok.status, ok.stderr).toBe(0);
  }, 180_000);

  it("stack sizes and thread counts that do not fit the 4 GiB scan memory are refused before anything runs: exit 1, one line", async () => {
    const cases: [string[], string][] = [
      [
        ["--threads", "64"],
        "rootwalk run: --threads: found 64 threads of --thread-stack 64M with --stack 1G (5G of stacks and guards), expected stacks that fit the 4 GiB scan memory (a 32-bit WebAssembly memory; 3.5G of it for stacks): at most 39 threads of 64M, or a smaller --thread-stack or --stack",
      ],
      [
        ["--thread-stack", "1G"],
        "rootwalk run: --threads: found 32 threads of --thread-stack 1G with --stack 1G (33G of stacks and guards), expected stacks that fit the 4 GiB scan memory (a 32-bit WebAssembly memory; 3.5G of it for stacks): at most 2 threads of 1G, or a smaller --thread-stack or --stack",
      ],
      [
        ["--stack", "4G"],
        "rootwalk run: --stack: found 4G, expected a stack from 128K to 3.5G: every stack lives in the 4 GiB scan memory (a 32-bit WebAssembly memory; 3.5G of it for stacks)",
      ],
      [
        ["--thread-stack", "64K"],
        "rootwalk run: --thread-stack: found 64K, expected a stack from 128K to 3.5G: every stack lives in the 4 GiB scan memory (a 32-bit WebAssembly memory; 3.5G of it for stacks)",
      ],
      [["--threads", "-1"], "rootwalk run: --threads: found -1, expected a whole number of threads (0 or more)"],
    ];
    for (const [options, message] of cases) {
      // A program that does not exist: the options are refused before it is looked at.
      const r = await runNative([join(scratch, "absent.ll"), ...options], 60_000);
      expect(r.status, options.join(" ")).toBe(1);
      expect(r.stderr).toBe(`${message}\n`);
    }
    // Fewer, larger threads fit.
    const fits = await runNative([join(PROGRAMS, "threads.ll"), "--threads", "4", "--thread-stack", "512M", "--stack", "256M", "--progress=0"], 120_000);
    expect(fits.status, fits.stderr).toBe(0);
  }, 180_000);

  it("more threads alive at once than --threads: exit 3 naming the option", async () => {
    const r = await runNative([join(PROGRAMS, "threads.ll"), "--threads", "2", "--progress=0"], 120_000);
    expect(r.status).toBe(3);
    expect(r.stderr).toContain(
      "rootwalk run: gc_thread_start: all 2 thread stacks are in use (--threads=2: threads started and not yet joined; join some, or give a larger --threads)\n",
    );
  }, 180_000);

  it("runtime.c refuses a stack region passed as NULL or not page aligned, in one line, and places nothing", () => {
    const runtime = loadRuntimeLibrary(buildRuntime());
    const buffer = scanMemory().buffer;
    expect(runtime.rwStackAdd(null, 1 << 20)).toBe("the stack region's address is NULL (pass a typed-array view on the scan memory, not its buffer)");
    expect(runtime.rwStackAdd(new Uint8Array(buffer, 8, 1 << 20), 1 << 20)).toBe("the stack region is not aligned to the page size (sysconf(_SC_PAGESIZE))");
    expect(runtime.rwStackAdd(new Uint8Array(buffer, 4096, 4096), 4096)).toBe("the stack region is too small for a guard and a stack");
    expect(runtime.rwStackRetire(new Uint8Array(buffer, 4096, 4096))).toBe(-1); // not a region: none was placed
  });
});
