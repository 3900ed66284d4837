import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

/**
 * The one folder rootwalk writes compiled objects, plugins and native libraries to. Never inside
 * the installed package (a global or read-only install must work):
 *   1. `ROOTWALK_CACHE_DIR`, if set and not empty;
 *   2. `$XDG_CACHE_HOME/rootwalk`, if XDG_CACHE_HOME is an absolute path (the XDG spec ignores
 *      relative ones);
 *   3. `~/.cache/rootwalk`.
 * Every entry under it is keyed by content and tool version, so concurrent users and versions
 * never overwrite each other's files.
 */
export function rootwalkCacheDir(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const explicit = env["ROOTWALK_CACHE_DIR"];
  if (explicit !== undefined && explicit !== "") return resolve(explicit);
  const xdg = env["XDG_CACHE_HOME"];
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, "rootwalk");
  return join(homedir(), ".cache", "rootwalk");
}

/** A named area of the cache (`objects`, `plimmix`, `native`, ...). */
export function cacheSubdir(...parts: string[]): string {
  return join(rootwalkCacheDir(), ...parts);
}
