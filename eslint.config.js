// Lint configuration (ESLint flat config, typescript-eslint). `npm run lint` runs it; .ci/run runs
// that before the tests. Formatting is not linted: that is prettier's job (`npm run format`).
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import tseslint from "typescript-eslint";

export default defineConfig(
  { ignores: ["dist/**", ".cache/**", "node_modules/**", "bench/results/**", "test/fixtures/**", "walker/scan-kernel/assembly/**"] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: {
        // Typed rules: each file is checked with the tsconfig.json that includes it.
        projectService: { allowDefaultProject: ["*.js", "scripts/*.mjs", "vitest.config.ts"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Typed rules that pay here: the native runtime and the CLI are async at their edges, and a
      // promise nobody awaits loses its error (a program's failure would pass silently).
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/await-thenable": "error",
      "@typescript-eslint/return-await": ["error", "in-try-catch"],
      // Unused code: `_`-prefixed names are deliberate (a callback's unused parameter).
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
    },
  },
);
