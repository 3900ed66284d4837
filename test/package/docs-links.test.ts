import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { COMMAND_USAGE } from "../../src/cli/command-usage.js";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";

/*
 * The documentation holds together: every relative link in README.md, docs/, bench/ and
 * ARCHITECTURE.md reaches a file, and a link's #anchor a heading of that file (GitHub's slugs);
 * docs/cli.md, the command-line reference, has a section per command with its usage line and a
 * row for every option the parser knows (src/cli/command-usage.ts: what --help prints and what
 * the parser reads), so the reference and `--help` cannot drift apart.
 */

const ROOT = repoRoot();
const PAGES = ["README.md", "ARCHITECTURE.md", "bench/README.md", "bench/HISTORY.md", ...readdirSync(join(ROOT, "docs")).map((f) => `docs/${f}`)];
const read = (page: string) => readFileSync(join(ROOT, page), "utf8");

/** The text outside fenced code blocks (a link inside one is an example, not a link). */
function prose(markdown: string): string {
  return markdown.replace(/^```[^]*?^```$/gm, "");
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

function anchors(markdown: string): Set<string> {
  return new Set([...prose(markdown).matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

/** Every relative link target of a page: `[text](target)`, outside code. */
function relativeLinks(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^()\s]+)\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z]+:/.test(t));
}

/** The part of docs/cli.md under `## rootwalk COMMAND`, up to the next `## `. */
function commandSection(reference: string, command: string): string {
  const start = reference.indexOf(`\n## rootwalk ${command}\n`);
  if (start < 0) return "";
  const end = reference.indexOf("\n## ", start + 1);
  return reference.slice(start, end < 0 ? undefined : end);
}

describe("the documentation's links", () => {
  it("finds the pages, links and anchors it should (the extraction itself)", () => {
    expect(slug("`rootwalk run` on AArch64")).toBe("rootwalk-run-on-aarch64");
    expect(slug("Options, exit codes and output")).toBe("options-exit-codes-and-output");
    expect(relativeLinks("[a](docs/x.md#y) [b](https://e.org) `[c](no)`\n```\n[d](code.md)\n```\n")).toEqual(["docs/x.md#y", "no"]);
    expect(PAGES.length).toBeGreaterThan(8);
  });

  for (const page of PAGES) {
    it(`${page}: every relative link resolves`, () => {
      const broken: string[] = [];
      for (const target of relativeLinks(read(page))) {
        const [path, anchor] = target.split("#") as [string, string | undefined];
        const file = path === "" ? join(ROOT, page) : join(ROOT, dirname(page), path);
        if (!existsSync(file)) broken.push(`${target}: no file ${relative(ROOT, file)}`);
        else if (anchor !== undefined && statSync(file).isFile() && !anchors(readFileSync(file, "utf8")).has(anchor))
          broken.push(`${target}: no heading #${anchor} in ${relative(ROOT, file)}`);
      }
      expect(broken).toEqual([]);
    });
  }
});

describe("docs/cli.md, the command-line reference", () => {
  const reference = read("docs/cli.md");
  const commands = Object.keys(COMMAND_USAGE).filter((c) => c !== "help");

  it("has every command the parser knows, in README.md's table and its own", () => {
    const readme = read("README.md");
    for (const command of commands) {
      expect(commandSection(reference, command), command).not.toBe("");
      expect(readme, command).toContain(`| [\`${command}\`](docs/cli.md#rootwalk-${command}) |`);
      expect(reference, command).toContain(`| [\`${command}\`](#rootwalk-${command}) |`);
    }
  });

  it("gives each command its usage line and a row for every option --help prints", () => {
    const missing: string[] = [];
    for (const command of commands) {
      const section = commandSection(reference, command);
      const { usage, options } = COMMAND_USAGE[command]!;
      if (!section.includes(usage)) missing.push(`${command}: usage ${usage}`);
      for (const [option, meaning] of Object.entries(options)) {
        if (!section.includes(`| \`${option}\` | ${meaning.replace(/\|/g, "\\|")} |`)) missing.push(`${command}: ${option}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
