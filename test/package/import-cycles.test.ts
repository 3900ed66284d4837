import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";

/*
 * No import cycles anywhere in the tree (src, walker, gc, bench, test). A cycle makes two modules
 * one unit that cannot be read, tested or replaced apart, and a value cycle can leave a binding
 * uninitialised at load time. Type-only imports count: they are the same coupling.
 *
 * The graph: every relative import, `import type` and `export ... from` of every .ts file, as the
 * TypeScript compiler's preProcessFile lists them (`./x.js` resolves to `./x.ts`). Each strongly
 * connected component of more than one file, or a file importing itself, is a cycle.
 */

const ROOT = repoRoot();
const TREES = ["src", "walker", "gc", "bench", "test"];

function tsFiles(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) tsFiles(path, out);
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** file -> the files it imports (relative specifiers only). */
export function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets = importedFiles
      .map((f) => f.fileName)
      .filter((spec) => spec.startsWith("."))
      .map((spec) => resolve(dirname(file), spec.replace(/\.js$/, ".ts")))
      .filter((target) => known.has(target));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** Strongly connected components that are cycles (Tarjan), each as a list of files. */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

describe("the import graph", () => {
  it("finds a cycle when there is one (the check itself)", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a"]],
      ["d", ["d"]],
      ["e", ["a"]],
    ]);
    expect(importCycles(graph)).toEqual([["a", "b", "c"], ["d"]]);
  });

  it("has no cycles in src, walker, gc, bench and test (type-only imports included)", () => {
    const files = TREES.flatMap((tree) => tsFiles(join(ROOT, tree), []));
    const graph = importGraph(files);
    expect(graph.size).toBeGreaterThan(200);
    const cycles = importCycles(graph).map((c) => c.map((f) => relative(ROOT, f)).join(" <-> "));
    expect(cycles).toEqual([]);
  });
});
