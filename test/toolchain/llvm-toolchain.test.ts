import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { InvalidArgumentError, RootwalkError, ToolError } from "../../src/errors.js";
import { compileToObject, defaultCacheDir, findLlvmTool, linkSharedLibrary, repoRoot, runTool, writeFileAtomic } from "../../src/toolchain/llvm-toolchain.js";
import { compileCorpusEntry, corpusEntry } from "../ll/corpus.js";
import { readobjStackmap, sectionSizes } from "../support/llvm-tools.js";

const scratch = mkdtempSync(join(tmpdir(), "rootwalk-toolchain-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function writeSource(name: string, text: string): string {
  const path = join(scratch, name);
  writeFileSync(path, text);
  return path;
}

const STACKMAP_MODULE = `
declare void @llvm.experimental.stackmap(i64, i32, ...)
define void @f(i64 %a) {
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 77, i32 0, i64 %a)
  ret void
}
`;

describe("findLlvmTool", () => {
  it("finds LLVM 14 tools and remembers them", () => {
    for (const name of ["opt", "llc", "llvm-readobj", "llvm-objdump"]) {
      const tool = findLlvmTool(name);
      expect(runTool(tool, ["--version"])).toMatch(/LLVM version 14\./);
      expect(findLlvmTool(name)).toBe(tool);
    }
  });

  it("names the package to install when a tool is missing", () => {
    const error = (() => {
      try {
        findLlvmTool("llvm-no-such-tool");
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).code).toBe("TOOL");
    expect((error as ToolError).message).toMatch(
      /apt-get install -y llvm-14 llvm-14-tools llvm-14-dev \(in a rootwalk checkout: bash scripts\/system-packages --install start\)/,
    );
  });

  it("rejects names that are not bare commands", () => {
    expect(() => findLlvmTool("../llc")).toThrow(InvalidArgumentError);
    expect(() => findLlvmTool("")).toThrow(InvalidArgumentError);
  });
});

describe("runTool", () => {
  it("returns stdout", () => {
    expect(runTool("sh", ["-c", "echo out; echo err >&2"])).toBe("out\n");
  });

  it("reports the tool's first stderr lines, then the exit code and the command", () => {
    expect(() => runTool("sh", ["-c", "echo first >&2; echo second >&2; exit 3"])).toThrow(/^first\nsecond\nsh: failed \(exit code 3\) running sh -c/);
  });

  it("keeps the end of a long diagnostic line (the message after a long path), not only its start", () => {
    const deepPath = join(scratch, ...Array.from({ length: 5 }, () => "d".repeat(90)), "missing.ll");
    const error = (() => {
      try {
        runTool(findLlvmTool("opt"), ["-S", deepPath]);
      } catch (caught) {
        return caught as Error;
      }
      throw new Error("opt accepted a missing file");
    })();
    const firstLine = error.message.split("\n")[0] ?? "";
    expect(firstLine.length).toBeLessThanOrEqual(403);
    expect(firstLine).toContain("...");
    expect(firstLine).toMatch(/missing\.ll: (error: )?Could not open input file: No such file or directory$/);
    expect(firstLine.startsWith(findLlvmTool("opt").split("/").pop()!) || firstLine.startsWith("opt")).toBe(true);
  });

  it("reports a tool that cannot start", () => {
    expect(() => runTool("/nonexistent/tool", [])).toThrow(ToolError);
    expect(() => runTool("/nonexistent/tool", [])).toThrow(/could not run/);
  });

  it("does not truncate large outputs", () => {
    expect(runTool("sh", ["-c", "head -c 5000000 /dev/zero | tr '\\0' x"]).length).toBe(5_000_000);
  });
});

describe("compileToObject", () => {
  it("finds the repository root and a default cache inside it", () => {
    expect(statSync(join(repoRoot(), "package.json")).isFile()).toBe(true);
    expect(defaultCacheDir()).toBe(join(repoRoot(), ".cache", "objects"));
  });

  it("compiles with llc alone and caches by content", () => {
    const cacheDir = join(scratch, "cache-a");
    const source = writeSource("a.ll", STACKMAP_MODULE);
    const first = compileToObject(source, { cacheDir });
    expect(first.startsWith(cacheDir)).toBe(true);
    expect(readobjStackmap(first)).toMatch(/Record ID: 77, instruction offset: \d+/);
    const mtime = statSync(first).mtimeMs;
    expect(compileToObject(source, { cacheDir })).toBe(first);
    expect(statSync(first).mtimeMs).toBe(mtime);
    // Different flags or different text: a different object. No temporary files are left behind.
    const o0 = compileToObject(source, { cacheDir, llcFlags: ["-O0"] });
    expect(o0).not.toBe(first);
    writeSource("a.ll", `${STACKMAP_MODULE}\n; changed\n`);
    expect(compileToObject(source, { cacheDir })).not.toBe(first);
    expect(readdirSync(cacheDir).filter((name) => name.includes(".tmp-"))).toEqual([]);
  });

  it("runs opt first when passes are given", () => {
    const cacheDir = join(scratch, "cache-b");
    const source = writeSource(
      "gc.ll",
      `declare void @g()
define i8 addrspace(1)* @f(i8 addrspace(1)* %p) gc "statepoint-example" {
  call void @g()
  ret i8 addrspace(1)* %p
}
`,
    );
    const withRs4gc = compileToObject(source, { cacheDir, optPasses: ["-passes=rewrite-statepoints-for-gc"] });
    expect(readobjStackmap(withRs4gc)).toMatch(/Record ID: 2882400000/);
    // Without RS4GC the call is an ordinary call: no stack map section at all.
    const plain = compileToObject(source, { cacheDir });
    expect(plain).not.toBe(withRs4gc);
    expect(sectionSizes(plain).has(".llvm_stackmaps")).toBe(false);
  });

  it("reports tool failures and bad arguments as rootwalk errors", () => {
    const cacheDir = join(scratch, "cache-c");
    const broken = writeSource("broken.ll", "define void @f( {\n");
    expect(() => compileToObject(broken, { cacheDir })).toThrow(ToolError);
    expect(() => compileToObject(broken, { cacheDir })).toThrow(/llc(-\d+)?: failed \(exit code 1\)/);
    expect(() => compileToObject(broken, { cacheDir, optPasses: ["-passes=verify"] })).toThrow(/opt(-\d+)?: failed/);
    expect(() => compileToObject(join(scratch, "missing.ll"), { cacheDir })).toThrow(InvalidArgumentError);
    expect(readdirSync(cacheDir)).toEqual([]);
  });
});

describe("linkSharedLibrary", () => {
  it("links objects into a .so whose .llvm_stackmaps is the blobs back to back", () => {
    const chain = compileCorpusEntry(corpusEntry("call-chain"));
    const mixed = compileCorpusEntry(corpusEntry("mixed-kinds"));
    const library = linkSharedLibrary([chain, mixed]);
    expect(linkSharedLibrary([chain, mixed])).toBe(library);
    const blobBytes = (path: string): number => sectionSizes(path).get(".llvm_stackmaps") ?? -1;
    expect(blobBytes(library)).toBe(blobBytes(chain) + blobBytes(mixed));
    // readobj decodes only the first blob (the call chain's three functions).
    expect(readobjStackmap(library)).toMatch(/Num Functions: 3\n/);
    expect(linkSharedLibrary([mixed, chain])).not.toBe(library);
  });

  it("rejects an empty object list and missing files, and reports link errors", () => {
    expect(() => linkSharedLibrary([])).toThrow(InvalidArgumentError);
    expect(() => linkSharedLibrary([join(scratch, "missing.o")])).toThrow(InvalidArgumentError);
    const notAnObject = writeSource("not-an-object.o", "hello");
    expect(() => linkSharedLibrary([notAnObject], { cacheDir: join(scratch, "cache-d") })).toThrow(ToolError);
  });
});

describe("writeFileAtomic", () => {
  it("creates directories and replaces files whole", () => {
    const path = join(scratch, "nested", "dir", "file.txt");
    writeFileAtomic(path, "one");
    writeFileAtomic(path, "two");
    expect(readdirSync(join(scratch, "nested", "dir"))).toEqual(["file.txt"]);
  });
});

describe("errors", () => {
  it("are RootwalkErrors", () => {
    expect(() => runTool("sh", ["-c", "exit 1"])).toThrow(RootwalkError);
  });
});
