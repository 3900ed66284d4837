/*
 * A cpio archive in the "newc" format, the one the Linux kernel unpacks as an initramfs
 * (Documentation/driver-api/early-userspace/buffer-format.rst): per entry a 110-byte ASCII
 * header ("070701" and 13 eight-digit hex fields), the NUL-terminated name padded to 4 bytes,
 * the data padded to 4 bytes; a "TRAILER!!!" entry ends it. Folders must come before what they
 * hold. Owner root, one link, modification time 0 (the same inputs give the same bytes).
 */

export interface CpioEntry {
  /** Path inside the archive, without a leading slash. */
  path: string;
  /** File type and permission bits (0o100755 a program, 0o40755 a folder, 0o20600 a character device). */
  mode: number;
  data?: Uint8Array;
  /** A device node's major and minor numbers. */
  device?: [major: number, minor: number];
}

const MAGIC = "070701";
const HEADER_BYTES = 110;
const TRAILER = "TRAILER!!!";

function padding(bytes: number): Uint8Array {
  return new Uint8Array((4 - (bytes % 4)) % 4);
}

function hex8(n: number): string {
  return n.toString(16).padStart(8, "0");
}

export function cpioNewc(entries: readonly CpioEntry[]): Uint8Array {
  const parts: Uint8Array[] = [];
  const add = (e: CpioEntry, inode: number): void => {
    const data = e.data ?? new Uint8Array(0);
    const name = new TextEncoder().encode(`${e.path}\0`);
    const [major, minor] = e.device ?? [0, 0];
    // ino, mode, uid, gid, nlink, mtime, filesize, devmajor, devminor, rdevmajor, rdevminor, namesize, check
    const fields = [inode, e.mode, 0, 0, 1, 0, data.length, 0, 0, major, minor, name.length, 0];
    parts.push(new TextEncoder().encode(MAGIC + fields.map(hex8).join("")), name, padding(HEADER_BYTES + name.length), data, padding(data.length));
  };
  entries.forEach((e, i) => add(e, i + 1));
  add({ path: TRAILER, mode: 0 }, 0);
  return Buffer.concat(parts);
}
