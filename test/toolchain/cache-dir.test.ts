import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { rootwalkCacheDir } from "../../src/toolchain/cache-dir.js";

describe("rootwalk's cache folder", () => {
  it("is ROOTWALK_CACHE_DIR, else $XDG_CACHE_HOME/rootwalk, else ~/.cache/rootwalk", () => {
    expect(rootwalkCacheDir({ ROOTWALK_CACHE_DIR: "/tmp/rw", XDG_CACHE_HOME: "/x" })).toBe("/tmp/rw");
    expect(rootwalkCacheDir({ ROOTWALK_CACHE_DIR: "rel/dir" })).toBe(resolve("rel/dir"));
    expect(rootwalkCacheDir({ ROOTWALK_CACHE_DIR: "", XDG_CACHE_HOME: "/x" })).toBe("/x/rootwalk");
    // The XDG spec ignores a relative XDG_CACHE_HOME.
    expect(rootwalkCacheDir({ XDG_CACHE_HOME: "relative" })).toBe(join(homedir(), ".cache", "rootwalk"));
    expect(rootwalkCacheDir({})).toBe(join(homedir(), ".cache", "rootwalk"));
  });
});
