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
