import { describe, expect, it } from "vitest";
import { NATIVE_PROGRAMS } from "./programs.js";
import { arm64Rootwalk, runArm64 } from "../support/arm64-node.js";
import { programArguments, runJsonOutcome, runNativeJson } from "../support/native-run.js";

/*
 * `rootwalk run` on AArch64 Linux: rootwalk itself runs in the arm64 Node under qemu-user
 * (test/support/arm64-node.ts), so the native runtime, the program and the collector's stops are
 * AArch64 code: runtime.c and the AArch64 entry stubs built by the cross gcc, the program built by
 * llc -mtriple=aarch64-linux-gnu, koffi's arm64 prebuilt. A differential program must print the
 * result its x86-64 run prints (and programs.ts's reference result): first without collections
 * (--no-gc: the build, the entry stubs, gc_init's map registration, allocation), then with a
 * collection at every safepoint and heap verification (--stress=1 --verify: thread stops, roots
 * in AArch64 frames and in x19-x30, relocated registers restored by the stubs).
 *
 * sp-invoke runs both ways (201 collections at --stress=1); sp-csr keeps roots in callee-saved
 * registers (x20, x21 on AArch64: reference.test.ts checks its AArch64 stack maps) across calls,
 * outer frames included, and runs with a collection at every 25th safepoint (133 collections; at
 * --stress=1 it makes 3,301, two minutes emulated on a loaded machine). Emulated Node starts in
 * about 1.3 s and runs JavaScript 2-12x slower than the host: the file takes one to two minutes.
 * Without the network (the arm64 Node comes from the npm registry), qemu-user or the cross
 * compiler, each test is skipped and says why.
 */

const EMULATED_TIMEOUT_MS = 300_000;
const TEST_TIMEOUT_MS = 600_000;
const RUNS: readonly { program: string; flags: string[] }[] = [
  { program: "sp-invoke", flags: ["--no-gc"] },
  { program: "sp-invoke", flags: ["--stress=1", "--verify"] },
  { program: "sp-csr", flags: ["--stress=25", "--verify"] },
];

describe("rootwalk run in the arm64 Node under qemu-aarch64", () => {
  for (const { program, flags } of RUNS) {
    const entry = NATIVE_PROGRAMS.find((p) => p.name === program)!;
    const args = programArguments(entry);
    it(
      `${program} ${flags.join(" ")} prints the x86-64 run's result`,
      async (ctx) => {
        const rootwalk = arm64Rootwalk();
        if (typeof rootwalk === "string") {
          console.warn(`[aarch64-run] skipped: ${rootwalk}`);
          ctx.skip(rootwalk);
          return;
        }
        const x86 = await runNativeJson([...args, ...flags], EMULATED_TIMEOUT_MS);
        const outcome = await runArm64(rootwalk, [...args, ...flags, "--json"], EMULATED_TIMEOUT_MS);
        const arm64 = runJsonOutcome([...args, ...flags], outcome);
        console.log(
          `[aarch64-run] ${program} ${flags.join(" ")}: result=${arm64.result} (x86-64 ${x86.result}) collections=${arm64.collections} ` +
            `objectsMoved=${arm64.objectsMoved} framesScanned=${arm64.framesScanned} rootsRelocated=${arm64.rootsRelocated} ` +
            `verifyFailures=${arm64.verifyFailures} (${(arm64.elapsedMs / 1000).toFixed(1)} s emulated)`,
        );
        expect(arm64.result).toBe(x86.result);
        expect(arm64.result).toBe(entry.expectedResult.toString());
        expect(arm64.verifyFailures).toBe(0);
        if (flags.includes("--no-gc")) {
          expect(arm64.collections).toBe(0);
        } else {
          expect(arm64.collections).toBeGreaterThan(0);
          expect(arm64.objectsMoved).toBeGreaterThan(0);
          expect(arm64.rootsRelocated).toBeGreaterThan(0);
        }
      },
      TEST_TIMEOUT_MS,
    );
  }
});
