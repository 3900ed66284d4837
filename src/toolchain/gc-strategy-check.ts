import { readFileSync } from "node:fs";
import { InvalidArgumentError, ToolError } from "../errors.js";
import type { CompileMode } from "./compile-mode.js";

/**
 * Which GC strategies a program's functions name (`define ... gc "NAME"`), checked against the
 * compile mode before opt and llc run, so a toolchain mistake gets one line naming the flag:
 *   - `gc "plimmix"` without --plimmix: opt/llc abort with "LLVM ERROR: unsupported GC: plimmix"
 *     and a stack dump (the strategy lives in rootwalk's plugin, loaded only with --plimmix);
 *   - `gc "statepoint-example"` without --statepoint (`compile`): llc makes an object with no
 *     stack map at all, silently (RewriteStatepointsForGC never ran): a warning;
 *   - no strategy at all in statepoint mode: llc emits no stack map, so a program naming
 *     `@__LLVM_StackMaps` fails to load ("undefined symbol"): a warning.
 * Only text IR can be read here; for bitcode the opt/llc diagnostic is translated afterwards
 * (explainUnsupportedGc).
 */

/** The GC strategies of each `define` of an LLVM IR text, by name (first function named for each). */
export function gcStrategiesOf(irText: string): Map<string, string> {
  const firstFunctionByStrategy = new Map<string, string>();
  for (const match of irText.matchAll(/^define\b[^\n]*?@("[^"]*"|[\w.$-]+)[^\n]*?\bgc "([^"]*)"/gm)) {
    const strategy = match[2]!;
    if (!firstFunctionByStrategy.has(strategy)) firstFunctionByStrategy.set(strategy, match[1]!);
  }
  return firstFunctionByStrategy;
}

const STRATEGY_FLAG: Record<string, "--plimmix" | "--statepoint"> = { plimmix: "--plimmix", "statepoint-example": "--statepoint" };

/** Bitcode starts "BC" 0xC0DE (or the 0x0B17C0DE wrapper): not text to scan. */
function isBitcode(bytes: Uint8Array): boolean {
  return (bytes[0] === 0x42 && bytes[1] === 0x43) || (bytes[0] === 0xde && bytes[1] === 0xc0);
}

/**
 * Checks `source`'s strategies against `mode`: throws (one line, exit 1) where opt or llc would
 * abort, returns the warnings where they would silently build an object without stack maps.
 * Run compiles in statepoint mode unless --plimmix, compile in plain mode without a flag.
 */
export function checkGcStrategies(source: string, mode: CompileMode): string[] {
  let bytes: Buffer;
  try {
    bytes = readFileSync(source);
  } catch {
    return []; // unreadable: compileToObject says so
  }
  if (isBitcode(bytes)) return [];
  const text = bytes.toString("utf8");
  const strategies = gcStrategiesOf(text);
  const plimmixFunction = strategies.get("plimmix");
  if (plimmixFunction !== undefined && mode !== "plimmix") {
    throw new InvalidArgumentError(
      source,
      `gc "plimmix" (function @${plimmixFunction}) without --plimmix`,
      "add --plimmix: the strategy is rootwalk's LLVM plugin, loaded only with that flag",
    );
  }
  const statepointFunction = strategies.get("statepoint-example");
  if (statepointFunction !== undefined && mode === "plimmix") {
    throw new InvalidArgumentError(
      source,
      `gc "statepoint-example" (function @${statepointFunction}) with --plimmix`,
      `gc "plimmix" functions only (drop --plimmix for statepoint code)`,
    );
  }
  // Already rewritten (gc.statepoint calls present): llc makes its stack maps without opt.
  if (statepointFunction !== undefined && mode === "plain" && !text.includes("@llvm.experimental.gc.statepoint")) {
    return [
      `${source}: warning: function @${statepointFunction} uses gc "statepoint-example" but --statepoint was not given: the object has no stack maps (add --statepoint)`,
    ];
  }
  // Only a module that names its map expects one (a helper module without GC code needs none).
  const namesItsMap = /@__LLVM_StackMaps\b|@"?_GC_MAP_/.test(text);
  if (strategies.size === 0 && mode !== "plain" && namesItsMap) {
    return [
      `${source}: warning: no function has a GC strategy (gc "${mode === "plimmix" ? "plimmix" : "statepoint-example"}"): llc emits no stack map for it${mode === "statepoint" ? " and @__LLVM_StackMaps stays undefined" : ""}`,
    ];
  }
  return [];
}

/**
 * opt/llc's "LLVM ERROR: unsupported GC: NAME" (bitcode, or a strategy rootwalk does not know) as
 * one line naming the flag that provides the strategy, or what the strategies are.
 */
export function explainUnsupportedGc(error: unknown, source: string): unknown {
  if (!(error instanceof ToolError)) return error;
  const match = /unsupported GC: (\S+)/.exec(error.message);
  if (match === null) return error;
  const flag = STRATEGY_FLAG[match[1]!];
  const expected = flag !== undefined ? `add ${flag}` : 'gc "statepoint-example" (--statepoint) or gc "plimmix" (--plimmix)';
  return new InvalidArgumentError(source, `gc "${match[1]}", which ${error.tool} does not know here`, expected);
}
