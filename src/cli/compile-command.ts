import { parseTargetOption } from "../arch/target-option.js";
import { X86_64 } from "../arch/x86-64.js";
import { InvalidArgumentError } from "../errors.js";
import { COMMAND_USAGE } from "./command-usage.js";
import { refuseSpecialFile } from "../loader/input-file.js";
import { parseOptions } from "./options.js";
import { checkOutputPath } from "./output-path.js";
import type { CliIo } from "./process-io.js";

/**
 * `rootwalk compile [--statepoint | --plimmix] [--llc-flag FLAG]... [--opt-flag FLAG]... [--llvm
 * VERSION] [--no-check | --strict-check] FILE.ll -o OUT.o` (docs/cli.md "rootwalk compile"): rootwalk check
 * first (its findings are warnings, or errors under --strict-check), then opt/llc
 * (src/toolchain/compile-program.ts). Prints the object's path.
 */
export async function compileCli(args: readonly string[], io: CliIo): Promise<number> {
  const o = parseOptions(COMMAND_USAGE["compile"]!.options, args);
  if (o.has("--statepoint") && o.has("--plimmix")) throw new InvalidArgumentError("compile", "--statepoint and --plimmix", "at most one of them");
  const output = o.value("-o");
  if (o.positional.length !== 1 || output === undefined)
    throw new InvalidArgumentError("compile", `${o.positional.length} inputs${output ? "" : ", no -o"}`, "one FILE.ll and -o OUT.o");
  refuseSpecialFile(o.positional[0]!, "a readable .ll file");
  checkOutputPath(output, "-o");
  const { compileProgramTo } = await import("../toolchain/compile-program.js");
  const { activeLlvm } = await import("../toolchain/llvm-selection.js");
  const llvm = activeLlvm(o.value("--llvm")); // a bad --llvm is the one line, before any warning about the source
  const mode = o.has("--statepoint") ? "statepoint" : o.has("--plimmix") ? "plimmix" : "plain";
  const target = o.has("--target") ? parseTargetOption(o.value("--target")!) : undefined;
  if (target !== undefined && mode === "plimmix" && target !== X86_64)
    throw new InvalidArgumentError("--target", o.value("--target")!, `${X86_64.name} with --plimmix (the plimmix plugin and _GC_MAP_ are x86-64 only)`);
  const { checkBeforeBuild } = await import("./check-command.js");
  if (!o.has("--no-check") && !(await checkBeforeBuild(o.positional, o.has("--strict-check"), io.stderr, "rootwalk compile", target, { llvm }))) return 1;
  await compileProgramTo(o.positional[0]!, output, {
    mode,
    llvm,
    ...(target !== undefined ? { target } : {}),
    llcFlags: o.values("--llc-flag"),
    optFlags: o.values("--opt-flag"),
    onWarning: (line) => io.stderr(`rootwalk: ${line}\n`),
  });
  io.stdout(`${output}\n`);
  return 0;
}
