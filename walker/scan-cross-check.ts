import { RootwalkError } from "../src/errors.js";
import type { Memory } from "../src/memory/memory.js";
import type { RegistrySnapshot } from "../src/safepoints/registry.js";
import { scanStackRoots } from "./fast-scan.js";
import { FrameLog } from "./frame-log.js";
import { ScanKernel } from "./kernel-binding.js";
import { RootPairs, collectFrameRoots } from "./frame-roots.js";
import { type ManagedChunk, Unwinder, type UnwinderOptions, type WalkStart } from "./unwinder.js";

/*
 * The differential check of the fast scan loop against the general unwinder: both walk the same
 * stack and must give identical frames (SP, return address), root pairs (base slot, derived
 * slot, frame), transitions, stop reason and stop address, or throw the same error. It only
 * reads memory, and doubles (at least) the cost of a scan.
 *
 * Switched on per scanner or walk by the `crossCheck` option (StackRootScanner, walkStack). The
 * process entries (src/cli/main.ts, src/cli/run-entry.ts) read ROOTWALK_SCAN_CROSSCHECK once
 * (`crossCheckRequested`) and pass the option down to what the command builds (runNativeProgram,
 * the simulator, walk); rootwalk keeps no switch of its own. Without the option a scanner or walk
 * does not cross-check, unless the test hook below is set. Explicit stacks are checked by
 * test/walker/fast-scan.test.ts.
 */

/**
 * The tests' hook, and only theirs: test/support/cross-check-setup.ts sets `everyScan` in every
 * test process, so that every stack a test scans or walks with no `crossCheck` option (a scanner
 * or walk it builds, a command it runs in-process) is cross-checked too. rootwalk never sets it.
 */
export const CROSS_CHECK_TEST_HOOK: { everyScan: boolean } = { everyScan: false };

/** What a scanner or walk given no `crossCheck` option does: the test hook's setting. */
export function crossCheckByDefault(): boolean {
  return CROSS_CHECK_TEST_HOOK.everyScan;
}

/** For a process entry, once at startup: whether ROOTWALK_SCAN_CROSSCHECK=1 asks for the cross-check. */
export function crossCheckRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  return env["ROOTWALK_SCAN_CROSSCHECK"] === "1";
}

export interface ScanOutcome {
  frames: number;
  sps: number[];
  ras: number[];
  pairs: number[];
  /** The value read in each pair's base slot (what the collector visits). */
  baseValues: number[];
  transitions: number;
  stopReason: string | undefined;
  stoppedAt: number;
  /** Where each callee-saved register lived when the walk ended (fast frames must move them too). */
  regSlots: number[];
  error: string | undefined;
}

/** The general unwinder's answer: init/valid/next + collectFrameRoots. */
export function generalScan(snapshot: RegistrySnapshot, memory: Memory, start: WalkStart | readonly ManagedChunk[], options: UnwinderOptions): ScanOutcome {
  return scanWith("general", snapshot, memory, start, options);
}

/**
 * The fast scan loop's answer. The scan kernel has two instances of its loop (kernel.ts
 * scanFrames): a scan with a frame log runs the one that also serves extra boundaries, a
 * collection's scan (no log) the other. Both run here, and must agree on everything but the
 * frame log, which only the logged run has: so the loop collections use is the one compared
 * with the general unwinder, and the logged one with it.
 */
export function fastScan(snapshot: RegistrySnapshot, memory: Memory, start: WalkStart | readonly ManagedChunk[], options: UnwinderOptions): ScanOutcome {
  const logged = scanWith("fast", snapshot, memory, start, options);
  const unlogged = scanWith("fast-unlogged", snapshot, memory, start, options);
  for (const key of Object.keys(logged) as (keyof ScanOutcome)[]) {
    if (key === "sps" || key === "ras" || (key === "frames" && logged.error !== undefined)) continue;
    if (JSON.stringify(logged[key]) !== JSON.stringify(unlogged[key])) {
      throw new RootwalkError(
        "WALK",
        `the scan kernel with and without a frame log disagree on ${key}: ${JSON.stringify(unlogged[key]).slice(0, 200)} vs ${JSON.stringify(logged[key]).slice(0, 200)}`,
      );
    }
  }
  return logged;
}

/** The cross-check's binding to the scan kernel, reused (a check never runs inside another). */
let checkKernel: ScanKernel | undefined;

function scanWith(
  path: "general" | "fast" | "fast-unlogged",
  snapshot: RegistrySnapshot,
  memory: Memory,
  start: WalkStart | readonly ManagedChunk[],
  options: UnwinderOptions,
): ScanOutcome {
  const u = new Unwinder(snapshot, memory, options);
  const out = new RootPairs();
  const log = new FrameLog();
  let frames = 0;
  let error: string | undefined;
  try {
    if (path !== "general") {
      frames = scanStackRoots(u, start, out, (checkKernel ??= new ScanKernel()), path === "fast" ? log : undefined);
    } else {
      for (u.init(start); u.valid(); u.next()) {
        log.push(u.sp, u.ra);
        collectFrameRoots(u, out);
        frames++;
      }
    }
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
  }
  // On an error, the frames reached (the failing one included when its roots failed).
  return outcome(u, out, log, error === undefined ? frames : log.count, error);
}

function outcome(u: Unwinder, out: RootPairs, log: FrameLog, frames: number, error: string | undefined): ScanOutcome {
  const pairs: number[] = [];
  for (let i = 0; i < out.count; i++) pairs.push(out.baseSlots[i]!, out.derivedSlots[i]!, out.frameOf(i));
  return {
    frames,
    sps: Array.from(log.sps.subarray(0, log.count)),
    ras: Array.from(log.ras.subarray(0, log.count)),
    pairs,
    baseValues: Array.from(out.baseValues.subarray(0, out.count)),
    transitions: u.transitions,
    stopReason: u.stopReason,
    stoppedAt: u.stoppedAt,
    regSlots: Array.from({ length: u.calleeSavedCount }, (_, k) => u.regSlot(k)),
    error,
  };
}

/** Throws when the two paths disagree on this stack; returns the (common) outcome. */
export function crossCheckScan(snapshot: RegistrySnapshot, memory: Memory, start: WalkStart | readonly ManagedChunk[], options: UnwinderOptions): ScanOutcome {
  const general = generalScan(snapshot, memory, start, options);
  const fast = fastScan(snapshot, memory, start, options);
  for (const key of Object.keys(general) as (keyof ScanOutcome)[]) {
    if (JSON.stringify(general[key]) !== JSON.stringify(fast[key])) {
      throw new RootwalkError(
        "WALK",
        `fast scan and general unwinder disagree on ${key}: ${JSON.stringify(fast[key]).slice(0, 200)} vs ${JSON.stringify(general[key]).slice(0, 200)}`,
      );
    }
  }
  return general;
}
