import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { walkCore } from "../../../src/cli/roots-command.js";
import { gdbStopAndCore, run } from "../../support/gdb-compare.js";
import { CLI, buildRunEntry } from "../../support/native-run.js";

/*
 * `rootwalk roots` on a gcore of device-map.c, whose NT_FILE note names /dev/zero and a sparse
 * data file of a GiB (both mapped by the program). Every mapped file is looked at (its build id,
 * its stack maps): a device must be left out as a file that cannot be read is, not read to an end
 * it never reaches (the walk then hung, taking memory until Node gave up); a data file is no ELF
 * module and must be left out after reading its first bytes (it was read whole, twice, and then
 * ended the command as "not an ELF file"). The same core then takes wrong EXECUTABLE arguments.
 */

const HERE = dirname(fileURLToPath(import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "rootwalk-device-core-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let program = "";
let core = "";
let dataFile = "";
const DATA_FILE_BYTES = 2 ** 30;
/** The CLI's peak resident memory on this core: Node itself, the core's headers, libc's image. */
const MAX_RSS_KIB = 300 * 1024;

beforeAll(() => {
  buildRunEntry();
  program = join(scratch, "device-map");
  run("gcc", ["-O1", "-g", join(HERE, "device-map.c"), "-o", program]);
  core = join(scratch, "core");
  dataFile = join(scratch, "data.bin");
  writeFileSync(dataFile, "not an ELF file\n");
  truncateSync(dataFile, DATA_FILE_BYTES); // sparse: no disk space
  process.env["RW_MAPPED_FILE"] = dataFile;
  gdbStopAndCore(program, core, "stop_here");
}, 120_000);

function roots(...args: string[]): ReturnType<typeof spawnSync> & { stdout: string; stderr: string } {
  return spawnSync(process.execPath, [CLI, "roots", ...args], { encoding: "utf8", timeout: 30_000 });
}

describe("rootwalk roots on a core that maps a device", () => {
  it("walks the thread and leaves /dev/zero and the data file unread", () => {
    for (const path of ["/dev/zero", dataFile]) expect(spawnSync("grep", ["-c", path, core], { encoding: "utf8" }).stdout.trim()).not.toBe("0");
    // GNU time's %M: the peak resident set in KiB, written after the command's own stderr.
    const r = spawnSync("/usr/bin/time", ["-f", "RSS %M", process.execPath, CLI, "roots", core, program], { encoding: "utf8", timeout: 60_000 });
    const [stderr, rss] = r.stderr.split(/RSS (?=\d+\n$)/);
    expect([r.status, r.signal, stderr]).toEqual([0, null, ""]);
    expect(r.stdout).toMatch(/device-map!stop_here {2}\[native\]\n.*device-map!main\+.*\n(.*\n)* {2}\d+ frames, 0 roots; end of stack\n$/);
    expect(Number(rss)).toBeLessThan(MAX_RSS_KIB);
  }, 60_000);

  it("an address inside the data file's mapping ends a walk after 64 bytes of the file, not a read of the GiB", () => {
    const walk = walkCore(core, program);
    const data = walk.modules.moduleAt(walk.modules.modules.find((m) => m.path === dataFile)!.start)!;
    const before = process.memoryUsage().arrayBuffers;
    let message = "";
    try {
      data.elf();
    } catch (e) {
      message = (e as Error).message;
    }
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * 2 ** 20);
    expect(message).toMatch(/^module .*data\.bin: ELF header at offset 0x0: found not a 64-bit little-endian ELF file/);
  });

  it("refuses an EXECUTABLE that cannot be the program, in one line naming it (it was walked past with exit 0)", () => {
    const folder = join(scratch, "a-folder");
    mkdirSync(folder, { recursive: true });
    const text = join(scratch, "notes.txt");
    writeFileSync(text, "not a program\n");
    const arm64 = join(scratch, "arm64-program");
    writeFileSync(`${arm64}.c`, "int main(void) { return 0; }\n");
    run("aarch64-linux-gnu-gcc", [`${arm64}.c`, "-o", arm64]);
    const missing = join(scratch, "no-such-program");
    const cases: [string, string][] = [
      [missing, `rootwalk: ${missing}: no such file or folder\n`],
      [folder, `rootwalk: ${core}: ${folder}: found not a regular file, expected an ELF file\n`],
      [text, `rootwalk: ${core}: ${text}: ELF header at offset 0x0: found 14 bytes, expected 64\n`],
      [arm64, `rootwalk: ${core}: ${arm64}: found an AArch64 program, expected the x86-64 program the core was written by\n`],
      [
        "/bin/true",
        expect.stringMatching(
          /^rootwalk: .*: \/bin\/true: found build id [0-9a-f]+, expected build id [0-9a-f]+ \(the file mapped when the core was written\)\n$/,
        ),
      ],
    ];
    for (const [executable, line] of cases) {
      const r = roots(core, executable);
      expect([r.status, r.stdout, r.stderr], executable).toEqual([1, "", line]);
    }
  }, 60_000);

  it("refuses a --sysroot that is no directory (a typo was ignored: the host's files were read instead)", () => {
    for (const sysroot of [join(scratch, "no-such-sysroot"), program, ""]) {
      const r = roots(core, program, "--sysroot", sysroot);
      expect([r.status, r.stdout, r.stderr]).toEqual([
        1,
        "",
        `rootwalk: --sysroot: found ${JSON.stringify(sysroot)}, expected a directory (where the files the core names are looked for first)\n`,
      ]);
    }
  }, 60_000);
});
