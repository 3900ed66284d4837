import { accessSync, closeSync, constants, openSync, statSync, unlinkSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { InvalidArgumentError } from "../errors.js";

/**
 * Checks, before any work starts, that `path` can be written as a file: its folder exists and is
 * writable, the path is not a folder, and the file can really be opened for writing (created and
 * removed again when it did not exist: access() alone says yes to root for /proc or a read-only
 * mount). A run whose result was computed must not be lost because the output path was mistyped.
 */
export function checkOutputPath(path: string, option: string): void {
  const full = resolve(path);
  const stat = statOrUndefined(full);
  if (stat?.isDirectory()) throw new InvalidArgumentError(option, path, "a file path, not a folder");
  const folder = dirname(full);
  const folderStat = statOrUndefined(folder);
  if (folderStat === undefined) throw new InvalidArgumentError(option, path, `a path in an existing folder (${folder} does not exist)`);
  if (!folderStat.isDirectory()) throw new InvalidArgumentError(option, path, `a path in a folder (${folder} is a file)`);
  try {
    accessSync(stat === undefined ? folder : full, constants.W_OK);
  } catch {
    throw new InvalidArgumentError(option, path, `a writable path (${stat === undefined ? folder : full} is not writable)`);
  }
  try {
    // "r+" opens an existing file for writing without truncating it; "wx" creates a new one.
    closeSync(openSync(full, stat === undefined ? "wx" : "r+"));
    if (stat === undefined) unlinkSync(full);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "an error";
    throw new InvalidArgumentError(option, path, `a path a file can be written to (opening it for writing failed with ${code})`);
  }
}

function statOrUndefined(path: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}
