import { createHash } from "node:crypto";
import { closeSync, constants, fstatSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, type Stats } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { privateCacheFolder, sweepStaleTemporaries, TEMPORARY_PREFIX } from "./cache-dir.js";

/**
 * Get or build a cached artifact, with a digest record: the one way rootwalk puts a file it will
 * later load or link (runtime, program library, object, plimmix plugin) into its cache.
 *
 *   const so = cachedArtifact({ path, what: "the native runtime", announceBuild: true,
 *                               build: (output) => runTool("gcc", [..., "-o", output]) });
 *
 * Invariants:
 *  - the folder is private (privateCacheFolder: yours, not group/other writable, no links);
 *  - `path` is returned only if it is a regular file (not a link: opened with O_NOFOLLOW) whose
 *    size and SHA-256 equal its record `<path>.sha256` ("sha256 <hex> <bytes>\n"), written when
 *    rootwalk built it. Anything else (missing, truncated, changed, planted, no record) is
 *    rebuilt, never loaded, and a rebuild of an existing file is said in one line on stderr;
 *  - everything is written inside a fresh temporary folder (`.tmp-<pid>-XXXXXX`, made by
 *    mkdtemp: exclusive, mode 0700) and renamed into place, the artifact before its record: a
 *    half-written file never has a final name, and an artifact whose record is missing or stale
 *    is rebuilt. A build killed by a signal leaves its temporary folder behind; the next use of
 *    the folder removes those of processes that no longer run (sweepStaleTemporaries).
 */
export interface CachedArtifactSpec {
  /** Final path of the artifact (its folder is created if needed). */
  path: string;
  /** What it is, for the notices ("the native runtime", "object"). */
  what: string;
  /** Say on stderr, before building it, that a missing artifact is being built (slow builds). */
  announceBuild?: boolean;
  /** Writes the artifact to `output`; `scratch` is a private folder for intermediate files. */
  build: (output: string, scratch: string) => void;
}

/** Suffix of an artifact's digest record. */
export const DIGEST_RECORD_SUFFIX = ".sha256";

/** Where the user is told about builds and rebuilds (stderr; never stdout, which --json owns). */
function notice(line: string): void {
  process.stderr.write(`rootwalk: ${line}\n`);
}

/**
 * The path of the intact artifact `spec.path`, built (or rebuilt) first if needed. Throws
 * UnsafeCacheError (cache-dir.ts) for a folder that is not private, or what `build` throws.
 */
export function cachedArtifact(spec: CachedArtifactSpec): string {
  const path = resolve(spec.path);
  const folder = privateCacheFolder(dirname(path));
  sweepStaleTemporaries(folder);
  const problem = artifactProblem(path);
  if (problem === undefined) return path;
  if (problem !== MISSING) notice(`cached ${spec.what} ${path} ${problem}; rebuilding it`);
  else if (spec.announceBuild === true) notice(`building ${spec.what} (first use, a few seconds): ${path}`);
  const scratch = mkdtempSync(join(folder, `${TEMPORARY_PREFIX}${process.pid}-`));
  try {
    const output = join(scratch, basename(path));
    spec.build(output, scratch);
    const record = join(scratch, basename(path) + DIGEST_RECORD_SUFFIX);
    const bytes = readFileSync(output);
    writeFileSync(record, digestRecordText(bytes), { flag: "wx", mode: 0o600 });
    renameSync(output, path);
    renameSync(record, path + DIGEST_RECORD_SUFFIX);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  verified.delete(path);
  return path;
}

const MISSING = "is missing";

function digestOf(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** The digest record of an artifact with these bytes (what `<path>.sha256` holds). */
export function digestRecordText(bytes: Uint8Array): string {
  return `sha256 ${digestOf(bytes)} ${bytes.byteLength}\n`;
}

/** What was verified in this process, by path: a file with the same identity is not read again. */
const verified = new Map<string, string>();

function identity(stats: Stats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
}

/** The text of a digest record (never through a link), or undefined if there is none to read. */
function readRecord(recordPath: string): string | undefined {
  try {
    const fd = openSync(recordPath, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      return readFileSync(fd, "utf8");
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/** Why `path` must not be used (MISSING, or what is wrong with it); undefined if it is intact. */
function artifactProblem(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return MISSING;
    if (code === "ELOOP") return "is a symbolic link";
    return `cannot be read (${code ?? (error as Error).message})`;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return "is not a regular file";
    if (verified.get(path) === identity(stats)) return undefined;
    const record = readRecord(path + DIGEST_RECORD_SUFFIX);
    if (record === undefined) return "has no digest record";
    const m = /^sha256 ([0-9a-f]{64}) (\d+)\n$/.exec(record);
    if (m === null) return "has a malformed digest record";
    if (Number(m[2]) !== stats.size) return `is ${stats.size} bytes, ${m[2]} when built (truncated or changed)`;
    if (digestOf(readFileSync(fd)) !== m[1]) return "does not match the SHA-256 recorded when it was built (changed)";
    verified.set(path, identity(stats));
    return undefined;
  } finally {
    closeSync(fd);
  }
}
