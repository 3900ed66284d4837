import { readFileSync, writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { run } from "../support/run-cli.js";

/*
 * The walk snapshot format is shipped as a JSON Schema with an example (schemas/, in the
 * package's "files"; test/ is not). The example validates and walks to the roots it lists; the
 * recorded fixture validates too; the README documents every field the schema names. The
 * validator below implements the keywords the schema uses (type, required, properties, items,
 * $ref, oneOf, pattern, minimum): no dependency.
 */

const ROOT = repoRoot();
const SCHEMA_PATH = join(ROOT, "schemas", "stack-snapshot.schema.json");
const EXAMPLE_PATH = join(ROOT, "schemas", "stack-snapshot.example.json");
type Schema = { [k: string]: unknown };
const schema = JSON.parse(readFileSync(SCHEMA_PATH, "utf8")) as Schema;

function typeOk(type: string, v: unknown): boolean {
  if (type === "object") return typeof v === "object" && v !== null && !Array.isArray(v);
  if (type === "array") return Array.isArray(v);
  if (type === "integer") return Number.isInteger(v);
  return typeof v === type;
}

/** Error paths of `value` against `s` (empty: valid). */
function validate(s: Schema, value: unknown, path = "$"): string[] {
  if (typeof s["$ref"] === "string") return validate((schema["$defs"] as Record<string, Schema>)[(s["$ref"] as string).split("/").at(-1)!]!, value, path);
  if (Array.isArray(s["oneOf"])) {
    const passing = (s["oneOf"] as Schema[]).filter((alt) => validate(alt, value, path).length === 0).length;
    return passing === 1 ? [] : [`${path}: matches ${passing} of oneOf`];
  }
  if (typeof s["type"] === "string" && !typeOk(s["type"], value)) return [`${path}: not ${s["type"]}`];
  const errors: string[] = [];
  if (typeof s["pattern"] === "string" && typeof value === "string" && !new RegExp(s["pattern"]).test(value))
    errors.push(`${path}: does not match ${s["pattern"]}`);
  if (typeof s["minimum"] === "number" && typeof value === "number" && value < s["minimum"]) errors.push(`${path}: below ${s["minimum"]}`);
  if (typeOk("object", value)) {
    const object = value as Record<string, unknown>;
    for (const key of (s["required"] as string[] | undefined) ?? []) if (!(key in object)) errors.push(`${path}: no ${key}`);
    for (const [key, sub] of Object.entries((s["properties"] as Record<string, Schema> | undefined) ?? {}))
      if (key in object) errors.push(...validate(sub, object[key], `${path}.${key}`));
  }
  if (Array.isArray(value) && s["items"] !== undefined) value.forEach((item, i) => errors.push(...validate(s["items"] as Schema, item, `${path}[${i}]`)));
  return errors;
}

describe("the walk snapshot schema and example", () => {
  it("the example and the recorded fixture validate; a broken snapshot does not", () => {
    const example = JSON.parse(readFileSync(EXAMPLE_PATH, "utf8")) as Record<string, unknown>;
    expect(validate(schema, example)).toEqual([]);
    expect(validate(schema, JSON.parse(readFileSync(join(ROOT, "test", "fixtures", "split-stack", "fixture_d300.json"), "utf8")))).toEqual([]);
    expect(validate(schema, { ...example, memory: [{ base: "0x7000", hex: "abc" }] })).toEqual(["$.memory[0].hex: does not match ^([0-9a-fA-F]{2})*$"]);
    expect(validate(schema, { memory: [], functions: [] })).toEqual(["$: no callsites", "$: no entryRaSlot"]);
  });

  it("rootwalk walk of the example finds the roots it lists", async () => {
    const example = JSON.parse(readFileSync(EXAMPLE_PATH, "utf8")) as { expectedRoots: { slot: string; value: string }[] };
    const r = await run("walk", EXAMPLE_PATH, "--json");
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { roots: unknown[] }).roots).toEqual(example.expectedRoots.map(({ slot, value }) => ({ slot, value })));
  });

  it("a bad snapshot's message points to docs/snapshot-format.md and the shipped schema; that page documents every field", async () => {
    const bad = join(mkdtempSync(join(tmpdir(), "rootwalk-schema-")), "bad.json");
    writeFileSync(bad, "[]");
    const r = await run("walk", bad);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/docs\/snapshot-format.md and schemas\/stack-snapshot.schema.json in the package\)$/m);
    const section = readFileSync(join(ROOT, "docs/snapshot-format.md"), "utf8");
    expect(section.length).toBeGreaterThan(100);
    for (const field of Object.keys(schema["properties"] as object)) expect(section, field).toContain(`\`${field}\``);
    const packageFiles = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { files: string[] }).files;
    expect(packageFiles).toEqual(expect.arrayContaining(["schemas", "docs"]));
  });
});
