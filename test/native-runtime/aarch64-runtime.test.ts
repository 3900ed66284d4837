import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, type TestContext } from "vitest";
import { AARCH64 } from "../../src/arch/aarch64.js";
import { compileProgram } from "../../src/toolchain/compile-program.js";
import { findLlvmTool, repoRoot, runTool } from "../../src/toolchain/llvm-toolchain.js";
import { NATIVE_PROGRAMS } from "../native-programs/programs.js";
import { type Arm64Rootwalk, arm64Rootwalk, runArm64 } from "../support/arm64-node.js";
import { irSource } from "../support/ir-source.js";
import { largePageQemuFlags } from "../support/large-pages.js";
import { programArguments, runJsonOutcome } from "../support/native-run.js";

/*
 * The native runtime's signal paths and thread stops on AArch64 (issue 20 item 4): rootwalk runs
 * in the arm64 Node under qemu-user (test/support/arm64-node.ts), so the fault handler, its
 * alternate signal stacks and the stack guards are AArch64 code built by the cross gcc, and the
 * faults are delivered by qemu-user as the AArch64 Linux kernel delivers them (siginfo, ucontext).
 *
 *   - a load through a wild address in managed code: the message names rw_main + the offset of
 *     that very load (the signal context's PC, uc_mcontext.pc) and the address (si_addr), on
 *     stderr and in the --json failure object;
 *   - a gc_thread_start thread recursing without end: the fault lands in the guard below its
 *     stack (the handler runs on the thread's alternate signal stack) and is named a stack overflow;
 *     run with 64 KiB pages (test/support/large-pages.ts), where the guards must be placed at 64
 *     KiB boundaries (before, every run there ended with "cannot place a thread stack in the scan
 *     memory: mprotect of the stack's guard failed", exit 1);
 *   - a statepoint program keeping a pointer across collections as an integer, under --stress:
 *     the read of the quarantined (protected) old copy faults, with the poison explanation;
 *   - sp-threads (4 workers and rw_main allocating, polling and collecting) under --stress
 *     --verify: every thread stops at a safepoint (the runtime polls at its entries; no signal
 *     stops a thread), several at once, and all are scanned and relocated: the reference result.
 *
 * The expected offsets come from the AArch64 object `rootwalk run` links (compiled the same way,
 * cached), disassembled by llvm-objdump: function-relative offsets are the same in the program
 * library. Each run costs about 10 s emulated on an idle machine (30-50 s on a loaded one). Without
 * the network, qemu-user or the cross compiler, each test is skipped and says why.
 */

const PROGRAMS = join(repoRoot(), "test", "native-runtime", "programs");
const EMULATED_TIMEOUT_MS = 300_000;
const TEST_TIMEOUT_MS = 400_000;
const WILD_ADDRESS = 0x1234;

const scratch = mkdtempSync(join(tmpdir(), "rootwalk-aarch64-runtime-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Instruction {
  /** From the function's first instruction. */
  offset: number;
  mnemonic: string;
  operands: string;
  /** The symbol of a relocation applied to it (a call's callee). */
  relocation?: string;
}

/** The instructions of `fn` in `program` compiled for AArch64 (statepoint mode) as `rootwalk run` compiles it. */
async function aarch64Function(program: string, fn: string): Promise<Instruction[]> {
  const object = await compileProgram(irSource(program), { mode: "statepoint", target: AARCH64 });
  const text = runTool(findLlvmTool("llvm-objdump"), ["-d", "-r", "--no-show-raw-insn", object]);
  const body = text.split(/\n(?=[0-9a-f]+ <)/).find((part) => part.startsWith(`${/^[0-9a-f]+/.exec(part)?.[0]} <${fn}>:`));
  if (body === undefined) throw new Error(`no function ${fn} in ${object}`);
  const start = Number.parseInt(body, 16);
  const instructions: Instruction[] = [];
  for (const line of body.split("\n").slice(1)) {
    const relocation = /^\s+[0-9a-f]+:\s+R_AARCH64_\w+\s+(\S+)$/.exec(line);
    if (relocation !== null && instructions.length > 0) instructions[instructions.length - 1]!.relocation = relocation[1]!;
    const m = /^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$/.exec(line);
    if (m !== null && relocation === null) instructions.push({ offset: Number.parseInt(m[1]!, 16) - start, mnemonic: m[2]!, operands: m[3]!.trim() });
  }
  return instructions;
}

/** The emulated rootwalk, or undefined after skipping the test with the reason. */
function emulated(ctx: TestContext): Arm64Rootwalk | undefined {
  const rootwalk = arm64Rootwalk();
  if (typeof rootwalk !== "string") return rootwalk;
  console.warn(`[aarch64-runtime] skipped: ${rootwalk}`);
  ctx.skip(rootwalk);
  return undefined;
}

/** A run the fault handler ended: its message lines (first builds' announcements left out) and what the first one names. */
interface Fault {
  stdout: string;
  lines: string[];
  thread: number;
  /** The faulting instruction of the function the message names, found at the offset it names. */
  instruction: Instruction | undefined;
  offset: number;
  faultAddress: number;
}

const FAULT_LINE = /^rootwalk run: segmentation fault in thread #(\d+) at (\w+)\+0x([0-9a-f]+) \(fault address 0x([0-9a-f]+)\)$/;

/**
 * Runs `program` (with `args`) in the emulated rootwalk; it must end with exit 3 and a fault in
 * function `fn`, whose AArch64 instructions (as `rootwalk run` compiles them) are `instructions`.
 */
async function runToFault(
  rootwalk: Arm64Rootwalk,
  program: string,
  args: readonly string[],
  instructions: readonly Instruction[],
  fn: string,
  qemuFlags: readonly string[] = [],
): Promise<Fault> {
  const r = await runArm64(rootwalk, [join(PROGRAMS, program), ...args, "--no-check", "--progress=0"], EMULATED_TIMEOUT_MS, { qemuFlags });
  const lines = r.stderr
    .trimEnd()
    .split("\n")
    .filter((line) => !line.startsWith("rootwalk: building "));
  console.log(`[aarch64-runtime] ${program} ${args.join(" ")}: exit ${r.status}: ${lines.join(" / ")} (${(r.elapsedMs / 1000).toFixed(1)} s emulated)`);
  expect(r.status, r.stderr).toBe(3);
  const m = FAULT_LINE.exec(lines[0] ?? "");
  expect(m, lines[0]).not.toBeNull();
  expect(m![2]).toBe(fn);
  const offset = Number.parseInt(m![3]!, 16);
  return {
    stdout: r.stdout,
    lines,
    thread: Number(m![1]),
    instruction: instructions.find((i) => i.offset === offset),
    offset,
    faultAddress: Number.parseInt(m![4]!, 16),
  };
}

describe("the native runtime on AArch64 (rootwalk run in the arm64 Node under qemu-aarch64)", () => {
  it(
    "a load through a wild address: exit 3, rw_main + the offset of that load, fault address 0x1234 (stderr and --json)",
    async (ctx) => {
      const rootwalk = emulated(ctx);
      if (rootwalk === undefined) return;
      const rwMain = await aarch64Function(join(PROGRAMS, "wild-load.ll"), "rw_main");
      // The load whose base register was last set to the wild address.
      let wildRegister: string | undefined;
      const load = rwMain.find((i) => {
        const mov = /^[wx](\d+), #(\S+)$/.exec(i.operands);
        if (i.mnemonic === "mov" && mov !== null) wildRegister = Number(mov[2]) === WILD_ADDRESS ? mov[1] : wildRegister;
        return i.mnemonic === "ldr" && wildRegister !== undefined && i.operands.endsWith(`[x${wildRegister}]`);
      });
      expect(load, "the load through 0x1234 in rw_main").toBeDefined();
      const fault = await runToFault(rootwalk, "wild-load.ll", ["--json"], rwMain, "rw_main");
      expect(fault.instruction).toBe(load);
      expect(fault.faultAddress).toBe(WILD_ADDRESS);
      expect(fault.thread).toBe(0);
      expect(fault.lines).toHaveLength(1);
      expect(JSON.parse(fault.stdout)).toEqual({
        error: "runtime-failure",
        exitCode: 3,
        message: fault.lines[0]!.slice("rootwalk run: ".length),
        collections: 0,
      });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "with 64 KiB pages, a gc_thread_start thread overflowing its stack: exit 3, a store in `down` faulting in the guard, named a stack overflow",
    async (ctx) => {
      const rootwalk = emulated(ctx);
      if (rootwalk === undefined) return;
      const down = await aarch64Function(join(PROGRAMS, "thread-overflow.ll"), "down");
      // The guards are placed (mprotect) at 64 KiB boundaries: a 64 KiB-page kernel refuses others.
      const fault = await runToFault(rootwalk, "thread-overflow.ll", ["--thread-stack", "1M"], down, "down", largePageQemuFlags());
      expect(fault.thread).toBe(1);
      // The frame's first write below the SP the recursion lowers (str, stp: a store to the stack).
      expect(fault.instruction?.mnemonic, JSON.stringify(fault.instruction)).toMatch(/^st/);
      expect(fault.instruction?.operands).toMatch(/\[sp\b/);
      expect(fault.lines[1]).toBe(
        "  the fault address is in the guard below a gc_thread_start thread's stack (1048576 bytes, --thread-stack): a stack overflow",
      );
      expect(fault.lines).toHaveLength(2);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a pointer hidden as an integer across collections (statepoint, --stress --verify): exit 3, the load of the old copy, the poison explanation",
    async (ctx) => {
      const rootwalk = emulated(ctx);
      if (rootwalk === undefined) return;
      const rwMain = await aarch64Function(join(PROGRAMS, "stale-hidden-int.ll"), "rw_main");
      const fault = await runToFault(rootwalk, "stale-hidden-int.ll", ["--stress", "--verify"], rwMain, "rw_main");
      expect(fault.stdout).toBe("");
      expect(fault.thread).toBe(0);
      expect(fault.instruction?.mnemonic).toBe("ldr");
      expect(fault.lines[1]).toBe(
        "  poisoning is on (--poison, implied by --stress): the fault address is in the heap, in memory a collection evacuated or freed,",
      );
      expect(fault.lines[2]).toBe(
        "  quarantined and protected under --stress: a read or write through a stale pointer, one the program kept across a collection without a root",
      );
      expect(fault.lines).toHaveLength(3);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "--generational: no return barriers on AArch64, said once on stderr; nursery collections walk whole stacks and give the result",
    async (ctx) => {
      const rootwalk = emulated(ctx);
      if (rootwalk === undefined) return;
      const args = [join(PROGRAMS, "generational-table.ll"), "--generational", "--nursery", "256K"];
      const outcome = await runArm64(rootwalk, [...args, "--json"], EMULATED_TIMEOUT_MS);
      const run = runJsonOutcome(args, outcome) as ReturnType<typeof runJsonOutcome> & { framesSkipped: number; returnBarriersArmed: number };
      expect(run.result).toBe("25591680");
      expect(run.framesSkipped).toBe(0);
      expect(run.returnBarriersArmed).toBe(0);
      expect(outcome.stderr.split("\n").filter((l) => /no return barriers/.test(l))).toEqual([
        "rootwalk run: no return barriers: return barriers are implemented for x86-64 only (this is AArch64); every nursery collection walks whole stacks",
      ]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "sp-threads --stress=100 --verify: the reference result, several threads stopped and scanned at once",
    async (ctx) => {
      const rootwalk = emulated(ctx);
      if (rootwalk === undefined) return;
      const entry = NATIVE_PROGRAMS.find((p) => p.name === "sp-threads")!;
      const args = [...programArguments(entry), "--stress=100", "--verify"];
      const log = join(scratch, "sp-threads-walks.jsonl");
      const outcome = await runArm64(rootwalk, [...args, "--json"], EMULATED_TIMEOUT_MS, { env: { ...process.env, ROOTWALK_WALK_LOG: log } });
      const run = runJsonOutcome(args, outcome);
      // Per collection: the threads whose walk found managed frames (each stopped at a safepoint).
      const stopped = readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { threads: { frames: { kind: string }[] }[] }).threads.filter((t) => t.frames.some((f) => f.kind === "managed")).length);
      console.log(
        `[aarch64-runtime] sp-threads ${args.slice(-2).join(" ")}: result=${run.result} collections=${run.collections} objectsMoved=${run.objectsMoved} ` +
          `rootsRelocated=${run.rootsRelocated} verifyFailures=${run.verifyFailures}, managed threads per stop ${Math.min(...stopped)}-${Math.max(...stopped)} ` +
          `(${(run.elapsedMs / 1000).toFixed(1)} s emulated)`,
      );
      expect(run.result).toBe(entry.expectedResult.toString());
      expect(run.verifyFailures).toBe(0);
      expect(run.objectsMoved).toBeGreaterThan(0);
      expect(stopped).toHaveLength(run.collections);
      expect(Math.max(...stopped)).toBeGreaterThanOrEqual(3); // rw_main and at least two workers stopped together
    },
    TEST_TIMEOUT_MS,
  );
});
