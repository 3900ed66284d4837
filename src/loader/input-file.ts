import { statSync } from "node:fs";
import { InvalidArgumentError } from "../errors.js";

/**
 * Refuses an input path that names a FIFO, a device or a socket, before it is opened: opening a
 * FIFO waits for a writer that never comes, and reading a device such as /dev/zero never ends
 * (rootwalk hung, or took memory until Node gave up). A missing file or a folder is left to the
 * read, which names it (ENOENT, EISDIR). `expected` says what the command reads there.
 */
export function refuseSpecialFile(path: string, expected: string): void {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined || stat.isFile() || stat.isDirectory()) return;
  const kind = stat.isFIFO() ? "a FIFO" : stat.isCharacterDevice() ? "a character device" : stat.isBlockDevice() ? "a block device" : "a socket";
  throw new InvalidArgumentError(path, `${kind}, not a regular file`, expected);
}
