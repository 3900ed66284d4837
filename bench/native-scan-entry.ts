/**
 * Child process of the NativeScan case (the runtime runs one program per process): runs a
 * linked program with a collection at every safepoint and allocation and prints the time its
 * stack scans took (thread records and koffi views included), the frames they walked, and the
 * time of the collector's root visits after them.
 * Usage: node native-scan-entry.js PROGRAM.so RUNTIME.so
 */
import { runNativeProgram } from "../src/native/native-runtime.js";

const [program, runtime] = process.argv.slice(2);
if (program === undefined || runtime === undefined) {
  process.stderr.write("usage: native-scan-entry PROGRAM.so RUNTIME.so\n");
  process.exit(1);
}
const r = await runNativeProgram({ program, runtime, heapBytes: 64 << 20, stressEvery: 1, noGc: false, verify: false });
process.stdout.write(`${JSON.stringify({ result: r.result, collections: r.collections, scanMs: r.scanMs, scanFrames: r.scanFrames, rootVisitMs: r.rootVisitMs })}\n`);
setImmediate(() => process.exit(0));
