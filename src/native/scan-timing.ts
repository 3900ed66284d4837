import type { RootScanEvent, RootScanObserver } from "../../walker/stack-root-scanner.js";
import type { StoppedThreads } from "./stopped-threads.js";

/**
 * The run's scan times, attached to the root scanner: every scan's walk is timed as a whole,
 * thread records and koffi views of the stopped stacks included (the bench's native-scan number:
 * frames per second), the root visits apart; `stopMs` is the runtime's side of the stop as the
 * collector sees it (reading the stopped threads' records), counted for whichever scan read them:
 * the collection's, or with --verify the verification's before it (the collection's scan then
 * reads the records that one read). `stopInVerificationMs` is the part a verification's scan read,
 * so that the stop is counted as the stop, not as verification, in both kinds of run.
 *
 * `lastReadMs` is the time of the last stackList call, 0 when it answered from the callback's
 * cache, so the stop is counted only while a scan is the first reader of the records in each
 * callback. It is (native-runtime.ts): the walk log reads them after this observer was told,
 * the scan reference check only looks at what was read, and the stuck-thread pins read one
 * thread's record (StoppedThreads.thread), which leaves the cache alone. A record read before a
 * scan (threads() called first) would fall outside the pause's phases, which is why it is not
 * counted here: stopTheWorld is the part of the scan phase spent reading the records.
 */
export class ScanTiming implements RootScanObserver {
  stopMs = 0;
  stopInVerificationMs = 0;
  scanMs = 0;
  rootVisitMs = 0;
  scanFrames = 0;

  constructor(private readonly stopped: StoppedThreads) {}

  scanned(scan: RootScanEvent): void {
    this.stopMs += this.stopped.lastReadMs;
    if (scan.reason === "verification") this.stopInVerificationMs += this.stopped.lastReadMs;
    this.scanMs += scan.walkMs;
    this.rootVisitMs += scan.visitMs;
    this.scanFrames += scan.frames;
  }
}
