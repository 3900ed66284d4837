import { join } from "node:path";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";

/**
 * A recorded split-stack run (recursion depth 300, 3 stacklet crossings, 302 roots), copied
 * unchanged from the project's shared/fixtures/split-stack/ so that a clone is self-contained.
 * Its format and provenance: test/fixtures/split-stack/README.md.
 */
export const SPLIT_STACK_FIXTURE = join(repoRoot(), "test", "fixtures", "split-stack", "fixture_d300.json");
