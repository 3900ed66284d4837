import type { Architecture } from "../arch/architecture.js";
import { ToolError } from "../errors.js";
import { runTool } from "./llvm-toolchain.js";

/**
 * The C compiler (and linker driver) that builds native code for `architecture` here: `gcc` when
 * it targets that architecture (the first part of `gcc -dumpmachine` is the architecture's, so a
 * native gcc on an AArch64 machine), else the cross compiler named by the architecture's triple,
 * `aarch64-linux-gnu-gcc` (Debian: gcc-aarch64-linux-gnu and libc6-dev-arm64-cross). The second
 * case is how rootwalk is tested on AArch64: the arm64 Node runs under qemu-user on an x86-64
 * machine, and the tools it starts (gcc, llc) are the machine's own x86-64 programs. Memoized.
 */
export function targetGcc(architecture: Architecture): string {
  let gcc = chosen.get(architecture.linuxTriple);
  if (gcc === undefined) {
    gcc = choose(architecture);
    chosen.set(architecture.linuxTriple, gcc);
  }
  return gcc;
}

const chosen = new Map<string, string>();

function targetsArchitecture(gcc: string, architecture: Architecture): boolean {
  try {
    return runTool(gcc, ["-dumpmachine"]).trim().split("-")[0] === architecture.linuxTriple.split("-")[0];
  } catch {
    return false;
  }
}

function choose(architecture: Architecture): string {
  if (targetsArchitecture("gcc", architecture)) return "gcc";
  const cross = `${architecture.linuxTriple}-gcc`;
  if (targetsArchitecture(cross, architecture)) return cross;
  throw new ToolError(
    cross,
    `not found: gcc does not build code for ${architecture.name} here, and rootwalk needs ${cross} to build the native runtime and programs for it (Debian: apt-get install gcc-${architecture.linuxTriple.replace(/_/g, "-")})`,
  );
}
