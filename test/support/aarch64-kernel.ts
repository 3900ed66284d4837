import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { gzipSync } from "node:zlib";
import { cacheSubdir } from "../../src/toolchain/cache-dir.js";
import { cacheKey } from "../../src/toolchain/llvm-toolchain.js";
import { CORE_DIR } from "./aarch64-core-programs.js";
import { cpioNewc, type CpioEntry } from "./cpio-newc.js";
import { run } from "./gdb-compare.js";
import { AARCH64_SYSROOT } from "./qemu-aarch64.js";

/*
 * Cores the Linux kernel writes for AArch64 processes, on this x86-64 machine: qemu-system-aarch64
 * boots Debian's arm64 kernel (.ci/aarch64-kernel puts its vmlinuz under the cache's
 * aarch64-kernel/) with an initramfs of the init test/walker/core/kernel-init.c, the programs and
 * the cross C library (/lib/ld-linux-aarch64.so.1, /lib/libc.so.6: the sysroot's layout, so
 * gdb's `set sysroot` and `roots --sysroot` find the files the cores name). The init crashes
 * every program and prints each core on the console in base64; all cores come from one boot,
 * cached under the cache's walker-core/ by every input (kernel, init, programs, libraries, qemu's
 * version, its arguments).
 *
 * `-cpu max` with the implementation-defined pointer-authentication algorithm (fast under TCG,
 * unlike QARMA): the kernel enables PAC for user space, so a `-mbranch-protection=pac-ret` frame
 * really signs its return address and the core carries NT_ARM_PAC_MASK.
 */

export const QEMU_SYSTEM_AARCH64 = "qemu-system-aarch64";
const KERNEL_FOLDER = "aarch64-kernel";
const QEMU_ARGS = ["-M", "virt", "-cpu", "max,pauth-impdef=on", "-m", "256", "-nographic", "-no-reboot"];
const KERNEL_COMMAND_LINE = "console=ttyAMA0 panic=-1 loglevel=0";
const LIBRARIES = ["ld-linux-aarch64.so.1", "libc.so.6"];
const BOOT_TIMEOUT_MS = 300_000;

/** The arm64 kernel image to boot, or why there is none (the test says so and skips). */
export function arm64Kernel(): { kernel: string } | { missing: string } {
  const folder = cacheSubdir(KERNEL_FOLDER);
  const image = existsSync(folder) ? readdirSync(folder).find((f) => f.startsWith("vmlinuz-")) : undefined;
  if (image === undefined) return { missing: `no arm64 kernel in ${folder} (bash .ci/aarch64-kernel downloads Debian's)` };
  if (spawnSync(QEMU_SYSTEM_AARCH64, ["--version"]).status !== 0) return { missing: `${QEMU_SYSTEM_AARCH64} is not installed (Debian: qemu-system-arm)` };
  return { kernel: join(folder, image) };
}

export interface KernelCores {
  /** The core of each program, by its name. */
  cores: Map<string, string>;
  /** How long the boot that wrote them took, or undefined when they came from the cache. */
  bootSeconds: number | undefined;
}

/** The core the kernel wrote for each of `programs` (name -> path), from one boot or the cache. */
export function kernelCores(kernel: string, programs: ReadonlyMap<string, string>): KernelCores {
  const init = readFileSync(join(CORE_DIR, "kernel-init.c"));
  const qemuVersion = run(QEMU_SYSTEM_AARCH64, ["--version"]);
  const files = [...programs].sort(([a], [b]) => a.localeCompare(b));
  const key = cacheKey([
    "a64-kernel-cores",
    readFileSync(kernel),
    init,
    qemuVersion,
    JSON.stringify([QEMU_ARGS, KERNEL_COMMAND_LINE]),
    ...files.flatMap(([name, path]) => [name, readFileSync(path)]),
    ...LIBRARIES.map((l) => readFileSync(join(AARCH64_SYSROOT, "lib", l))),
  ]).slice(0, 16);
  const dir = join(cacheSubdir("walker-core"), `a64-kernel-${key}`);
  const cores = new Map(files.map(([name]) => [name, join(dir, `${name}.core`)]));
  if ([...cores.values()].every((c) => existsSync(c))) return { cores, bootSeconds: undefined };
  mkdirSync(dir, { recursive: true });
  run("aarch64-linux-gnu-gcc", ["-O2", "-static", "-o", join(dir, "init"), join(CORE_DIR, "kernel-init.c")]);
  const entries: CpioEntry[] = [
    { path: "dev", mode: 0o40755 },
    { path: "dev/console", mode: 0o20600, device: [5, 1] },
    { path: "init", mode: 0o100755, data: readFileSync(join(dir, "init")) },
    { path: "lib", mode: 0o40755 },
    ...LIBRARIES.map((l) => ({ path: `lib/${l}`, mode: 0o100755, data: readFileSync(join(AARCH64_SYSROOT, "lib", l)) })),
    { path: "progs", mode: 0o40755 },
    ...files.map(([name, path]) => ({ path: `progs/${name}`, mode: 0o100755, data: readFileSync(path) })),
  ];
  const initrd = join(dir, "initrd.gz");
  writeFileSync(initrd, gzipSync(cpioNewc(entries), { level: 1 }));
  const started = performance.now();
  const r = spawnSync(QEMU_SYSTEM_AARCH64, [...QEMU_ARGS, "-kernel", kernel, "-initrd", initrd, "-append", KERNEL_COMMAND_LINE], {
    encoding: "latin1",
    timeout: BOOT_TIMEOUT_MS,
    maxBuffer: 1 << 30,
  });
  const bootSeconds = (performance.now() - started) / 1000;
  const output = r.stdout ?? "";
  const written = consoleCores(output);
  for (const [name, path] of cores) {
    const bytes = written.get(name);
    if (bytes === undefined)
      throw new Error(
        `${basename(kernel)} under ${QEMU_SYSTEM_AARCH64} (exit ${r.status}, ${r.signal ?? "no signal"}, ${bootSeconds.toFixed(1)} s) wrote no core for ${name}; console ends:\n${output.slice(-3000)}\n${r.stderr}`,
      );
    writeFileSync(`${path}.tmp`, bytes);
    renameSync(`${path}.tmp`, path);
  }
  return { cores, bootSeconds };
}

/**
 * The cores kernel-init.c printed on the console (base64 lines of 57 bytes each and RW-ZEROS runs;
 * carriage returns dropped), each checked against
 * the size and FNV-1a hash printed before it: a line the kernel printed into one is caught.
 */
export function consoleCores(console: string): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  const lines = console.replace(/\r/g, "").split("\n");
  for (let i = 0; i < lines.length; i++) {
    const header = /^RW-CORE (\S+) (\d+) ([0-9a-f]{8})$/.exec(lines[i]!);
    if (header === null) continue;
    const [, name, size, hash] = header;
    const end = lines.indexOf(`RW-END ${name}`, i);
    if (end < 0) throw new Error(`console: the core of ${name} is cut short (no RW-END)`);
    const bytes = Buffer.concat(
      lines.slice(i + 1, end).map((l) => (l.startsWith("RW-ZEROS ") ? Buffer.alloc(Number(l.slice("RW-ZEROS ".length))) : Buffer.from(l, "base64"))),
    );
    if (bytes.length !== Number(size) || fnv1a32(bytes) !== hash)
      throw new Error(`console: the core of ${name} arrived with ${bytes.length} bytes, hash ${fnv1a32(bytes)}; expected ${size} bytes, hash ${hash}`);
    out.set(name!, bytes);
    i = end;
  }
  return out;
}

function fnv1a32(bytes: Uint8Array): string {
  let hash = 0x811c9dc5;
  for (const b of bytes) hash = Math.imul(hash ^ b, 0x01000193) >>> 0;
  return hash.toString(16).padStart(8, "0");
}
