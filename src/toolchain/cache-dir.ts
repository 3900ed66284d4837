import { lstatSync, mkdirSync, readdirSync, readlinkSync, realpathSync, rmSync, type Stats } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { RootwalkError } from "../errors.js";

/**
 * The one folder rootwalk writes compiled objects, plugins and native libraries to. Never inside
 * the installed package (a global or read-only install must work):
 *   1. `ROOTWALK_CACHE_DIR`, if set and not empty;
 *   2. `$XDG_CACHE_HOME/rootwalk`, if XDG_CACHE_HOME is an absolute path (the XDG spec ignores
 *      relative ones);
 *   3. `~/.cache/rootwalk`.
 * Every entry under it is keyed by content and tool version, so concurrent users and versions
 * never overwrite each other's files.
 *
 * Security model: rootwalk loads code from this folder (dlopen of the runtime and of programs,
 * `llc -load` of the plimmix plugin, cached objects linked into programs), so whoever can write
 * into it runs code as the user running rootwalk. Hence the rule OpenSSH's StrictModes applies
 * to ~/.ssh: the root (symbolic links in its own path followed) and every folder below it on the
 * way to an artifact (never followed: a folder replaced by a link is refused) must be owned by
 * the current user and not writable by group or others; otherwise privateCacheFolder throws an
 * UnsafeCacheError and nothing is loaded. Folders rootwalk creates get mode 0700.
 * Each artifact is then checked against a digest recorded when it was built (cache-artifact.ts).
 */
export function rootwalkCacheDir(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const explicit = env["ROOTWALK_CACHE_DIR"];
  if (explicit !== undefined && explicit !== "") return resolve(explicit);
  const xdg = env["XDG_CACHE_HOME"];
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, "rootwalk");
  return join(homedir(), ".cache", "rootwalk");
}

/** A named area of the cache (`objects`, `plimmix`, `native`, ...): its path, not checked. */
export function cacheSubdir(...parts: string[]): string {
  return join(rootwalkCacheDir(), ...parts);
}

/** Mode of every folder rootwalk creates in the cache: only its owner may list or change it. */
export const PRIVATE_FOLDER_MODE = 0o700;
/** Permission bits that let someone other than the owner create, rename or delete entries. */
const GROUP_OR_OTHER_WRITE = 0o022;

/** A cache folder that someone other than the current user controls: nothing is loaded from it. */
export class UnsafeCacheError extends RootwalkError {
  constructor(
    readonly folder: string,
    readonly problem: string,
    readonly fix: string,
  ) {
    super(
      "UNSAFE_CACHE",
      `unsafe cache folder ${folder}: ${problem}; rootwalk loads code only from cache folders you own that no one else can write; fix: ${fix}`,
    );
  }
}

function modeText(mode: number): string {
  return `0${(mode & 0o7777).toString(8).padStart(3, "0")}`;
}

function currentUid(): number {
  return process.geteuid?.() ?? -1;
}

/** Throws unless `stats` (of `folder`) is a directory of the current user that only it can write. */
function requirePrivate(folder: string, stats: Stats, isRoot: boolean): void {
  const uid = currentUid();
  const replaceHint = isRoot
    ? `set ROOTWALK_CACHE_DIR to a folder of your own (mkdir -m 700 DIR)`
    : `remove ${folder} (rootwalk recreates it) or use another ROOTWALK_CACHE_DIR`;
  if (stats.isSymbolicLink()) {
    let target = "?";
    try {
      target = readlinkSync(folder);
    } catch {
      // the link's text is only for the message
    }
    throw new UnsafeCacheError(folder, `is a symbolic link (to ${target}), expected a folder`, replaceHint);
  }
  if (!stats.isDirectory()) throw new UnsafeCacheError(folder, `is not a folder (mode ${modeText(stats.mode)})`, replaceHint);
  if (uid >= 0 && stats.uid !== uid) {
    throw new UnsafeCacheError(folder, `owned by uid ${stats.uid}, mode ${modeText(stats.mode)}, expected your uid ${uid}`, replaceHint);
  }
  if ((stats.mode & GROUP_OR_OTHER_WRITE) !== 0) {
    throw new UnsafeCacheError(folder, `owned by uid ${stats.uid}, mode ${modeText(stats.mode)}, writable by group or others`, `chmod go-w ${folder}`);
  }
}

/** lstat, or undefined if nothing is there. */
function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Creates `folder` with mode 0700 if it is missing (a concurrent creator is fine); returns its lstat. */
function ensureFolder(folder: string, recursive: boolean): Stats {
  const existing = lstatOrUndefined(folder);
  if (existing !== undefined) return existing;
  try {
    mkdirSync(folder, { mode: PRIVATE_FOLDER_MODE, recursive });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return lstatSync(folder);
}

/**
 * Makes `folder` (absolute) ready to hold artifacts and returns it: missing folders are created
 * with mode 0700; the cache root (rootwalkCacheDir, or `folder` itself when it lies outside it:
 * a caller's own cache folder) and each folder from it down to `folder` must be private
 * (requirePrivate). Throws UnsafeCacheError otherwise, before anything in it is read.
 */
export function privateCacheFolder(folder: string): string {
  const target = resolve(folder);
  const configuredRoot = rootwalkCacheDir();
  const inside = relative(configuredRoot, target);
  const outside = inside === ".." || inside.startsWith(`..${sep}`) || isAbsolute(inside);
  const root = outside ? target : configuredRoot;
  // The root may be reached through links the user made (a ~/.cache on another disk): checked
  // where it really is. Below it, nothing is followed.
  ensureFolder(root, true);
  const realRoot = realpathSync(root);
  requirePrivate(root, lstatSync(realRoot), true);
  let current = root;
  for (const part of relative(root, target)
    .split(sep)
    .filter((p) => p !== "")) {
    current = join(current, part);
    requirePrivate(current, ensureFolder(current, false), false);
  }
  return target;
}

/** Prefix of every temporary entry in a cache folder: `.tmp-<pid>-<random>`. */
export const TEMPORARY_PREFIX = ".tmp-";
/** A temporary entry's owner: this format, or the older `<name>.tmp-<pid>-<random><suffix>`. */
const TEMPORARY_PID = /(?:^|\.)tmp-(\d+)-/;

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

const sweptFolders = new Set<string>();

/**
 * Removes the temporaries that processes which no longer run left in `folder` (a build killed by
 * Ctrl-C, SIGTERM or SIGKILL never reaches its own cleanup). Once per folder per process.
 */
export function sweepStaleTemporaries(folder: string): void {
  if (sweptFolders.has(folder)) return;
  sweptFolders.add(folder);
  for (const name of readdirSync(folder)) {
    const pid = TEMPORARY_PID.exec(name)?.[1];
    if (pid === undefined || Number(pid) === process.pid || processIsAlive(Number(pid))) continue;
    rmSync(join(folder, name), { recursive: true, force: true });
  }
}
