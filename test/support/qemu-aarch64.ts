import { AARCH64 } from "../../src/arch/aarch64.js";

/*
 * Running AArch64 programs on this x86-64 machine: binfmt_misc is not mounted in these sandboxes,
 * so an AArch64 executable is started through qemu-user, with the cross C library as its sysroot
 * (Debian: qemu-user, libc6-dev-arm64-cross). Programs it execs that are x86-64 (llc, gcc) run
 * natively.
 */

export const QEMU_AARCH64 = "qemu-aarch64";
export const AARCH64_SYSROOT = `/usr/${AARCH64.linuxTriple}`;

/** The command and arguments that run AArch64 executable `exe` with `args` (and qemu's own `qemuFlags`). */
export function qemuAarch64(exe: string, args: readonly string[] = [], qemuFlags: readonly string[] = []): [command: string, args: string[]] {
  return [QEMU_AARCH64, [...qemuFlags, "-L", AARCH64_SYSROOT, exe, ...args]];
}
