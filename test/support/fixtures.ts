import { join } from "node:path";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";

/** ../shared/fixtures/split-stack/fixture_d300.json (see ../shared/notes/split-stacks.md). */
export const SPLIT_STACK_FIXTURE = join(repoRoot(), "..", "shared", "fixtures", "split-stack", "fixture_d300.json");
