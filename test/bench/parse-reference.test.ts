import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type NativeSamples, buildReference } from "../../bench/native-refs.js";
import { checkRegistrationOutputs } from "../../bench/parse-reference.js";
import { encodeSyntheticStackMap } from "../../bench/synthetic-stackmap.js";
import { registerStackMapBytes } from "../../src/loader/register-maps.js";
import { SafepointRegistry } from "../../src/safepoints/registry.js";
import { repoRoot, runTool } from "../../src/toolchain/llvm-toolchain.js";

/*
 * The Parse bench's C reference (bench/native/parse-ref.cpp, mode `index`) must build what
 * rootwalk's registration builds from the same bytes (bench/parse-reference.ts): checked here with
 * the real registration and the real C program on two synthetic sections, and shown to fail when the
 * C side is altered to build something else.
 */

const NATIVE_DIR = join(repoRoot(), "bench", "native");
const dir = mkdtempSync(join(tmpdir(), "parse-ref-test-"));
const MAPS = [
  { name: "300 records, 4 roots", spec: { functions: 30, recordsPerFunction: 10, rootsPerRecord: 4 } },
  { name: "2000 records, 2 roots with derived slots", spec: { functions: 200, recordsPerFunction: 10, rootsPerRecord: 2, derivedOffsetBytes: 16 } },
];

/** rootwalk's registration of `bytes` and the C reference's output for the same bytes (written to a file). */
function bothSides(bytes: Uint8Array, file: string, exe: string): { registry: SafepointRegistry; ref: NativeSamples } {
  writeFileSync(file, bytes);
  const registry = new SafepointRegistry();
  registerStackMapBytes(registry, bytes, { name: "test" });
  const ref = JSON.parse(runTool(exe, [file, "2", "1", "index"])) as NativeSamples;
  return { registry, ref };
}

function check(registry: SafepointRegistry, ref: NativeSamples): void {
  const snapshot = registry.snapshot();
  checkRegistrationOutputs("Parse/test", snapshot.safepointCount, snapshot.moduleBySlot[0]!.recipes, ref);
}

/** parse-ref.cpp with `from` replaced by `to` (the text must be there), built in a directory of its own. */
function alteredReference(from: string, to: string): string {
  const source = readFileSync(join(NATIVE_DIR, "parse-ref.cpp"), "utf8");
  expect(source).toContain(from);
  const own = mkdtempSync(join(tmpdir(), "parse-ref-"));
  writeFileSync(join(own, "parse-ref.cpp"), source.replace(from, to));
  return buildReference("parse-ref.cpp", join(own, "parse-ref.cpp"));
}

describe("the Parse bench's C reference builds rootwalk's registration", () => {
  MAPS.forEach((map, m) => {
    it(`${map.name}: the same safepoints, recipes, slot words and recipe columns`, () => {
      const { registry, ref } = bothSides(encodeSyntheticStackMap(map.spec), join(dir, `map-${m}.bin`), buildReference("parse-ref.cpp"));
      expect(ref["safepoints"]).toBe(map.spec.functions * map.spec.recordsPerFunction);
      expect(ref["recipes"]).toBeGreaterThan(0);
      expect(() => check(registry, ref)).not.toThrow();
    });
  });

  it("the parser-only mode (the reference before issue 34) still runs", () => {
    const file = join(dir, "map-parse.bin");
    writeFileSync(file, encodeSyntheticStackMap(MAPS[0]!.spec));
    const ref = JSON.parse(runTool(buildReference("parse-ref.cpp"), [file, "2", "1", "parse"])) as NativeSamples;
    expect(ref["mode"]).toBe("parse");
    expect(ref.samplesNsPerOp).toHaveLength(1);
  });

  // Each alteration makes the C registration build something rootwalk's does not.
  const ALTERED: { what: string; from: string; to: string; message: RegExp }[] = [
    {
      what: "equal recipes not shared through the hash index",
      from: "const int32_t existing = neverFound ? -1 : (int32_t)hashGet(x, hash);",
      to: "const int32_t existing = -1;",
      message: /^Parse\/test: the C registration's recipes is \d+, rootwalk's \d+$/,
    },
    {
      what: "every safepoint given recipe 0",
      from: "x.recipeOf[x.safepoint] = recipe;",
      to: "x.recipeOf[x.safepoint] = 0;",
      message: /^Parse\/test: the C registration's recipeChecksum is \d+, rootwalk's \d+$/,
    },
    {
      what: "every root slot recorded 8 bytes higher",
      from: "x.slots[x.slotWords++] = offset;",
      to: "x.slots[x.slotWords++] = offset + 8;",
      message: /^Parse\/test: the C registration's recipeChecksum is \d+, rootwalk's \d+$/,
    },
  ];
  for (const altered of ALTERED) {
    it(`fails with one line when the C side is altered: ${altered.what}`, () => {
      const exe = alteredReference(altered.from, altered.to);
      const { registry, ref } = bothSides(encodeSyntheticStackMap(MAPS[1]!.spec), join(dir, "map-altered.bin"), exe);
      expect(() => check(registry, ref)).toThrow(altered.message);
    });
  }
});
