import { describe, expect, it } from "vitest";
import { COMMAND_USAGE } from "../../src/cli/command-usage.js";
import { RUN_OPTIONS } from "../../src/cli/command-usage.js";
import { parseRunArguments } from "../../src/cli/run-command.js";
import { run } from "../support/run-cli.js";

/*
 * `rootwalk COMMAND --help` lists every option with its meaning and units, not only the usage
 * line (issue 17 item 11). The options a command parses are what it names when it refuses an
 * unknown one; each must be in its help, and each option its help lists must parse.
 */

/** The option names (`--format`, `-o`) in a refusal line: "option: found --bogus, expected --a, --b". */
function acceptedOptions(refusal: string): string[] {
  const expected = /expected (.*)$/.exec(refusal.trim())![1]!;
  return [...expected.matchAll(/--?[a-z][a-z-]*/g)].map((m) => (m[0] === "--o" ? "-o" : m[0]));
}

/** Whether a help option key names `option` (`--walk chunks|unwind`, `--stress[=N]`, `-o OUT.o`). */
function listed(keys: readonly string[], option: string): boolean {
  return keys.some((k) => k === option || k.startsWith(`${option} `) || k.startsWith(`${option}=`) || k.startsWith(`${option}[`));
}

describe("COMMAND --help lists every option with its meaning", () => {
  for (const command of Object.keys(COMMAND_USAGE).filter((c) => c !== "help")) {
    it(`${command}: every option it parses is in its help, with a meaning`, async () => {
      const refusal = await run(command, "--no-such-option");
      expect(refusal.code).toBe(1);
      const options = acceptedOptions(refusal.stderr);
      expect(options.length).toBeGreaterThan(0);
      const keys = Object.keys(COMMAND_USAGE[command]!.options);
      const help = (await run(command, "--help")).stdout;
      for (const option of options) {
        expect(listed(keys, option), `${command} ${option}`).toBe(true);
        expect(help).toMatch(new RegExp(`^  ${option.replace(/[-[\]]/g, "\\$&")}\\S*( \\S+)?\\s{2,}\\S`, "m"));
      }
      for (const meaning of Object.values(COMMAND_USAGE[command]!.options)) expect(meaning.length).toBeGreaterThan(10);
    });
  }

  it("run: every option its help lists parses, and every option of its usage line is in its help", () => {
    for (const key of Object.keys(RUN_OPTIONS)) {
      const name = /^--[a-z-]+/.exec(key)![0];
      const args =
        key.includes(" ") || (key.includes("=") && !key.includes("["))
          ? [
              `${name}=${key.includes("SECONDS") ? "1" : key.includes("SIZE") ? "4M" : key.includes("chunks") ? "chunks" : key.includes("aarch64") ? (process.arch === "arm64" ? "aarch64" : "x86-64") : key.includes("VERSION") ? "19" : key.endsWith(" N") ? "4" : "x"}`,
            ]
          : [name];
      expect(() => parseRunArguments(["p.ll", ...args]), key).not.toThrow();
    }
    for (const m of COMMAND_USAGE["run"]!.usage.matchAll(/\[(--[a-z-]+)/g)) expect(listed(Object.keys(RUN_OPTIONS), m[1]!), m[1]).toBe(true);
  });
});
