import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ElfFile } from "../../src/elf/elf-file.js";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { buildRunEntry, runNativeJson } from "../support/native-run.js";
import { irSource } from "../support/ir-source.js";
import { run } from "../support/run-cli.js";

/*
 * A gcroot module reaches its own `_GC_MAP_` label through a declaration the plugin then
 * defines. The seed documents a weak reference (`extern_weak global i8`); `external` is the
 * other spelling. Both must compile with `rootwalk compile --plimmix` (llc once rejected the weak
 * one: "changed binding to STB_GLOBAL"), define the label as a global object, and run, with
 * every LLVM the tests run under (vitest.config.ts).
 */

const ROOT = repoRoot();
const SOURCE = join(ROOT, "test", "native-runtime", "programs", "plimmix-list.ll");
const OUT = join(ROOT, ".cache", "weak-map-label");
const LABEL = "_GC_MAP_rw_plimmix_list.c";
const EXPECTED = "20963045100";

function variant(linkage: "external" | "extern_weak"): string {
  const text = readFileSync(SOURCE, "utf8");
  const declaration = `@"${LABEL}" = external global i8`;
  if (!text.includes(declaration)) throw new Error(`${SOURCE} no longer declares ${declaration}`);
  const path = join(OUT, `plimmix-list-${linkage}.ll`);
  writeFileSync(path, text.replace(declaration, `@"${LABEL}" = ${linkage} global i8`));
  return path;
}

beforeAll(() => {
  mkdirSync(OUT, { recursive: true });
  buildRunEntry();
}, 300_000);

describe("_GC_MAP_ label declared by the module itself", () => {
  for (const linkage of ["external", "extern_weak"] as const) {
    it(`${linkage}: compiles with --plimmix, defines a global label, runs under --stress --verify`, async () => {
      const source = irSource(variant(linkage)); // opaque pointers for LLVM 17+
      const object = join(OUT, `plimmix-list-${linkage}.o`);
      const compiled = await run("compile", "--plimmix", source, "-o", object);
      expect(compiled.stderr).toBe("");
      expect(compiled.code).toBe(0);
      const label = ElfFile.parse(readFileSync(object))
        .symbols()
        .filter((s) => s.name === LABEL);
      expect(label).toHaveLength(1);
      expect(label[0]).toMatchObject({ bind: 1, type: 1 }); // STB_GLOBAL, STT_OBJECT, defined
      expect(label[0]!.definedSectionIndex).toBeDefined();

      const r = await runNativeJson([source, "--plimmix", "--stress=50", "--verify", "--heap", "16M"], 120_000);
      expect(r.result).toBe(EXPECTED);
      expect(r.collections).toBeGreaterThan(0);
      expect(r.objectsMoved).toBeGreaterThan(0);
      expect(r.verifyFailures).toBe(0);
    }, 180_000);
  }
});
