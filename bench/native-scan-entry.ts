/**
 * Child process of the NativeScan case (the runtime runs one program per process): runs a
 * linked program with a collection at every safepoint and allocation, and, after each of
 * rootwalk's stack scans, the C reference's scan of the same stopped stacks (checked equal), and
 * prints the time both took and the frames they walked.
 * Usage: node native-scan-entry.js PROGRAM.so RUNTIME.so SCAN-REFERENCE.so [in-place|copy]
 * (copy: scan a copy of each stopped stack made at every stop, NativeRunOptions.copyStacks).
 */
import { runNativeProgram } from "../src/native/native-runtime.js";

const [program, runtime, scanReference, stacks = "in-place"] = process.argv.slice(2);
if (program === undefined || runtime === undefined || scanReference === undefined) {
  process.stderr.write("usage: native-scan-entry PROGRAM.so RUNTIME.so SCAN-REFERENCE.so\n");
  process.exit(1);
}
const r = await runNativeProgram({
  program,
  runtime,
  heapBytes: 64 << 20,
  stressEvery: 1,
  noGc: false,
  verify: false,
  scanReference,
  copyStacks: stacks === "copy",
});
const line = {
  result: r.result,
  collections: r.collections,
  scanMs: r.scanMs,
  scanFrames: r.scanFrames,
  rootVisitMs: r.rootVisitMs,
  reference: r.scanReference,
};
process.stdout.write(`${JSON.stringify(line)}\n`);
setImmediate(() => process.exit(0));
