import { readFileSync } from "node:fs";

/*
 * `/proc/PID/maps`, the one reader of it: each line is
 *
 *   start-end perms offset dev inode [path]
 *   7f3a1c000000-7f3a1c021000 r-xp 00000000 08:01 1234   /usr/lib/libc.so.6
 *
 * (addresses and offset in hex; perms four letters, `r` first when readable; path empty for an
 * anonymous mapping, a [pseudo] name such as "[stack]" or "[vdso]", and " (deleted)" appended
 * when the file is gone). The module map (module-map.ts) takes the mappings with a path; the
 * native runtime asks which mapping holds a stopped thread's SP and how far memory is readable
 * from the map pointer `gc_init` received.
 */

export interface ProcMapping {
  start: number;
  /** Exclusive. */
  end: number;
  /** "r-xp" and the like. */
  perms: string;
  /** Offset in the file of the mapping's first byte. */
  fileOffset: number;
  /** The file, a [pseudo] name, or "" (anonymous). */
  path: string;
}

const LINE = /^([0-9a-f]+)-([0-9a-f]+) (\S+) ([0-9a-f]+) \S+ \d+\s*(.*)$/;

/** Every mapping of `text` (`/proc/PID/maps` contents), in its order (ascending addresses). */
export function parseProcMaps(text: string): ProcMapping[] {
  const out: ProcMapping[] = [];
  for (const line of text.split("\n")) {
    const m = LINE.exec(line);
    if (m === null) continue;
    out.push({ start: parseInt(m[1]!, 16), end: parseInt(m[2]!, 16), perms: m[3]!, fileOffset: parseInt(m[4]!, 16), path: m[5]! });
  }
  return out;
}

/** This process's mappings as text (the kernel builds it afresh at every read). */
export function readProcSelfMapsText(): string {
  return readFileSync("/proc/self/maps", "utf8");
}

/** The mapping that holds `address`, or undefined. */
export function mappingAt(mappings: readonly ProcMapping[], address: number): ProcMapping | undefined {
  return mappings.find((m) => address >= m.start && address < m.end);
}

/** Bytes readable from `address` on, adjacent readable mappings counted as one range (0: none). */
export function readableBytesFrom(mappings: readonly ProcMapping[], address: number): number {
  let end = address;
  for (;;) {
    const m = mappingAt(mappings, end);
    if (m === undefined || !m.perms.startsWith("r")) break;
    end = m.end;
  }
  return end - address;
}
