import { describe, expect, it } from "vitest";
import { ModuleMap } from "../../src/unwind/module-map.js";

describe("ModuleMap.refreshBeforeNextLookup", () => {
  it("runs the refresh once, at the next lookup, not before", () => {
    const map = new ModuleMap([]);
    let refreshes = 0;
    const refresh = (): void => {
      refreshes++;
      map.replaceWith(
        ModuleMap.fromMappings([{ start: 0x40_0000, end: 0x40_1000, fileOffset: 0, path: "/lib/fake.so" }], { readFile: () => new Uint8Array(0) }),
      );
    };
    map.refreshBeforeNextLookup(refresh);
    expect(refreshes).toBe(0);
    expect(map.moduleAt(0x40_0010)?.path).toBe("/lib/fake.so");
    expect(map.moduleAt(0x40_0020)?.path).toBe("/lib/fake.so");
    expect(map.modules.length).toBe(1);
    expect(refreshes).toBe(1);
  });
});
