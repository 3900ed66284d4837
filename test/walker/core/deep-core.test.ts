import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CoreFile } from "../../../src/core/core-file.js";
import { OUT_DIR, buildRunEntry } from "../../support/native-run.js";
import { buildDeepProgram, gcoreUnlimitedStack, gdbValue } from "./deep-core.js";

/*
 * `rootwalk roots` on cores of deep.ll/deep.c (see deep.c), all written under `ulimit -s
 * unlimited`, where libc is the first NT_FILE mapping:
 *   deep    150,000 C frames between the managed frame and the stop; its root in rbx all the way
 *   nocfi   stopped in a function without CFI
 *   entry   stopped at mgd_hold's first instruction (managed code, no safepoint)
 *   leaf    stopped in a C function called from managed code without a statepoint
 *   big     the kernel's core of the same program with a 2.5 GiB mapping: over 2 GiB, sparse
 */

const DEPTH = 150_000;
const scratch = mkdtempSync(join(tmpdir(), "rootwalk-deep-core-"));
const pattern = readFileSync("/proc/sys/kernel/core_pattern", "utf8").trim();
const kernelWritesCores = !pattern.startsWith("|") && !pattern.includes("/");
let program = "";
const cores = { deep: "", nocfi: "", entry: "", leaf: "" };

interface JsonFrame {
  kind: string;
  function: string | null;
  cfa: string | null;
  roots: { slot?: string; register?: string; value: string }[];
}
interface JsonThread {
  tid: number;
  inManagedCode: boolean;
  stopReason: string;
  stopDetail: string;
  frames: JsonFrame[];
}

function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(OUT_DIR, "src", "cli", "main.js"), ...args], { encoding: "utf8", timeout: 120_000, maxBuffer: 1 << 28 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function rootsJson(core: string, ...more: string[]): JsonThread {
  const r = cli(["roots", core, program, "--json", ...more]);
  expect(r.status, r.stderr).toBe(0);
  const threads = (JSON.parse(r.stdout) as { threads: JsonThread[] }).threads;
  expect(threads).toHaveLength(1);
  return threads[0]!;
}

beforeAll(() => {
  buildRunEntry();
  program = buildDeepProgram();
  cores.deep = join(scratch, "core-deep");
  gcoreUnlimitedStack(program, cores.deep, "rw_core_stop", DEPTH);
  cores.nocfi = join(scratch, "core-nocfi");
  gcoreUnlimitedStack(program, cores.nocfi, "rw_stop_nocfi", 3);
  cores.entry = join(scratch, "core-entry");
  gcoreUnlimitedStack(program, cores.entry, "mgd_hold", 3);
  cores.leaf = join(scratch, "core-leaf");
  gcoreUnlimitedStack(program, cores.leaf, "rw_leaf_stop", 3);
}, 300_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("roots on a core of the legacy layout (ulimit -s unlimited)", () => {
  it("the first mapping is not the program, and EXECUTABLE is matched by AT_PHDR, not by order", () => {
    const core = CoreFile.open(cores.deep);
    try {
      expect(core.files[0]!.path).not.toBe(program);
      expect(core.files[0]!.path).toMatch(/libc|ld-linux/);
      expect(core.executablePath()).toBe(program);
    } finally {
      core.close();
    }
    const text = cli(["roots", cores.deep, program]);
    expect(text.status, text.stderr).toBe(0);
    expect(text.stderr).toBe("");
    expect(text.stdout).toMatch(/ mgd_hold {2}\[managed\]\n {8}root rbx = 0x[0-9a-f]+\n/);
  });
});

describe("roots output", () => {
  it("a root held in a register is named by it (text: `root rbx`, JSON: register), and it is the object", () => {
    const object = gdbValue(program, cores.deep, "&object");
    const text = cli(["roots", cores.deep, program]).stdout;
    expect(text).toContain(`        root rbx = 0x${object.toString(16)}\n`);
    expect(text).not.toMatch(/root \[-/);
    const managed = rootsJson(cores.deep).frames.filter((f) => f.kind === "managed");
    expect(managed.map((f) => f.function)).toEqual(["mgd_hold"]);
    expect(managed[0]!.roots).toEqual([{ register: "rbx", value: `0x${object.toString(16)}` }]);
  });

  it(`walks past 100,000 frames by default (${DEPTH} C frames deep), and --max-depth N stops at N`, () => {
    const whole = rootsJson(cores.deep);
    expect(whole.stopReason).toBe("stack-end");
    expect(whole.frames.length).toBeGreaterThan(DEPTH);
    expect(whole.frames.filter((f) => f.function === "deep-prog!c_descend+0x1f").length).toBe(DEPTH);
    const limited = rootsJson(cores.deep, "--max-depth", "1000");
    expect(limited.frames).toHaveLength(1000);
    expect(limited.stopReason).toBe("depth-limit");
    expect(limited.stopDetail).toMatch(/--max-depth limit \(1000/);
    const text = cli(["roots", cores.deep, "--max-depth=1000"]);
    expect(text.stdout).toMatch(/ {2}1000 frames, 0 roots; depth-limit: 1000 frames, the --max-depth limit/);
    for (const bad of ["0", "-5", "1.5", "many", "2000000000"]) {
      const r = cli(["roots", cores.deep, `--max-depth=${bad}`]);
      expect(r.status, bad).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toBe(`rootwalk: --max-depth: found ${bad}, expected a whole number of frames from 1 to 1000000000\n`);
    }
  });

  it("a core that cannot be read is one line naming it once", () => {
    const missing = join(scratch, "no-such-core");
    const r = cli(["roots", missing]);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`rootwalk: ${missing}: found ENOENT, expected a readable core file\n`);
  });

  it("a thread stopped where there is no CFI still shows frame #0 with its symbol", () => {
    const t = rootsJson(cores.nocfi);
    expect(t.stopReason).toBe("no-unwind-info");
    expect(t.frames).toHaveLength(1);
    expect(t.frames[0]).toMatchObject({ kind: "native", function: "deep-prog!rw_stop_nocfi", cfa: null });
    expect(cli(["roots", cores.nocfi, program]).stdout).toMatch(
      /^thread \d+\n {2}#0 {2}pc 0x[0-9a-f]+ {2}sp 0x[0-9a-f]+ {2}cfa \? {2}deep-prog!rw_stop_nocfi {2}\[native\]\n {2}1 frames, 0 roots; no-unwind-info: .*no CFI/,
    );
  });

  it("inManagedCode is true exactly when frame #0 is managed code not at a safepoint", () => {
    const entry = rootsJson(cores.entry);
    expect(entry.frames[0]!.kind).toBe("managed-unsafe");
    expect(entry.inManagedCode).toBe(true);
    const leaf = rootsJson(cores.leaf);
    expect(leaf.frames.map((f) => f.kind).slice(0, 2)).toEqual(["native", "managed-unsafe"]);
    expect(leaf.inManagedCode).toBe(false);
    expect(cli(["roots", cores.leaf, program]).stdout).toMatch(/^thread \d+\n/);
    expect(cli(["roots", cores.entry, program]).stdout).toMatch(/^thread \d+: stopped inside managed code/);
  });
});

describe.skipIf(!kernelWritesCores)(`roots on a core over 2 GiB (the kernel's, core_pattern ${pattern})`, () => {
  let core = "";
  beforeAll(() => {
    const dir = join(scratch, "big");
    spawnSync("mkdir", ["-p", dir]);
    const r = spawnSync("sh", ["-c", 'ulimit -s unlimited && ulimit -c unlimited && exec "$0" 3 big', program], {
      cwd: dir,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.signal, r.stderr).toBe("SIGABRT");
    core = join(
      dir,
      readdirSync(dir).find((f) => f.startsWith("core"))!,
    );
  }, 120_000);

  it("is read by positioned reads: the walk finds the root, memory stays far below the file size", () => {
    const sizeBytes = statSync(core).size;
    expect(sizeBytes).toBeGreaterThan(2 ** 31);
    // In a child process, so that its peak memory is the command's own.
    const main = join(OUT_DIR, "src", "cli", "main.js");
    const script = `const { runCli } = await import(${JSON.stringify(main)}); let out = "", err = "";
      const code = await runCli(["roots", ${JSON.stringify(core)}, ${JSON.stringify(program)}], { stdout: (t) => (out += t), stderr: (t) => (err += t) });
      process.stdout.write(JSON.stringify({ code, out, err, maxRssBytes: process.resourceUsage().maxRSS * 1024 }));`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 120_000 });
    const result = JSON.parse(r.stdout) as { code: number; out: string; err: string; maxRssBytes: number };
    expect(result.code, result.err).toBe(0);
    const object = gdbValue(program, core, "&object");
    expect(result.out).toMatch(new RegExp(` mgd_hold {2}\\[managed\\]\\n {8}root \\[0x[0-9a-f]+\\] = 0x${object.toString(16)}\\n`));
    console.log(`core of ${sizeBytes} bytes walked with a peak of ${(result.maxRssBytes / 2 ** 20).toFixed(0)} MiB`);
    expect(result.maxRssBytes).toBeLessThan(300 * 2 ** 20);
  });
});
