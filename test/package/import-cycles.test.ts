import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { tsFiles } from "../support/ts-files.js";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";

/*
 * No import cycles anywhere in the tree (src, walker, gc, bench, test). A cycle makes two modules
 * one unit that cannot be read, tested or replaced apart, and a value cycle can leave a binding
 * uninitialised at load time. Type-only imports count: they are the same coupling.
 *
 * The graph: every relative import, `import type` and `export ... from` of every .ts file, as the
 * TypeScript compiler's preProcessFile lists them (`./x.js` resolves to `./x.ts`). Each strongly
 * connected component of more than one file, or a file importing itself, is a cycle.
 *
 * Folders too: ARCHITECTURE.md's layers are folders ("a leaf imports only leaves"), so two folders
 * that import each other, even through different files, are one layer in disguise. The folder of a
 * file is src/<first folder>, walker/scan-kernel, walker, gc or bench; a file directly in src/
 * (src/errors.ts, a leaf; src/index.ts, the public API's wiring) is a layer of its own; the folder graph is the file graph with each file replaced by its folder,
 * a folder's imports of itself left out, and its cycles are found as the file graph's are.
 */

const ROOT = repoRoot();
const TREES = ["src", "walker", "gc", "bench", "test"];
/** The trees whose folders are layers (test/ is not a layer: it imports everything). */
const LAYER_TREES = ["src", "walker", "gc", "bench"];

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

/**
 * The folder a file belongs to as a layer: src/<folder> (a file directly in src/ is its own),
 * walker/scan-kernel, walker, gc, bench; `undefined` outside those trees. `root` is the repository root.
 */
export function layerFolder(root: string, file: string): string | undefined {
  const parts = relative(root, file).split(sep);
  if (!LAYER_TREES.includes(parts[0]!)) return undefined;
  if (parts[0] === "src") return `src/${parts[1]}`;
  if (parts[0] === "walker" && parts[1] === "scan-kernel" && parts.length > 2) {
    return "walker/scan-kernel";
  }
  return parts[0];
}

/** The file graph collapsed to folders (`folderOf`), a folder's imports of itself left out. */
export function folderGraph(graph: ReadonlyMap<string, readonly string[]>, folderOf: (file: string) => string | undefined): Map<string, string[]> {
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    if (from === undefined) continue;
    const edges = folders.get(from) ?? new Set<string>();
    folders.set(from, edges);
    for (const target of targets) {
      const to = folderOf(target);
      if (to !== undefined && to !== from) edges.add(to);
    }
  }
  return new Map([...folders].map(([folder, edges]) => [folder, [...edges].sort()]));
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

  it("finds a folder cycle made of files that form no file cycle (the folder check itself)", () => {
    const files = new Map([
      ["/r/src/a/one.ts", ["/r/src/b/two.ts"]],
      ["/r/src/b/two.ts", []],
      ["/r/src/b/three.ts", ["/r/src/a/four.ts"]],
      ["/r/src/a/four.ts", []],
      ["/r/walker/w.ts", ["/r/walker/scan-kernel/k.ts", "/r/src/errors.ts"]],
      ["/r/walker/scan-kernel/k.ts", ["/r/src/a/four.ts"]],
      ["/r/src/errors.ts", []],
      ["/r/test/t.ts", ["/r/walker/w.ts"]],
    ]);
    expect(importCycles(files)).toEqual([]);
    const folders = folderGraph(files, (file) => layerFolder("/r", file));
    expect(folders.get("walker")).toEqual(["src/errors.ts", "walker/scan-kernel"]);
    expect(folders.has("test")).toBe(false);
    expect(importCycles(folders)).toEqual([["src/a", "src/b"]]);
  });

  it("has no folder cycles over src/<folder>, walker, walker/scan-kernel, gc and bench", () => {
    const files = LAYER_TREES.flatMap((tree) => tsFiles(join(ROOT, tree), []));
    const folders = folderGraph(importGraph(files), (file) => layerFolder(ROOT, file));
    expect(folders.size).toBeGreaterThan(15);
    expect(importCycles(folders).map((c) => c.join(" <-> "))).toEqual([]);
  });
});
