import { readFileSync } from "node:fs";
import { join } from "node:path";
import { RootwalkError } from "../errors.js";
import { repoRoot } from "../toolchain/llvm-toolchain.js";
import { activeLlvm, SUPPORTED_LLVM_MAJORS } from "../toolchain/llvm-selection.js";

/**
 * `rootwalk --version`: rootwalk's own version and the LLVM it would drive, chosen as every
 * command chooses (ROOTWALK_LLVM, else the newest installed of 14..19). No LLVM is not an error
 * here: the line says so, since dump/walk/sim work without one.
 */
export function versionReport(): string {
  const { version } = JSON.parse(readFileSync(join(repoRoot(), "package.json"), "utf8")) as { version: string };
  let llvmLine: string;
  try {
    const llvm = activeLlvm();
    llvmLine = `LLVM ${llvm.version} (${llvm.chosenBy}: ${llvm.tool("llc")})`;
  } catch (error) {
    if (!(error instanceof RootwalkError)) throw error;
    llvmLine = `LLVM: none usable (${error.message.split("\n")[0]})`;
  }
  return `rootwalk ${version}\n${llvmLine}\nsupported LLVM: ${SUPPORTED_LLVM_MAJORS.join(", ")}\n`;
}
