// Every byte of a command's output reaches a pipe, however slowly it is read, with the command's
// exit code; a reader that closes early (`| head -1`) ends the command quietly. Through the real
// process of the built CLI: the bug was process.exit() dropping what Node had queued for a pipe
// past its 64 KiB.
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileToObject } from "../../src/toolchain/llvm-toolchain.js";
import { OUT_DIR, buildRunEntry } from "../support/native-run.js";
import { buildDeepProgram, gcoreUnlimitedStack } from "../walker/core/deep-core.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "rootwalk-pipe-output-"));
const MAIN = join(OUT_DIR, "src", "cli", "main.js");
/** How long the reader waits before it reads anything: the command has long filled the pipe. */
const READER_DELAY_S = 0.5;
const inputs = { object: "", snapshot: "", core: "", program: "" };

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** An object with 2,000 functions of 3 statepoints each: its dumps are megabytes. */
function bigObject(): string {
  const functions = Array.from(
    { length: 2000 },
    (_, i) => `define i64 @fn${i}(i64 addrspace(1)* %a, i64 addrspace(1)* %b) gc "statepoint-example" {
  call void @f()
  call void @f()
  call void @f()
  %x = load i64, i64 addrspace(1)* %a
  %y = load i64, i64 addrspace(1)* %b
  %s = add i64 %x, %y
  ret i64 %s
}`,
  );
  const source = join(scratch, "big.ll");
  writeFileSync(source, `declare void @f()\n${functions.join("\n")}\n`);
  return compileToObject(source, { optPasses: ["-passes=rewrite-statepoints-for-gc"], llcFlags: ["-O2"] });
}

/**
 * A recorded stack (the `walk` snapshot format) of `frames` frames of one 16-byte function `f`:
 * each frame's root at SP, its caller's return address above it; the outermost returns to 0.
 */
function deepSnapshot(frames: number): string {
  const base = 0x7f00_0000_0000;
  const ra = 0x1010;
  const words = new BigUint64Array(1 + 2 * frames);
  words[0] = BigInt(ra);
  for (let i = 0; i < frames; i++) {
    words[1 + 2 * i] = BigInt(0x50_0000 + 16 * i); // the root
    words[2 + 2 * i] = BigInt(i + 1 < frames ? ra : 0);
  }
  const path = join(scratch, "deep-snapshot.json");
  writeFileSync(
    path,
    JSON.stringify({
      memory: [{ base: `0x${base.toString(16)}`, hex: Buffer.from(words.buffer).toString("hex") }],
      functions: [{ name: "f", addr: "0x1000", stackSize: 8 }],
      callsites: [{ ra: `0x${ra.toString(16)}`, fn: "0x1000", rootSpOffsets: [0] }],
      entryRaSlot: `0x${base.toString(16)}`,
    }),
  );
  return path;
}

/** The command's output written straight to a file, and its exit code. */
function toFile(args: string[]): { bytes: Buffer; status: number | null } {
  const path = join(scratch, "direct.out");
  const fd = openSync(path, "w");
  const r = spawnSync(process.execPath, [MAIN, ...args], { stdio: ["ignore", fd, "pipe"], timeout: 120_000 });
  closeSync(fd);
  return { bytes: readFileSync(path), status: r.status };
}

/** The command's output through a pipe whose reader starts late, and the command's exit code. */
function throughSlowReader(args: string[]): { bytes: Buffer; status: number; stderr: string } {
  const path = join(scratch, "piped.out");
  const script = `"$@" | (sleep ${READER_DELAY_S}; exec cat > "$OUT"); echo "\${PIPESTATUS[0]}"`;
  const r = spawnSync("bash", ["-c", script, "bash", process.execPath, MAIN, ...args], {
    env: { ...process.env, OUT: path },
    encoding: "utf8",
    timeout: 120_000,
  });
  return { bytes: readFileSync(path), status: Number(r.stdout.trim()), stderr: r.stderr };
}

/** The command (node ARGS) into `head -1`: what head printed, the command's exit code and its stderr. */
function intoHead(args: string[], nodeArgs: string[] = [MAIN]): { line: string; status: number; stderr: string } {
  const script = `"$@" 2>"$ERR" | head -1; echo "\${PIPESTATUS[0]}" >&2`;
  const err = join(scratch, "head.err");
  const r = spawnSync("bash", ["-c", script, "bash", process.execPath, ...nodeArgs, ...args], {
    env: { ...process.env, ERR: err },
    encoding: "utf8",
    timeout: 120_000,
    maxBuffer: 1 << 28,
  });
  return { line: r.stdout, status: Number(r.stderr.trim()), stderr: readFileSync(err, "utf8") };
}

beforeAll(() => {
  buildRunEntry();
  inputs.object = bigObject();
  inputs.snapshot = deepSnapshot(50_000);
  inputs.program = buildDeepProgram();
  inputs.core = join(scratch, "core-deep");
  gcoreUnlimitedStack(inputs.program, inputs.core, "rw_core_stop", 40_000);
}, 300_000);

describe("output into a pipe", () => {
  const cases = (): [string, string[]][] => [
    ["dump --format json", ["dump", inputs.object, "--format", "json"]],
    ["dump --format readobj", ["dump", inputs.object, "--format", "readobj"]],
    ["walk", ["walk", inputs.snapshot]],
    ["walk --json", ["walk", inputs.snapshot, "--json"]],
    ["roots", ["roots", inputs.core, inputs.program]],
    ["roots --json", ["roots", inputs.core, inputs.program, "--json"]],
  ];

  it("every byte reaches a slow reader, the same bytes as a file gets, with exit 0", () => {
    for (const [name, args] of cases()) {
      const file = toFile(args);
      expect(file.status, name).toBe(0);
      expect(file.bytes.length, name).toBeGreaterThan(2 * 1024 * 1024);
      const piped = throughSlowReader(args);
      expect(piped.stderr, name).toBe("");
      expect(piped.status, name).toBe(0);
      expect(piped.bytes.length, name).toBe(file.bytes.length);
      expect(piped.bytes.equals(file.bytes), name).toBe(true);
      console.log(`${name}: ${piped.bytes.length} bytes through the pipe`);
    }
  });

  it("a failing command's exit code survives a slow reader too (dump of a good and a missing file: exit 1)", () => {
    const args = ["dump", inputs.object, join(scratch, "missing.o"), "--format", "json"];
    const piped = throughSlowReader(args);
    expect(piped.status).toBe(1);
    expect(piped.bytes.equals(toFile(args).bytes)).toBe(true);
    expect(piped.stderr).toMatch(/missing.o: found ENOENT/);
  });

  it("a reader that closes early (| head -1) ends the command quietly, exit 0", () => {
    for (const [name, args] of cases()) {
      const r = intoHead(args);
      expect(r.line.split("\n").length, name).toBe(2); // one line and its newline
      expect(r.stderr, name).toBe("");
      expect(r.status, name).toBe(0);
    }
  });

  it("a command still writing when its reader closes (demo, run's progress) ends at once, quietly, exit 0", () => {
    // The shape of demo and run: a line now and then from a timer, no end in sight.
    const processIo = join(OUT_DIR, "src", "cli", "process-io.js");
    const script = `const { PROCESS_IO, endQuietlyWhenReaderCloses } = await import(${JSON.stringify(processIo)});
      endQuietlyWhenReaderCloses();
      let i = 0;
      setInterval(() => PROCESS_IO.stdout("line " + i++ + "\\n"), 5);
      setTimeout(() => { process.stderr.write("still running after 10 s\\n"); process.exit(5); }, 10_000);`;
    const started = Date.now();
    const r = intoHead(["--input-type=module", "-e", script], []);
    expect(r.line).toBe("line 0\n");
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(Date.now() - started).toBeLessThan(8_000);
  });

  it("run, its program's threads collecting, ends at once when the reader of its progress closes (exit 0, no hang)", () => {
    // process.exit() joined the thread pool, whose thread waited in rw_run_main for a program
    // thread that waited for a JavaScript callback: the process hung for ever (src/process-exit.ts).
    const program = join(HERE, "..", "native-runtime", "programs", "deep.ll");
    const built = spawnSync(process.execPath, [MAIN, "run", program, "--no-gc"], { encoding: "utf8", timeout: 120_000 });
    expect(built.stdout).toContain("result: 5000050000");
    const script = `"$@" 2>&1 | head -1; echo "\${PIPESTATUS[0]}" >&2`;
    const started = Date.now();
    const r = spawnSync("bash", ["-c", script, "bash", process.execPath, MAIN, "run", program, "--stress=50", "--verify", "--progress", "0.2"], {
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.stdout).toMatch(/^rootwalk run: [\d.]+ s, \d+ collections/);
    expect(r.stderr.trim()).toBe("0");
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 120_000);
});

it("the core behind the roots cases is deep enough to matter", () => {
  expect(statSync(inputs.core).size).toBeGreaterThan(1024 * 1024);
});
