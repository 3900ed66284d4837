import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/**
 * Two projects, one per LLVM rootwalk is tested against (ROOTWALK_LLVM picks the tools, see
 * src/toolchain/llvm-selection.ts):
 *  - llvm14: every test file (test/toolchain/llvm-selection.test.ts sets ROOTWALK_LLVM itself and
 *    uses both LLVMs, so it runs only here);
 *  - llvm19: the suites whose inputs LLVM builds (corpus, plimmix, native stops, native programs),
 *    again with LLVM 19 (opaque pointers). Suites that read only recorded bytes, the collector on
 *    simulated memory, the byte fuzzers and the benchmarks' helpers gain nothing from a second
 *    LLVM and run once. The program fuzzer runs under both (fewer fixed seeds under LLVM 19).
 * Compiled objects are cached under .cache/ by content and tool version, so the two projects
 * never share or overwrite an object.
 */
/** Tests keep rootwalk's cache inside the checkout (git-ignored), shared by both projects. */
const CACHE_ENV = {
  ROOTWALK_CACHE_DIR: resolve(dirname(fileURLToPath(import.meta.url)), ".cache"),
  // Every stack a test walks (walkStack, StackRootScanner) is also walked by the other path
  // (fast scan loop / general unwinder) and must give identical frames, roots and pairs
  // (walker/scan-cross-check.ts): in the test process by the setup file below, in the processes
  // tests start (the CLI, `rootwalk run`) by this variable, read once by their entry.
  ROOTWALK_SCAN_CROSSCHECK: "1",
};

export const LLVM19_SUITES = [
  "test/toolchain/corpus.test.ts",
  "test/toolchain/corpus-aarch64.test.ts",
  "test/walker/aarch64-frames-gdb.test.ts",
  "test/loader/corpus-maps.test.ts",
  "test/plimmix/plugin.test.ts",
  "test/plimmix/loaders-agree.test.ts",
  "test/walker/native/native-stop.test.ts",
  "test/walker/native-plimmix/plimmix-stop.test.ts",
  "test/walker/native-walk.test.ts",
  "test/native-programs/reference.test.ts",
  "test/native-programs/runtime.test.ts",
  "test/native-runtime/weak-map-label.test.ts",
  "test/fuzz-programs/fuzz-programs.test.ts",
  "test/native-runtime/walk-vs-gdb.test.ts",
  "test/walker/core/core-walk.test.ts",
  "test/check/check.test.ts",
  "test/native-runtime/interior-roots.test.ts",
  "test/native-runtime/generational.test.ts",
  "test/native-runtime/return-barriers.test.ts",
];

const shared = {
  // Compiling the .ll corpus with opt/llc is the slow part; the first test that needs an
  // object compiles it and caches it under .cache/ (see test/support/llvm-tools.ts).
  testTimeout: 120_000,
  hookTimeout: 300_000,
  pool: "forks" as const,
  setupFiles: ["test/support/cross-check-setup.ts"],
};

export default defineConfig({
  test: {
    ...shared,
    // vitest's default on 2 cores is 1 worker; much of a test's time is spent waiting on opt, llc,
    // gcc, gdb and native runs, so two files at a time keep both cores busy.
    maxWorkers: 2,
    projects: [
      { test: { ...shared, name: "llvm14", include: ["test/**/*.test.ts"], env: { ...CACHE_ENV, ROOTWALK_LLVM: "14" } } },
      { test: { ...shared, name: "llvm19", include: LLVM19_SUITES, env: { ...CACHE_ENV, ROOTWALK_LLVM: "19" } } },
    ],
  },
});
