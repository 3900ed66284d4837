import type { CollectionRecord } from "./collection-log.js";

/**
 * `--gc-trace`: one line per collection on stderr while the program runs, fields as `name=value`
 * (times in ms to 3 decimals, sizes in bytes, counts whole), documented field by field in
 * docs/cli.md "--gc-trace":
 *
 *   rootwalk gc 12 full reason=stress pause_ms=0.423 stw_ms=0.010 scan_ms=0.100 trace_ms=0.200
 *     sweep_ms=0.050 verify_ms=0.000 heap_bytes=1245184->393216 live_bytes=301248
 *     evacuated_bytes=12000 frames=12 frames_skipped=0 roots=30 relocated=30
 *
 * (one line; `promoted_bytes=N` after evacuated_bytes where the collector promotes). The phases
 * add up as NativeRunResult.phasesMs does, so the lines' sums are the `--json` totals.
 */
export function gcTraceLine(r: CollectionRecord): string {
  const ms = (x: number): string => x.toFixed(3);
  return (
    `rootwalk gc ${r.cycle} ${r.kind} reason=${r.reason.replace(/\s+/g, "_")} pause_ms=${ms(r.pauseMs)} stw_ms=${ms(r.stopTheWorldMs)} ` +
    `scan_ms=${ms(r.scanMs)} trace_ms=${ms(r.traceEvacuateMs)} sweep_ms=${ms(r.sweepMs)} verify_ms=${ms(r.verifyMs)} ` +
    `heap_bytes=${r.usedBeforeBytes}->${r.usedAfterBytes} live_bytes=${r.liveBytes} evacuated_bytes=${r.evacuatedBytes}` +
    `${r.promotedBytes !== undefined ? ` promoted_bytes=${r.promotedBytes}` : ""} frames=${r.frames} frames_skipped=${r.framesSkipped} roots=${r.roots} relocated=${r.rootsRelocated}\n`
  );
}
