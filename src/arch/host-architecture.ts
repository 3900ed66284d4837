import { InvalidArgumentError } from "../errors.js";
import type { Architecture } from "./architecture.js";
import { ARCHITECTURES } from "./elf-architecture.js";

/**
 * The architecture of the process rootwalk runs in, from Node's `process.arch`: what `rootwalk
 * run` builds its native runtime and the program for, and how the thread records it shares with
 * that runtime are laid out (src/native/thread-record.ts). On an x86-64 machine running the arm64
 * Node under qemu-user this is AArch64, and the build cross-compiles (src/toolchain/target-gcc.ts).
 */
export function hostArchitecture(nodeArch: string = process.arch): Architecture {
  const found = ARCHITECTURES.find((a) => a.nodeArch === nodeArch);
  if (found !== undefined) return found;
  throw new InvalidArgumentError(
    "Node's process.arch",
    nodeArch,
    `${ARCHITECTURES.map((a) => `${a.nodeArch} (${a.name})`).join(" or ")}: rootwalk runs programs on x86-64 and AArch64 Linux only`,
  );
}
