import { InvalidArgumentError } from "../errors.js";
import type { Architecture } from "./architecture.js";
import { AARCH64 } from "./aarch64.js";
import { X86_64 } from "./x86-64.js";

/**
 * `--target x86-64|aarch64` (compile, check, run): the machine code is built or checked for. Its
 * description (src/arch) gives llc's and opt's `-mtriple` (`linuxTriple`), so no user spells a
 * triple through --llc-flag/--opt-flag. The spellings are the command line's, lower case.
 */
export const TARGET_NAMES: Readonly<Record<string, Architecture>> = { "x86-64": X86_64, aarch64: AARCH64 };

/** The architecture `--target` names; anything else is one line naming it and the two known ones. */
export function parseTargetOption(text: string): Architecture {
  const found = Object.hasOwn(TARGET_NAMES, text) ? TARGET_NAMES[text] : undefined;
  if (found === undefined) throw new InvalidArgumentError("--target", JSON.stringify(text), Object.keys(TARGET_NAMES).join(" or "));
  return found;
}
