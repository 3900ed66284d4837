import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gdbStopAndCore, run } from "../../support/gdb-compare.js";
import { CLI, buildRunEntry } from "../../support/native-run.js";

/*
 * `rootwalk roots` on a gcore of device-map.c, whose NT_FILE note names /dev/zero (mapped by the
 * program). Every mapped file is read (its build id, its stack maps): a device must be left out as
 * a file that cannot be read is, not read to an end it never reaches (the walk then hung, taking
 * memory until Node gave up).
 */

const HERE = dirname(fileURLToPath(import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "rootwalk-device-core-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let program = "";
let core = "";

beforeAll(() => {
  buildRunEntry();
  program = join(scratch, "device-map");
  run("gcc", ["-O1", "-g", join(HERE, "device-map.c"), "-o", program]);
  core = join(scratch, "core");
  gdbStopAndCore(program, core, "stop_here");
}, 120_000);

function roots(...args: string[]): ReturnType<typeof spawnSync> & { stdout: string; stderr: string } {
  return spawnSync(process.execPath, [CLI, "roots", ...args], { encoding: "utf8", timeout: 30_000 });
}

describe("rootwalk roots on a core that maps a device", () => {
  it("walks the thread and leaves /dev/zero unread", () => {
    expect(spawnSync("grep", ["-c", "/dev/zero", core], { encoding: "utf8" }).stdout.trim()).not.toBe("0");
    const r = roots(core, program);
    expect([r.status, r.signal, r.stderr]).toEqual([0, null, ""]);
    expect(r.stdout).toMatch(/device-map!stop_here {2}\[native\]\n.*device-map!main\+.*\n(.*\n)* {2}\d+ frames, 0 roots; end of stack\n$/);
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
