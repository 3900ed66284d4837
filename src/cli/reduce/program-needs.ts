/**
 * What a candidate of `rootwalk reduce` must keep to be a program at all (docs/writing-programs.md):
 * `rw_main` defined with the original's GC strategy, and, in its body, the call of `gc_init` with the
 * original's stack map symbol (`@__LLVM_StackMaps` or `@"_GC_MAP_name"`); the runtime functions it
 * still declares keep their parameters. A candidate without them
 * may still "fail" (a check finding in a function that no longer runs), but not as the program did.
 * Read from the IR text: the reducer's candidates are textual IR (llvm-reduce writes .ll).
 */
export interface ProgramNeeds {
  /** `statepoint-example` or `plimmix`. */
  readonly strategy: string;
  /** The symbol gc_init is given, without quotes (`__LLVM_StackMaps`, `_GC_MAP_x`). */
  readonly mapSymbol: string;
  /** Each runtime function the original declares (`gc_alloc`) -> its number of parameters. */
  readonly runtimeArity: Readonly<Record<string, number>>;
}

/**
 * `declare ... @gc_NAME(PARAMS)` -> NAME's parameter count. llvm-reduce's arguments pass would
 * otherwise reduce `gc_alloc(i64, i64)` to `gc_alloc()`: a call the runtime reads garbage sizes
 * from, another program than the one that failed, even if it happens to fail the same way.
 */
function runtimeArity(text: string): Record<string, number> {
  const arity: Record<string, number> = {};
  for (const m of text.matchAll(/^declare [^\n]*?@(gc_\w+)\(([^)\n]*)\)/gm)) arity[m[1]!] = m[2]!.trim() === "" ? 0 : m[2]!.split(",").length;
  return arity;
}

/** rw_main's `define` line and its body up to the closing `}`, or undefined when not defined. */
function rwMainBody(text: string): { header: string; body: string } | undefined {
  const start = /^define [^\n]*@rw_main\([^\n]*$/m.exec(text);
  if (start === null) return undefined;
  const end = text.indexOf("\n}", start.index);
  return { header: start[0], body: text.slice(start.index, end < 0 ? text.length : end) };
}

const GC_INIT_CALL = /call void @gc_init\([^\n]*?@("[^"\n]+"|[\w.$-]+)\s*\)/;

/** gc_init's symbol without LLVM's quotes: llvm-reduce prints `@"_GC_MAP_a-b"` as `@_GC_MAP_a-b`. */
function mapSymbolOf(body: string): string | undefined {
  return GC_INIT_CALL.exec(body)?.[1]?.replace(/^"(.*)"$/, "$1");
}

/** The needs of the original program, or a one-line reason why it cannot be reduced as a program. */
export function programNeeds(text: string): ProgramNeeds | { missing: string } {
  const main = rwMainBody(text);
  if (main === undefined) return { missing: "no definition of @rw_main" };
  const strategy = /\bgc "([^"]+)"/.exec(main.header)?.[1];
  if (strategy === undefined) return { missing: '@rw_main has no GC strategy (gc "statepoint-example" or gc "plimmix")' };
  const mapSymbol = mapSymbolOf(main.body);
  if (mapSymbol === undefined) return { missing: "@rw_main does not call @gc_init with a stack map symbol" };
  return { strategy, mapSymbol, runtimeArity: runtimeArity(text) };
}

/** Whether candidate IR text still has what the original needed to run. */
export function keepsNeeds(text: string, needs: ProgramNeeds): boolean {
  const main = rwMainBody(text);
  if (main === undefined || !main.header.includes(`gc "${needs.strategy}"`)) return false;
  if (mapSymbolOf(main.body) !== needs.mapSymbol) return false;
  return Object.entries(runtimeArity(text)).every(([name, count]) => needs.runtimeArity[name] === undefined || needs.runtimeArity[name] === count);
}
