import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";

/*
 * ARCHITECTURE.md stays true: every path it names under src/, walker/, gc/ or test/ exists, so a
 * file moved or split without the page following fails here. README.md and docs/contributing.md link the page.
 */

const ROOT = repoRoot();

/** Every `src/...`, `walker/...`, `gc/...`, `test/...` path in `text` (a trailing '.' or ',' is prose). */
export function namedPaths(text: string): string[] {
  const paths = [...text.matchAll(/(?<![\w/.$~-])(?:src|walker|gc|test)\/[\w./-]*/g)].map((m) => m[0].replace(/[.,]+$/, ""));
  return [...new Set(paths)];
}

describe("ARCHITECTURE.md", () => {
  const page = readFileSync(join(ROOT, "ARCHITECTURE.md"), "utf8");

  it("names only paths that exist", () => {
    const paths = namedPaths(page);
    expect(paths.length).toBeGreaterThan(40);
    expect(paths.filter((p) => !existsSync(join(ROOT, p)))).toEqual([]);
  });

  it("finds the paths it should (the extraction itself)", () => {
    expect(namedPaths("see walker/fast-scan.ts, gc/ and src/cli/options.ts. Not ./src/x or rootwalk/gc/y")).toEqual([
      "walker/fast-scan.ts",
      "gc/",
      "src/cli/options.ts",
    ]);
  });

  it("is linked from README.md's Documentation list and docs/contributing.md's Layout", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const list = readme.slice(readme.indexOf("## Documentation"));
    expect(list).toContain("[ARCHITECTURE.md](ARCHITECTURE.md)");
    const contributing = readFileSync(join(ROOT, "docs/contributing.md"), "utf8");
    expect(contributing.slice(contributing.indexOf("## Layout"))).toContain("(../ARCHITECTURE.md)");
  });
});
