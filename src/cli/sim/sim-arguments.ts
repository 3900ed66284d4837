import { InvalidArgumentError } from "../../errors.js";
import { COMMAND_USAGE } from "../command-usage.js";
import { parseOptions } from "../options.js";
import { checkOutputPath } from "../output-path.js";
import { parseStressEvery } from "../parse-stress.js";
import { parseNurserySize } from "../parse-size.js";
import { parseHeapSize } from "../run-command.js";
import type { SimOptions } from "./sim-command.js";
import { WORKLOADS, type WorkloadName } from "./workloads.js";

/**
 * sim's default heap: small enough that the default gcbench collects (3 times; at 64M it never
 * did, and the first thing a curious user runs showed "collections 0").
 */
const SIM_DEFAULT_HEAP = "16M";

/** Bounds of sim's options (each thread holds a 32 MiB simulated stack). */
const MAX_SIM_THREADS = 32;
const MAX_SIM_SCALE = 10;

/** What `rootwalk sim` runs and how it reports. */
export interface SimArguments extends SimOptions {
  json: boolean;
  sweep: boolean;
  /** `--gc-trace`: simCommand writes each collection's line on stderr. */
  trace: boolean;
}

/**
 * Reads `rootwalk sim`'s arguments by its option table and checks each value. Every count and size
 * is bounded: each simulated thread holds a 32 MiB stack, the heap is one ArrayBuffer, and the
 * scale multiplies work and memory.
 */
export function parseSimArguments(args: readonly string[]): SimArguments {
  const o = parseOptions(COMMAND_USAGE["sim"]!.options, args);
  if (o.positional.length > 0) throw new InvalidArgumentError("sim", o.positional.join(" "), "no positional arguments");
  const workload = (o.value("--workload") ?? "gcbench") as WorkloadName;
  if (!WORKLOADS.includes(workload)) throw new InvalidArgumentError("--workload", workload, WORKLOADS.join(" | "));
  const number = (spelling: string, fallback: number, min: number, max: number): number => {
    const v = o.has(spelling) ? Number(o.value(spelling)) : fallback;
    if (!(v >= min && v <= max)) throw new InvalidArgumentError(spelling, String(o.value(spelling)), `a number from ${min} to ${max}`);
    return v;
  };
  const wholeNumber = (spelling: string, v: number): number => {
    if (!Number.isInteger(v)) throw new InvalidArgumentError(spelling, String(o.value(spelling)), "a whole number");
    return v;
  };
  const svg = o.value("--svg");
  if (svg !== undefined) checkOutputPath(svg, "--svg");
  const stress = o.has("--stress");
  const report = o.value("--report");
  if (report !== undefined) checkOutputPath(report, "--report");
  if (o.has("--sweep") && (report !== undefined || o.has("--gc-trace")))
    throw new InvalidArgumentError(
      "sim",
      `--sweep with ${report !== undefined ? "--report" : "--gc-trace"}`,
      "--sweep alone (it runs seven simulations), or one run with --report / --gc-trace",
    );
  return {
    workload,
    heapBytes: parseHeapSize(o.value("--heap") ?? SIM_DEFAULT_HEAP),
    stress,
    stressEvery: stress ? parseStressEvery(o.value("--stress")!) : 1,
    verify: o.has("--verify"),
    poison: o.has("--poison"),
    generational: o.has("--generational") || o.has("--nursery"),
    ...(o.has("--nursery") ? { nurseryBytes: parseNurserySize(o.value("--nursery")!) } : {}),
    scale: number("--scale", stress ? 0.02 : 1, 0.0001, MAX_SIM_SCALE),
    threads: wholeNumber("--threads", number("--threads", 4, 1, MAX_SIM_THREADS)),
    seed: wholeNumber("--seed", number("--seed", 42, 0, 2 ** 32 - 1)),
    json: o.has("--json"),
    sweep: o.has("--sweep"),
    trace: o.has("--gc-trace"),
    ...(svg !== undefined ? { svg } : {}),
    ...(report !== undefined ? { report } : {}),
  };
}
