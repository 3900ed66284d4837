import { describe, expect, it } from "vitest";
import { ModuleMap } from "../../src/unwind/module-map.js";
import { mappingAt, parseProcMaps, readProcSelfMapsText, readableBytesFrom } from "../../src/unwind/proc-maps.js";

/*
 * The one /proc/PID/maps reader: every line of the kernel's format, the mapping holding an
 * address, and how far memory is readable from one (adjacent readable mappings as one range).
 */

const TEXT = [
  "00400000-00401000 r--p 00000000 08:01 1234                               /usr/bin/prog",
  "00401000-00402000 r-xp 00001000 08:01 1234                               /usr/bin/prog",
  "00402000-00403000 ---p 00000000 00:00 0 ",
  "00403000-00404000 rw-p 00000000 00:00 0",
  "7ffd0000-7ffd2000 rw-p 00000000 00:00 0                                  [stack]",
  "7ffe0000-7ffe1000 r-xp 00000000 00:00 0                                  [vdso]",
  "7fff0000-7fff1000 r--p 00002000 08:01 99                                 /tmp/gone.so (deleted)",
  "",
].join("\n");

describe("/proc/PID/maps", () => {
  it("reads every line: range, permissions, file offset and path (empty for anonymous memory)", () => {
    const maps = parseProcMaps(TEXT);
    expect(maps.length).toBe(7);
    expect(maps[1]).toEqual({ start: 0x401000, end: 0x402000, perms: "r-xp", fileOffset: 0x1000, path: "/usr/bin/prog" });
    expect(maps[2]!.path).toBe("");
    expect(maps[4]!.path).toBe("[stack]");
  });

  it("the module map takes the mappings with a path or a [pseudo] name, not deleted files", () => {
    expect(ModuleMap.parseProcMaps(TEXT).map((m) => m.path)).toEqual(["/usr/bin/prog", "/usr/bin/prog", "[stack]", "[vdso]"]);
    expect(ModuleMap.parseProcMaps(TEXT)[1]).toEqual({ start: 0x401000, end: 0x402000, fileOffset: 0x1000, path: "/usr/bin/prog" });
  });

  it("readable bytes run across adjacent readable mappings and stop at an unreadable or unmapped one", () => {
    const maps = parseProcMaps(TEXT);
    expect(readableBytesFrom(maps, 0x400010)).toBe(0x402000 - 0x400010);
    expect(readableBytesFrom(maps, 0x402010)).toBe(0);
    expect(readableBytesFrom(maps, 0x7ffd1ff8)).toBe(8);
    expect(readableBytesFrom(maps, 0x10)).toBe(0);
    expect(mappingAt(maps, 0x7ffd1000)?.path).toBe("[stack]");
    expect(mappingAt(maps, 0x7ffd2000)).toBeUndefined();
  });

  it("this process's maps hold its stack and its executable", () => {
    const maps = parseProcMaps(readProcSelfMapsText());
    expect(maps.some((m) => m.path === "[stack]" && m.perms.startsWith("rw"))).toBe(true);
    expect(maps.some((m) => m.path === process.execPath || m.path.endsWith("/node"))).toBe(true);
  });
});
