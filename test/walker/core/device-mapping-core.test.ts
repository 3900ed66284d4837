import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
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

describe("rootwalk roots on a core that maps a device", () => {
  it("walks the thread and leaves /dev/zero unread", () => {
    buildRunEntry();
    const program = join(scratch, "device-map");
    run("gcc", ["-O1", "-g", join(HERE, "device-map.c"), "-o", program]);
    const core = join(scratch, "core");
    gdbStopAndCore(program, core, "stop_here");
    expect(spawnSync("grep", ["-c", "/dev/zero", core], { encoding: "utf8" }).stdout.trim()).not.toBe("0");
    const r = spawnSync(process.execPath, [CLI, "roots", core, program], { encoding: "utf8", timeout: 30_000 });
    expect([r.status, r.signal, r.stderr]).toEqual([0, null, ""]);
    expect(r.stdout).toMatch(/device-map!stop_here {2}\[native\]\n.*device-map!main\+.*\n(.*\n)* {2}\d+ frames, 0 roots; end of stack\n$/);
  }, 120_000);
});
