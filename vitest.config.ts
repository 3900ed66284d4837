import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Compiling the .ll corpus with opt/llc is the slow part; the first test that needs an
    // object compiles it and caches it under .cache/ (see test/support/llvm-tools.ts).
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: "forks",
  },
});
