import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { buildRunEntry, runNative, runNativeJson } from "../support/native-run.js";

/*
 * Issue 32: `run --generational` on programs written as a user would, in both styles: a
 * long-lived table made old by gc_collect() gets young cells stored into it, each store followed
 * by gc_write_barrier(table). The --no-gc result under --generational (minor collections from the
 * nursery budget) and under --stress=N --verify; the same program with its one table barrier
 * removed ends with exit 4 naming the table, the field and the missing barrier.
 */

const PROGRAMS = join(repoRoot(), "test", "native-runtime", "programs");
const STYLES = [
  { style: "statepoint", file: join(PROGRAMS, "generational-table.ll"), flags: [] as string[] },
  { style: "gcroot (plimmix)", file: join(PROGRAMS, "generational-table-gcroot.ll"), flags: ["--plimmix"] },
];
const EXPECTED = "25591680";
type GenerationalJson = { minorCollections: number; majorCollections: number; bytesPromoted: number; rememberedSetMax: number; rememberedSetTotal: number };

beforeAll(() => {
  buildRunEntry();
}, 300_000);

describe.each(STYLES)("rootwalk run --generational, $style", ({ file, flags }) => {
  it("gives the --no-gc result with nursery collections, the barrier's log rescanned", async () => {
    const none = await runNativeJson([file, ...flags, "--no-gc"], 60_000);
    expect(none.result).toBe(EXPECTED);
    const r = (await runNativeJson([file, ...flags, "--generational", "--nursery", "256K"], 60_000)) as Awaited<ReturnType<typeof runNativeJson>> &
      GenerationalJson;
    expect(r.result).toBe(EXPECTED);
    expect(r.minorCollections).toBeGreaterThan(10);
    expect(r.majorCollections).toBe(1); // the program's gc_collect()
    expect(r.collections).toBe(r.minorCollections + r.majorCollections);
    expect(r.bytesPromoted).toBeGreaterThan(0);
    expect(r.rememberedSetMax).toBe(1); // the table, logged once per collection
  }, 120_000);

  it("gives it under --stress=50 --verify too, young survivors evacuated", async () => {
    const r = (await runNativeJson([file, ...flags, "--generational", "--stress=50", "--verify"], 120_000)) as Awaited<ReturnType<typeof runNativeJson>> &
      GenerationalJson;
    expect(r.result).toBe(EXPECTED);
    expect(r.verifyFailures).toBe(0);
    expect(r.minorCollections).toBeGreaterThan(0);
    expect(r.majorCollections).toBeGreaterThan(0);
    expect(r.objectsMoved).toBeGreaterThan(0);
  }, 180_000);

  it("names the old object, the field and the missing barrier when the table's barrier is removed (exit 4)", async () => {
    const source = readFileSync(file, "utf8");
    expect(source).toContain("; BARRIER(table)");
    const mutant = join(mkdtempSync(join(tmpdir(), "rootwalk-generational-")), "missing-barrier.ll");
    writeFileSync(
      mutant,
      source
        .split("\n")
        .filter((line) => !line.includes("BARRIER(table)"))
        .join("\n"),
    );
    const r = await runNative([mutant, ...flags, "--generational", "--nursery", "256K", "--verify", "--progress=0"], 60_000);
    expect(r.status).toBe(4);
    const lines = r.stderr.trimEnd().split("\n");
    const first = lines.findIndex((l) => /heap verification failures/.test(l));
    expect(first).toBeGreaterThanOrEqual(0);
    expect(lines[first + 1]).toMatch(
      /^ {2}collection #\d+ \(before it\): field \+0x[0-9a-f]+ of object (0x[0-9a-f]+): found 0x[0-9a-f]+ \(a young object\) in an old object not logged since the last collection: a store into \1 had no gc_write_barrier\(\1\) after it/,
    );
    // The collection that found it was made a full one: the run still computes the right result.
    expect(r.stdout).toContain(`result: ${EXPECTED}`);
  }, 120_000);
});
