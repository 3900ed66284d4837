import { InvalidArgumentError } from "../errors.js";
import { refuseSpacedCount } from "./parse-stress.js";

/*
 * The one option parser of every command. A command's option table (src/cli/command-usage.ts:
 * spelling -> meaning, what `COMMAND --help` prints) is also what it parses: the spelling says
 * the syntax, so an option cannot be parsed without being documented, or documented without
 * being parsed.
 *
 *   "--json"            a flag; `--json=x` is refused
 *   "--heap SIZE"       a value: `--heap 16M` or `--heap=16M` (the metavariable is for the help)
 *   "--llc-flag=FLAG"   the same (the help shows the `=` spelling)
 *   "-o OUT.o"          a one-dash option: `-o OUT.o` only
 *   "--stress[=N]"      a value only after '=': bare `--stress` is "", `--stress 100` is refused
 *                       (the next word is never taken: a bare `--stress` is complete)
 *   "EXECUTABLE"        not an option (a positional argument the help explains)
 *
 * Every valued option may be given more than once; `value` is the last (a later `--heap` wins),
 * `values` all of them in order (the repeatable ones: `--llc-flag`, `--collects`). Anything not
 * starting with `--` (and not a one-dash option of the table) is positional, `-` (stdin) too.
 * An unknown option is refused with one line naming every accepted one:
 * "option: found --bogus, expected --a, --b" (test/cli/help-options.test.ts reads that line).
 */

type OptionSyntax = "flag" | "value" | "value-after-equals";

interface OptionSpec {
  /** `--heap`, `-o`: what the user types. */
  readonly spelling: string;
  readonly syntax: OptionSyntax;
}

/** spelling (`--heap`) -> its syntax, from a command's table; keys not starting with `-` are skipped. */
function optionSpecs(table: Readonly<Record<string, string>>): Map<string, OptionSpec> {
  const specs = new Map<string, OptionSpec>();
  for (const key of Object.keys(table)) {
    const m = /^(--?[a-z][a-z0-9-]*)(\[=|[ =])?/.exec(key);
    if (m === null) continue;
    const spelling = m[1]!;
    const syntax: OptionSyntax = m[2] === undefined ? "flag" : m[2] === "[=" ? "value-after-equals" : "value";
    specs.set(spelling, { spelling, syntax });
  }
  return specs;
}

/** What a command line said: positional arguments, flags given, and each valued option's values. */
export class ParsedOptions {
  readonly positional: string[] = [];
  private readonly flags = new Set<string>();
  private readonly valuesBySpelling = new Map<string, string[]>();

  /** Whether `--json` (any option, by spelling) was given. */
  has(spelling: string): boolean {
    return this.flags.has(spelling) || this.valuesBySpelling.has(spelling);
  }

  /** The last value of `spelling`, undefined when not given ("" for a bare `--stress`). */
  value(spelling: string): string | undefined {
    return this.valuesBySpelling.get(spelling)?.at(-1);
  }

  /** Every value of `spelling`, in order ([] when not given). */
  values(spelling: string): string[] {
    return [...(this.valuesBySpelling.get(spelling) ?? [])];
  }

  addFlag(spelling: string): void {
    this.flags.add(spelling);
  }

  addValue(spelling: string, value: string): void {
    this.valuesBySpelling.set(spelling, [...this.values(spelling), value]);
  }
}

/** `--help` or `-h` anywhere: the command's help wins over every other argument, a wrong one too. */
export function helpRequested(args: readonly string[]): boolean {
  return args.some((a) => a === "--help" || a === "-h");
}

/** Parses `args` by `table` (see above); throws InvalidArgumentError (one line) on a mistake. */
export function parseOptions(table: Readonly<Record<string, string>>, args: readonly string[]): ParsedOptions {
  const specs = optionSpecs(table);
  const parsed = new ParsedOptions();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith("--") && !specs.has(arg)) {
      parsed.positional.push(arg);
      continue;
    }
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const spelling = eq < 0 ? arg : arg.slice(0, eq);
    const inline = eq < 0 ? undefined : arg.slice(eq + 1);
    const spec = specs.get(spelling);
    if (spec === undefined) throw new InvalidArgumentError("option", arg, [...specs.keys()].join(", ") || "no options");
    if (spec.syntax === "flag") {
      if (inline !== undefined) throw new InvalidArgumentError(arg, inline, "no value");
      parsed.addFlag(spelling);
    } else if (spec.syntax === "value-after-equals") {
      if (inline === undefined) refuseSpacedCount(spelling, args[i + 1]);
      parsed.addValue(spelling, inline ?? "");
    } else {
      const value = inline ?? args[++i];
      if (value === undefined) throw new InvalidArgumentError(arg, "no value", "a value");
      parsed.addValue(spelling, value);
    }
  }
  return parsed;
}
