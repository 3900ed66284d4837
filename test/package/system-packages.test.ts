import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { llvmInstallCommand } from "../../src/toolchain/llvm-selection.js";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";

/*
 * scripts/system-packages owns the list of system packages: npm start and npm test (prestart,
 * pretest) and .ci/run call it, the README, docs/contributing.md and the missing-LLVM message
 * quote it. A machine without what a profile needs is simulated with ROOTWALK_LLVM=15, a version
 * this machine does not have (the script looks for the LLVM rootwalk would choose), and an
 * unprivileged user without password-less sudo by running the script as `nobody` (when the
 * tests run as root) or as the tests' own user (when they do not, sudo failing without a terminal).
 */

const ROOT = repoRoot();
const SCRIPT = join(ROOT, "scripts/system-packages");

/**
 * A copy of the script that `nobody` can read: the checkout may sit where only its owner can enter
 * (a clone under /root, as on a fresh machine set up as root), and bash then fails with 126 before
 * the script runs. The script needs nothing of the checkout for the start profile.
 */
function nobodysCopy(): { script: string; cwd: string } {
  const folder = mkdtempSync(join(tmpdir(), "rootwalk-system-packages-"));
  mkdirSync(join(folder, "scripts"));
  copyFileSync(SCRIPT, join(folder, "scripts", "system-packages"));
  for (const path of [folder, join(folder, "scripts"), join(folder, "scripts", "system-packages")]) chmodSync(path, 0o755);
  return { script: join(folder, "scripts", "system-packages"), cwd: folder };
}

function script(args: string[], env: Record<string, string> = {}, asNobody = false) {
  const started = performance.now();
  const nobody = asNobody && process.getuid?.() === 0 ? nobodysCopy() : undefined;
  const command = nobody !== undefined ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "bash", nobody.script] : ["bash", SCRIPT];
  const r = spawnSync(command[0]!, [...command.slice(1), ...args], { encoding: "utf8", env: { ...process.env, ...env }, cwd: nobody?.cwd ?? ROOT });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, ms: performance.now() - started };
}

const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

describe("scripts/system-packages", () => {
  it("lists what a fresh machine gets for each profile", () => {
    expect(script(["--list", "start"]).stdout.trim()).toBe("gcc g++ llvm-19 llvm-19-tools llvm-19-dev");
    const test = script(["--list", "test"]).stdout.trim().split(" ");
    expect(test).toEqual(
      expect.arrayContaining(["llvm-14-dev", "llvm-19-dev", "qemu-user", "gdb-multiarch", "qemu-system-arm", "librsvg2-2", "chromium", "time"]),
    );
  });

  it("finds everything on this machine (it runs the suite) in well under a second per profile", () => {
    for (const profile of ["start", "test"]) {
      const r = script(["--check", profile]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.ms).toBeLessThan(3000);
    }
  });

  it("without the LLVM rootwalk would choose: one line naming the one command, exit 1", () => {
    const r = script(["--check", "start"], { ROOTWALK_LLVM: "15" });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    const sudo = process.getuid?.() === 0 ? "" : "sudo ";
    expect(r.stderr).toBe(
      `rootwalk: rootwalk run (and npm start) needs system packages that are missing: llvm-15 llvm-15-tools llvm-15-dev; install them with: ${sudo}apt-get install -y llvm-15 llvm-15-tools llvm-15-dev\n`,
    );
  });

  it("--install as a user who cannot install: the command to run, exit 1, within seconds, nothing installed", () => {
    const r = script(["--install", "start"], { ROOTWALK_LLVM: "15" }, true);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "rootwalk: rootwalk run (and npm start) needs system packages that are missing (no root, no password-less sudo to install them): run sudo apt-get install -y llvm-15 llvm-15-tools llvm-15-dev\n",
    );
    expect(r.ms).toBeLessThan(5000);
  });

  it("refuses a wrong use with its usage, exit 2", () => {
    const r = script(["--check"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^usage: scripts\/system-packages --check\|--install\|--list start\|test\n$/);
  });

  it("is what npm start, npm test and CI call, and what the docs and the missing-LLVM message quote", () => {
    const scripts = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts;
    expect(scripts.prestart).toBe("bash scripts/system-packages --install start");
    expect(scripts.pretest).toBe("bash scripts/system-packages --install test");
    expect(read(".ci/run")).toContain("\nbash scripts/system-packages --install test\n");
    const start = script(["--list", "start"]).stdout.trim();
    const test = script(["--list", "test"]).stdout.trim();
    expect(read("README.md")).toContain(`apt-get install -y ${start}`);
    expect(read("docs/contributing.md")).toContain(`apt-get install -y ${test}`);
    expect(`apt-get install -y ${start.replace("gcc g++ ", "")}`).toBe(llvmInstallCommand(19));
  });

  it("the CLI without its LLVM names the same packages and the script", () => {
    const r = spawnSync(process.execPath, [join(ROOT, "dist/src/cli/main.js"), "check", join(ROOT, "test/ll/call-chain.ll")], {
      encoding: "utf8",
      env: { ...process.env, ROOTWALK_LLVM: "15" },
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`install it with: ${llvmInstallCommand(15)} (in a rootwalk checkout: bash scripts/system-packages --install start)`);
  });
});
