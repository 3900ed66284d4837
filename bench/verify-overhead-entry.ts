/**
 * Child process of the verify-overhead measurement (the runtime runs one program per process):
 * runs a linked program with a collection at every 7th safepoint and allocation, with or without
 * the heap verification, and prints the run's collections and phasesMs as one JSON line.
 * Usage: node verify-overhead-entry.js PROGRAM.so RUNTIME.so verify|no-verify
 */
import { runNativeProgram } from "../src/native/native-runtime.js";

const STRESS_EVERY = 7;
const [program, runtime, mode] = process.argv.slice(2);
if (program === undefined || runtime === undefined || (mode !== "verify" && mode !== "no-verify")) {
  process.stderr.write("usage: verify-overhead-entry PROGRAM.so RUNTIME.so verify|no-verify\n");
  process.exit(1);
}
const r = await runNativeProgram({ program, runtime, heapBytes: 256 << 20, stressEvery: STRESS_EVERY, noGc: false, verify: mode === "verify" });
process.stdout.write(`${JSON.stringify({ result: r.result, collections: r.collections, verifyFailures: r.verifyFailures, phasesMs: r.phasesMs })}\n`);
setImmediate(() => process.exit(0));
