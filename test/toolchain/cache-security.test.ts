import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIGEST_RECORD_SUFFIX, digestRecordText } from "../../src/toolchain/cache-artifact.js";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { buildRunEntry, CLI } from "../support/native-run.js";

/*
 * Issue 22: the cache runs only what rootwalk built for you. Every case runs the real CLI
 * (`node <compiled src/cli/main.js> run PROGRAM`, compiled from the current sources by
 * buildRunEntry) with ROOTWALK_CACHE_DIR set to a cache of its own, copied from one warm cache
 * (runtime, plimmix plugin, objects, program libraries built once in beforeAll).
 *
 * A planted library's constructor creates a marker file: the marker must never exist. The suite
 * runs as root, so the foreign owner is uid 65534 (nobody).
 */

const ROOT = repoRoot();
const PROGRAMS = join(ROOT, "test", "native-runtime", "programs");
const STATEPOINT = [join(PROGRAMS, "list-tree.ll"), "--no-gc"];
const PLIMMIX = [join(PROGRAMS, "plimmix-list.ll"), "--plimmix", "--no-gc"];
const NOBODY = 65534;
/** Giving a folder to another user (chown) needs root; the suite runs as root. */
const AS_ROOT = process.geteuid?.() === 0;
const RESULT = /^result: (-?\d+)$/m;

let base: string;
let cli: string;
let warm: string;
/** The result of each program from the warm (clean) cache. */
const expected = new Map<readonly string[], string>();

interface CliRun {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function runIn(cache: string, program: readonly string[]): CliRun {
  const r = spawnSync(process.execPath, [cli, "run", ...program], { encoding: "utf8", timeout: 120_000, env: { ...process.env, ROOTWALK_CACHE_DIR: cache } });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

function resultOf(r: CliRun): string | undefined {
  return RESULT.exec(r.stdout)?.[1];
}

let copies = 0;
/** A private copy of the warm cache; `primed` runs the programs once so program libraries exist for its own paths. */
function cacheCopy(primed = false): string {
  const cache = join(base, `cache-${++copies}`);
  // Program libraries are keyed by their objects' paths, which differ in the copy: left out.
  cpSync(warm, cache, { recursive: true, verbatimSymlinks: true, filter: (path) => !/\/prog-[^/]*$/.test(path) });
  if (primed) for (const program of [STATEPOINT, PLIMMIX]) expect(runIn(cache, program).status).toBe(0);
  return cache;
}

/** The one artifact in `cache/<folder>` whose name matches `pattern`. */
function artifact(cache: string, folder: string, pattern: RegExp): string {
  const names = readdirSync(join(cache, folder)).filter((name) => pattern.test(name) && !name.endsWith(DIGEST_RECORD_SUFFIX));
  expect(names, `${folder} ${pattern}`).toHaveLength(1);
  return join(cache, folder, names[0]!);
}

const runtimeIn = (cache: string): string => artifact(cache, "native", /^librwruntime-.*\.so$/);
const pluginIn = (cache: string): string => artifact(cache, "plimmix", /^plimmix-gc-llvm\d+-.*\.so$/);
const objectIn = (cache: string): string => artifact(cache, "objects", /\.o$/);
/** The statepoint program's library (the plimmix one holds a `_GC_MAP_` symbol). */
function programIn(cache: string): string {
  const libraries = readdirSync(join(cache, "native"))
    .filter((name) => /^prog-.*\.so$/.test(name))
    .map((name) => join(cache, "native", name));
  const found = libraries.filter((path) => !readFileSync(path).includes("_GC_MAP_"));
  expect(found).toHaveLength(1);
  return found[0]!;
}

let markers = 0;
/** A shared library whose constructor creates a marker file; returns both paths. */
function plantedLibrary(): { library: string; marker: string } {
  const n = ++markers;
  const marker = join(base, `marker-${n}`);
  const source = join(base, `planted-${n}.c`);
  const library = join(base, `planted-${n}.so`);
  writeFileSync(
    source,
    `#include <fcntl.h>\n#include <unistd.h>\n__attribute__((constructor)) static void planted(void) { int fd = open("${marker}", O_CREAT | O_WRONLY, 0644); if (fd >= 0) close(fd); }\n`,
  );
  const r = spawnSync("gcc", ["-shared", "-fPIC", "-o", library, source], { encoding: "utf8" });
  expect(r.stderr).toBe("");
  return { library, marker };
}

/** Puts the planted library at `path` with a digest record that matches it (what an attacker who can write the folder does). */
function plant(path: string, library: string, withRecord: boolean): void {
  cpSync(library, path);
  if (withRecord) writeFileSync(path + DIGEST_RECORD_SUFFIX, digestRecordText(readFileSync(library)));
}

/** The run stopped with its one line about `folder` and ran nothing. */
function expectRefused(r: CliRun, folder: string, problem: RegExp, marker: string): void {
  expect(r.signal).toBeNull();
  expect(r.status).toBe(1);
  expect(r.stdout).toBe("");
  const lines = r.stderr.trimEnd().split("\n");
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toContain(`unsafe cache folder ${folder}: `);
  expect(lines[0]).toMatch(problem);
  expect(lines[0]).toContain("fix: ");
  expect(existsSync(marker)).toBe(false);
}

/** The run rebuilt what `path` named (said in one line), and gave the clean cache's result. */
function expectRebuilt(r: CliRun, program: readonly string[], path: string, marker?: string): void {
  expect(r.signal).toBeNull();
  expect(r.status, r.stderr).toBe(0);
  expect(resultOf(r)).toBe(expected.get(program));
  expect(r.stderr.split("\n").filter((line) => line.includes(path) && /; rebuilding it$/.test(line))).toHaveLength(1);
  if (marker !== undefined) expect(existsSync(marker)).toBe(false);
}

beforeAll(() => {
  buildRunEntry();
  cli = CLI;
  base = mkdtempSync(join(tmpdir(), "rw-cache-security-"));
  warm = join(base, "warm");
  for (const program of [STATEPOINT, PLIMMIX]) {
    const r = runIn(warm, program);
    expect(r.status, r.stderr).toBe(0);
    expect(resultOf(r)).toMatch(/^\d+$/);
    expected.set(program, resultOf(r)!);
  }
}, 600_000);

afterAll(() => {
  if (base !== undefined) rmSync(base, { recursive: true, force: true });
});

describe("the cache folders are private", () => {
  it("creates the root and every folder in it with mode 0700, and says what it builds on first use", () => {
    const fresh = join(base, "fresh", "cache");
    const r = runIn(fresh, STATEPOINT);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^rootwalk: building the native runtime \(first use, a few seconds\): .*librwruntime-.*\.so$/m);
    for (const folder of [join(base, "fresh"), fresh, join(fresh, "native"), join(fresh, "objects")]) {
      expect((statSync(folder).mode & 0o777).toString(8), folder).toBe("700");
    }
  });

  it.skipIf(!AS_ROOT)("refuses a cache root or folder owned by another user, and loads nothing from it", () => {
    const { library, marker } = plantedLibrary();
    // The folder made foreign, the programs whose run goes through it, the artifacts planted there.
    const cases: [string, (readonly string[])[], ((cache: string) => string)[]][] = [
      ["", [STATEPOINT, PLIMMIX], [runtimeIn, programIn, pluginIn]],
      ["native", [STATEPOINT], [runtimeIn, programIn]],
      ["plimmix", [PLIMMIX], [pluginIn]],
      ["objects", [STATEPOINT], [runtimeIn]],
    ];
    for (const [folder, programs, planted] of cases) {
      const cache = cacheCopy(true);
      for (const at of planted) plant(at(cache), library, true);
      if (folder === "plimmix") rmSync(join(cache, "plimmix", "objects"), { recursive: true });
      chownSync(join(cache, folder), NOBODY, NOBODY);
      for (const program of programs) {
        expectRefused(
          runIn(cache, program),
          join(cache, folder),
          new RegExp(`owned by uid ${NOBODY}, mode 0[0-7]+, expected your uid ${process.geteuid!()}`),
          marker,
        );
      }
    }
  });

  it("refuses a group-writable and a world-writable cache folder", () => {
    const { library, marker } = plantedLibrary();
    for (const [folder, mode] of [
      ["", 0o770],
      ["native", 0o777],
      ["native", 0o1777],
      ["plimmix", 0o720],
    ] as const) {
      const cache = cacheCopy();
      if (folder !== "plimmix") plant(runtimeIn(cache), library, true);
      if (folder !== "native") plant(pluginIn(cache), library, true);
      chmodSync(join(cache, folder), mode);
      const r = runIn(cache, folder === "plimmix" ? PLIMMIX : STATEPOINT);
      expectRefused(
        r,
        join(cache, folder),
        new RegExp(`mode 0${mode.toString(8)}, writable by group or others; .*fix: chmod go-w ${join(cache, folder)}$`),
        marker,
      );
    }
  });

  it.skipIf(!AS_ROOT)("refuses a folder inside the cache replaced by a link to a foreign folder", () => {
    const { library, marker } = plantedLibrary();
    const cache = cacheCopy();
    const foreign = join(base, "foreign-native");
    renameSync(join(cache, "native"), foreign);
    plant(artifact(base, "foreign-native", /^librwruntime-.*\.so$/), library, true);
    chownSync(foreign, NOBODY, NOBODY);
    symlinkSync(foreign, join(cache, "native"));
    expectRefused(runIn(cache, STATEPOINT), join(cache, "native"), /is a symbolic link \(to .*foreign-native\)/, marker);
  });
});

describe("a cached artifact is loaded only if it is what rootwalk built", () => {
  it("a library planted in your own cache at the runtime's, a program's and the plugin's name is rebuilt, never loaded", () => {
    const { library, marker } = plantedLibrary();
    const cache = cacheCopy(true);
    const cases: [string, readonly string[]][] = [
      [runtimeIn(cache), STATEPOINT],
      [programIn(cache), STATEPOINT],
      [pluginIn(cache), PLIMMIX],
    ];
    for (const [path, program] of cases) {
      plant(path, library, false);
      // Without its object, llc must run and load the plugin: a planted plugin would run there.
      if (program === PLIMMIX) rmSync(join(cache, "plimmix", "objects"), { recursive: true });
      expectRebuilt(runIn(cache, program), program, path, marker);
    }
  });

  for (const damage of ["truncated", "bit-flipped"] as const) {
    it(`a ${damage} cached runtime, program library, object and plugin are rebuilt and the run is right`, () => {
      const cache = cacheCopy(true);
      const cases: [string, readonly string[]][] = [
        [runtimeIn(cache), STATEPOINT],
        [programIn(cache), STATEPOINT],
        [objectIn(cache), STATEPOINT],
        [pluginIn(cache), PLIMMIX],
      ];
      for (const [path, program] of cases) {
        if (damage === "truncated") truncateSync(path, 1000);
        else {
          const bytes = readFileSync(path);
          bytes[bytes.length >> 1]! ^= 0x10;
          writeFileSync(path, bytes);
        }
        if (program === PLIMMIX) rmSync(join(cache, "plimmix", "objects"), { recursive: true });
        expectRebuilt(runIn(cache, program), program, path);
      }
    });
  }
});

describe("temporaries", () => {
  /** Every `.tmp-` entry anywhere in `cache`. */
  function temporaries(cache: string): string[] {
    return readdirSync(cache, { recursive: true, encoding: "utf8" }).filter((path) => /(^|\/)[^/]*\.?tmp-\d+-/.test(path));
  }

  it("a build interrupted by Ctrl-C says so, exits 130, leaves no half-written final file and no temporaries", async () => {
    const cache = join(base, "interrupted");
    const child = spawn(process.execPath, [cli, "run", ...STATEPOINT], {
      detached: true,
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, ROOTWALK_CACHE_DIR: cache },
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.on("close", (code) => done(code)));
    // Interrupt (the terminal's SIGINT goes to the whole process group) while the runtime builds.
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && !(existsSync(join(cache, "native")) && readdirSync(join(cache, "native")).some((n) => n.startsWith(".tmp-")))) {
      await new Promise((done) => setTimeout(done, 5));
    }
    process.kill(-child.pid!, "SIGINT");
    expect(await exited).toBe(130);
    expect(stderr).toMatch(/^rootwalk run: interrupted$/m);
    expect(temporaries(cache)).toEqual([]);
    for (const name of readdirSync(join(cache, "native")).filter((n) => n.endsWith(".so"))) {
      // Anything with a final name is complete: it has its record and matches it.
      expect(readFileSync(join(cache, "native", name + DIGEST_RECORD_SUFFIX), "utf8")).toBe(digestRecordText(readFileSync(join(cache, "native", name))));
    }
    const r = runIn(cache, STATEPOINT);
    expect(r.status, r.stderr).toBe(0);
    expect(resultOf(r)).toBe(expected.get(STATEPOINT));
    expect(temporaries(cache)).toEqual([]);
  }, 120_000);

  it("sweeps the temporaries of processes that no longer run, keeps those of live ones", () => {
    const cache = cacheCopy();
    const dead = spawnSync("true").pid!;
    const stale = [join(cache, "native", `.tmp-${dead}-abc123`), join(cache, "objects", `x.o.tmp-${dead}-q1w2.o`)];
    mkdirSync(stale[0]!);
    writeFileSync(join(stale[0]!, "librwruntime.so"), "half");
    writeFileSync(stale[1]!, "half");
    const live = join(cache, "native", `.tmp-${process.pid}-keep`);
    mkdirSync(live);
    expect(runIn(cache, STATEPOINT).status).toBe(0);
    for (const path of stale) expect(existsSync(path), path).toBe(false);
    expect(existsSync(live)).toBe(true);
  });
});
