import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cachedArtifact, DIGEST_RECORD_SUFFIX, digestRecordText } from "../../src/toolchain/cache-artifact.js";

/*
 * cachedArtifact's file discipline, in-process with a trivial build: files are created in a
 * private temporary folder and renamed into place, so nothing is ever written through a link
 * someone placed at a final name, and a failed build leaves no final name and no temporary.
 * (The CLI-level cases, foreign folders and damaged artifacts, are in cache-security.test.ts.)
 */

const base = mkdtempSync(join(tmpdir(), "rw-cache-artifact-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

let builds = 0;
function artifact(folder: string, text: string): string {
  return cachedArtifact({
    path: join(base, folder, "thing.bin"),
    what: "test artifact",
    build: (output) => {
      builds++;
      writeFileSync(output, text, { flag: "wx" });
    },
  });
}

describe("cachedArtifact", () => {
  it("builds once, records the digest, and reuses the artifact while it matches", () => {
    const before = builds;
    const path = artifact("once", "bytes");
    expect(readFileSync(path, "utf8")).toBe("bytes");
    expect(readFileSync(path + DIGEST_RECORD_SUFFIX, "utf8")).toBe(digestRecordText(Buffer.from("bytes")));
    expect(artifact("once", "bytes")).toBe(path);
    expect(builds - before).toBe(1);
    expect(readdirSync(join(base, "once")).sort()).toEqual(["thing.bin", `thing.bin${DIGEST_RECORD_SUFFIX}`]);
  });

  it("never writes through a link planted at the artifact's or the record's name, and replaces the links", () => {
    const victim = join(base, "victim");
    writeFileSync(victim, "precious");
    const folder = join(base, "linked");
    artifact("linked", "first");
    rmSync(join(folder, "thing.bin"));
    rmSync(join(folder, `thing.bin${DIGEST_RECORD_SUFFIX}`));
    symlinkSync(victim, join(folder, "thing.bin"));
    symlinkSync(victim, join(folder, `thing.bin${DIGEST_RECORD_SUFFIX}`));
    const path = artifact("linked", "second");
    expect(readFileSync(victim, "utf8")).toBe("precious");
    expect(lstatSync(path).isFile()).toBe(true);
    expect(lstatSync(path + DIGEST_RECORD_SUFFIX).isFile()).toBe(true);
    expect(readFileSync(path, "utf8")).toBe("second");
  });

  it("a failed build leaves neither a final name nor a temporary", () => {
    expect(() =>
      cachedArtifact({
        path: join(base, "failed", "thing.bin"),
        what: "test artifact",
        build: (output) => {
          writeFileSync(output, "half");
          throw new Error("the compiler failed");
        },
      }),
    ).toThrow(/the compiler failed/);
    expect(readdirSync(join(base, "failed"))).toEqual([]);
    expect(existsSync(join(base, "failed", "thing.bin"))).toBe(false);
  });
});
