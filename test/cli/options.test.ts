import { describe, expect, it } from "vitest";
import { helpRequested, parseOptions } from "../../src/cli/options.js";

/*
 * The one option parser (src/cli/options.ts): a command's help table is what it parses, the
 * spelling of each key saying its syntax. One table holding every kind of option, and each rule.
 */

const TABLE = {
  "--json": "a flag",
  "--heap SIZE": "a value, spaced or after '='",
  "--llc-flag=FLAG": "a value the help shows with '=', repeatable",
  "--stress[=N]": "a value only after '='",
  "-o OUT.o": "a one-dash option",
  EXECUTABLE: "a positional argument the help explains, not an option",
};

describe("parseOptions", () => {
  it("takes --opt value and --opt=value alike, keeps every value in order, the last for value()", () => {
    const o = parseOptions(TABLE, ["a.ll", "--heap", "16M", "--llc-flag=-x", "--llc-flag", "-y", "--heap=32M", "-o", "out.o", "-"]);
    expect(o.positional).toEqual(["a.ll", "-"]);
    expect(o.value("--heap")).toBe("32M");
    expect(o.values("--llc-flag")).toEqual(["-x", "-y"]);
    expect(o.value("-o")).toBe("out.o");
    expect(o.has("--json")).toBe(false);
    expect(o.values("--json")).toEqual([]);
  });

  it("a flag takes no value: --json=1 is refused, naming what it found", () => {
    expect(parseOptions(TABLE, ["--json"]).has("--json")).toBe(true);
    expect(() => parseOptions(TABLE, ["--json=1"])).toThrow("--json=1: found 1, expected no value");
  });

  it("--stress[=N] takes its value only after '=', and refuses a spaced count in one line", () => {
    expect(parseOptions(TABLE, ["--stress", "a.ll"]).value("--stress")).toBe("");
    expect(parseOptions(TABLE, ["--stress", "a.ll"]).positional).toEqual(["a.ll"]);
    expect(parseOptions(TABLE, ["--stress=7"]).value("--stress")).toBe("7");
    expect(() => parseOptions(TABLE, ["--stress", "100"])).toThrow(/^--stress takes its count after '=': --stress=100$/);
  });

  it("a value missing at the end is refused", () => {
    expect(() => parseOptions(TABLE, ["--heap"])).toThrow("--heap: found no value, expected a value");
    expect(() => parseOptions(TABLE, ["-o"])).toThrow("-o: found no value, expected a value");
  });

  it("an unknown option is refused with one line naming every accepted one; EXECUTABLE is none", () => {
    expect(() => parseOptions(TABLE, ["--bogus=1"])).toThrow(/^option: found --bogus=1, expected --json, --heap, --llc-flag, --stress, -o$/);
    expect(() => parseOptions({}, ["--x"])).toThrow("option: found --x, expected no options");
    expect(parseOptions({}, ["-o"]).positional).toEqual(["-o"]);
  });

  it("--help or -h anywhere asks for the help", () => {
    expect(helpRequested(["--bogus", "-h"])).toBe(true);
    expect(helpRequested(["--help=1"])).toBe(false);
  });
});
