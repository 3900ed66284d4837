import { InvalidArgumentError, RootwalkError, hex, withContext } from "../errors.js";
import type { WalkMethod } from "../../walker/stack-snapshot.js";
import { loadStackSnapshotFile } from "../../walker/stack-snapshot-file.js";
import { walkStack } from "../../walker/walk-stack.js";
import { describeSlot } from "../../walker/slot.js";
import { X86_64 } from "../arch/x86-64.js";
import { COMMAND_USAGE } from "./command-usage.js";
import { parseOptions } from "./options.js";
import type { CliIo } from "./process-io.js";

export const WALK_METHODS: readonly WalkMethod[] = ["segments", "find-ranges", "geometry", "naive"];

/**
 * `rootwalk walk SNAPSHOT.json [--json] [--method …]`: walks a recorded stack (the format of
 * shared/fixtures/split-stack) leniently, as a dump tool does, and prints every frame and root.
 */
export function walkSnapshotFile(path: string, method: WalkMethod, json: boolean, crossCheck?: boolean): string {
  const loaded = loadStackSnapshotFile(path);
  try {
    const split = loaded.splitStacks(method);
    const snapshot = loaded.registry.snapshot();
    const result = walkStack(snapshot, loaded.memory, loaded.start, {
      mode: "lenient",
      ...(split ? { splitStacks: split } : {}),
      ...(loaded.returnBarrierTrampoline !== undefined ? { returnBarrierTrampoline: loaded.returnBarrierTrampoline } : {}),
      ...(crossCheck !== undefined ? { crossCheck } : {}),
    });
    const architecture = snapshot.architecture ?? X86_64;
    if (json) {
      return `${JSON.stringify({
        roots: result.roots.map((r) => ({ slot: hex(r.slot), value: hex(r.value) })),
        transitions: result.transitions,
        frames: result.frames.length,
        stoppedAt: hex(result.stoppedAt),
      })}\n`;
    }
    const lines: string[] = [];
    let r = 0;
    for (const f of result.frames) {
      lines.push(`#${f.index}  ra ${hex(f.ra)}  sp ${hex(f.sp)}  ${f.functionName ?? "?"}`);
      for (; r < result.roots.length && result.roots[r]!.frame === f.index; r++) {
        lines.push(`      root ${describeSlot(result.roots[r]!.slot, architecture)} = ${hex(result.roots[r]!.value)}`);
      }
    }
    lines.push(`${result.frames.length} frames, ${result.roots.length} roots, ${result.transitions} stacklet transitions (method ${method})`);
    lines.push(`stopped at ${hex(result.stoppedAt)}: ${result.stopReason}${result.stopDetail ? ` (${result.stopDetail})` : ""}`);
    return lines.join("\n") + "\n";
  } catch (e) {
    throw e instanceof RootwalkError ? withContext(e, path) : e;
  }
}

/** `rootwalk walk SNAPSHOT.json [--json] [--method M]`. */
/** `rootwalk walk`; `crossCheck` as the process entry read it (else the scanner default). */
export function walkCli(args: readonly string[], io: CliIo, crossCheck?: boolean): number {
  const o = parseOptions(COMMAND_USAGE["walk"]!.options, args);
  const method = (o.value("--method") ?? "segments") as WalkMethod;
  if (!WALK_METHODS.includes(method)) throw new InvalidArgumentError("--method", method, WALK_METHODS.join(" | "));
  if (o.positional.length !== 1) throw new InvalidArgumentError("walk", `${o.positional.length} files`, "one SNAPSHOT.json");
  io.stdout(walkSnapshotFile(o.positional[0]!, method, o.has("--json"), crossCheck));
  return 0;
}
