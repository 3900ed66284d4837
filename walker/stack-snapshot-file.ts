import { readFileSync } from "node:fs";
import { InvalidArgumentError, MalformedInputError, RootwalkError, withContext } from "../src/errors.js";
import { refuseSpecialFile } from "../src/loader/input-file.js";
import { type LoadedSnapshot, type StackSnapshotJson, loadStackSnapshot } from "./stack-snapshot.js";

/**
 * A walk snapshot file (docs/snapshot-format.md) read and loaded, as `rootwalk walk FILE` does:
 * walk it with `walkStack(loaded.registry.snapshot(), loaded.memory, loaded.start, ...)`. A path
 * that is no readable regular file, text that is no JSON and a snapshot that is not one are each
 * a RootwalkError whose message starts with the path.
 */
export function loadStackSnapshotFile(path: string): LoadedSnapshot {
  refuseSpecialFile(path, "a readable file");
  let parsed: StackSnapshotJson;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8")) as StackSnapshotJson;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== undefined) throw new InvalidArgumentError(path, code, "a readable file");
    throw new MalformedInputError(`${path}: JSON`, 0, (e as Error).message, "a stack snapshot in JSON");
  }
  try {
    return loadStackSnapshot(parsed);
  } catch (e) {
    throw e instanceof RootwalkError ? withContext(e, path) : e;
  }
}
