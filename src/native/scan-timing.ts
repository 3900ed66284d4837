import type { RootScanEvent, RootScanObserver } from "../../walker/stack-root-scanner.js";
import type { StoppedThreads } from "./stopped-threads.js";

/**
 * The run's scan times, attached to the root scanner: every scan's walk is timed as a whole,
 * thread records and koffi views of the stopped stacks included (the bench's native-scan number:
 * frames per second), the root visits apart; `stopMs` is the runtime's side of the stop as the
 * collector sees it (reading the stopped threads' records), counted for the collection's scan only
 * (a verification's scans read the records the collection read).
 */
export class ScanTiming implements RootScanObserver {
  stopMs = 0;
  scanMs = 0;
  rootVisitMs = 0;
  scanFrames = 0;

  constructor(private readonly stopped: StoppedThreads) {}

  scanned(scan: RootScanEvent): void {
    if (scan.reason === "collection") this.stopMs += this.stopped.lastReadMs;
    this.scanMs += scan.walkMs;
    this.rootVisitMs += scan.visitMs;
    this.scanFrames += scan.frames;
  }
}
