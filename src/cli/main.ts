#!/usr/bin/env node
import { crossCheckFromEnvironment } from "../../walker/scan-cross-check.js";
import { parseStressEvery, refuseSpacedStressCount } from "./parse-stress.js";
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { InvalidArgumentError } from "../errors.js";
import { describeFailure } from "./failure.js";
import { checkOutputPath } from "./output-path.js";
import { DUMP_FORMATS, dumpFilesReporting, type DumpFormat } from "./dump-command.js";
import { WALK_METHODS, walkSnapshotFile } from "./walk-command.js";
import type { WalkMethod } from "../../walker/stack-snapshot.js";
import { RUN_OPTIONS, RUN_USAGE } from "./run-command.js";
import { type CliIo, PROCESS_IO, endQuietlyWhenReaderCloses, exitAfterOutput } from "./process-io.js";
import { CHECK_USAGE } from "./check-command.js";

/**
 * Each command's usage: every option it takes, with its meaning and units. `rootwalk help CMD`
 * and `rootwalk CMD --help` print it; `rootwalk help` prints the usage lines. Values: `--opt
 * value` and `--opt=value` both work; `--stress[=N]` takes its value only after `=`.
 * test/cli/help-options.test.ts checks that every option a command parses is listed here.
 */
export const COMMAND_USAGE: Readonly<Record<string, { usage: string; summary: string; options: Readonly<Record<string, string>> }>> = {
  dump: {
    usage: "rootwalk dump FILE...|- [--format readobj|text|json] [--readobj-version 14..19]",
    summary: "print the stack maps of objects, libraries, executables (- reads stdin); a bad file is reported and the others still printed (exit 1 at the end)",
    options: {
      "--format readobj|text|json": "readobj: what llvm-readobj --stackmap prints; text (default): addresses, frame sizes, CFA rules, roots; json: the same as one object",
      "--readobj-version 14..19": "whose llvm-readobj text --format readobj imitates (default: the selected LLVM's)",
    },
  },
  walk: {
    usage: "rootwalk walk SNAPSHOT.json [--json] [--method segments|find-ranges|geometry|naive]",
    summary: "walk a recorded stack (the snapshot format: README \"Walk snapshots\", schemas/stack-snapshot.schema.json) and print every frame and root",
    options: {
      "--json": "print {roots, transitions, frames, stoppedAt} as one JSON object",
      "--method segments|find-ranges|geometry|naive": "how split stacks are crossed: libgcc's stacklet list (default), __splitstack_find ranges, geometry alone, or not at all",
    },
  },
  roots: {
    usage: "rootwalk roots CORE [EXECUTABLE] [--json] [--max-depth N]",
    summary:
      "every thread of a core file (gcore or the kernel's): each frame, managed and native, and the roots of managed frames at safepoints " +
      "(a root in a register is named by it: rbx, r12, ...)",
    options: {
      "--json": "print {threads: [{tid, frames: [...]}]} as one JSON object",
      "--max-depth N": "walk at most N frames per thread (default 2000000, 1..1000000000; a deeper stack ends with depth-limit)",
      EXECUTABLE: "the program's file, when it moved since the core was written (its build id must match)",
    },
  },
  compile: {
    usage: "rootwalk compile [--statepoint | --plimmix] [--llc-flag FLAG]... [--opt-flag FLAG]... [--llvm VERSION] [--no-check | --strict-check] FILE.ll -o OUT.o",
    summary: "compile a program for rootwalk (llc -O2, default options); rootwalk check runs first and its findings are warnings",
    options: {
      "--statepoint": 'gc "statepoint-example" code: opt -passes=rewrite-statepoints-for-gc first (without it such code gets no stack maps: a warning)',
      "--plimmix": 'gc "plimmix" gcroot code: llc with rootwalk\'s plugin (built on first use)',
      "--llc-flag FLAG": "one more llc flag, after the defaults (repeatable)",
      "--opt-flag FLAG": "one more opt flag for --statepoint (repeatable)",
      "--llvm VERSION": "the LLVM major version to use, 14..19 (ROOTWALK_LLVM wins)",
      "--no-check": "do not run rootwalk check on the IR first",
      "--strict-check": "a finding of rootwalk check is an error (exit 1, nothing built)",
      "-o OUT.o": "the object file to write",
    },
  },
  check: {
    usage: CHECK_USAGE,
    summary:
      "find GC-safety mistakes before the program runs: a function without a GC strategy holding a GC pointer, an integer made from one, a stale gcroot copy, an interior pointer argument, a GC pointer in a stack slot (each across a call that can collect), no gc_init; a .o/.so: calls that can collect without a safepoint record. Exit 0 clean, 1 findings",
    options: {
      "--collects NAME,...": "more functions that can collect (external functions the check cannot see into; repeatable)",
      "--json": "print {programs, findings: [...], counts} as one JSON object",
      "--llvm VERSION": "the LLVM major version to use, 14..19 (ROOTWALK_LLVM wins)",
    },
  },
  sim: {
    usage:
      "rootwalk sim [--workload gcbench|mt-gcbench|deep-recursion|binary-trees] [--heap SIZE] [--stress[=N]] [--verify] [--poison]\n" +
      "             [--svg FILE] [--json] [--sweep] [--scale X] [--threads N] [--seed N]",
    summary: "the collector and walker on simulated stacks (--stress=N: collect at every N-th allocation; --threads 1..32, --scale 0.0001..10, --heap 1M..4G)",
    options: {
      "--workload NAME": "gcbench (default), mt-gcbench, deep-recursion or binary-trees",
      "--heap SIZE": "heap size in bytes, with K/M/G suffixes, 1M..4G (default 16M)",
      "--stress[=N]": "collect at every N-th allocation (N = 1 when omitted; only after '='), evacuating every movable object",
      "--verify": "check the heap and the roots after every collection",
      "--poison": "fill what each collection frees with a poison pattern (implied by --stress)",
      "--svg FILE": "write a heap map (SVG) after the run",
      "--json": "print {collections, objectsMoved, maxPauseMs, verifyFailures, fragmentation} as one JSON object",
      "--sweep": "find the minimum heap, then run at 1x..6x of it",
      "--scale X": "multiply the workload's work and memory, 0.0001..10 (default 1; 0.02 with --stress)",
      "--threads N": "mutator threads for mt-gcbench, 1..32 (default 4; each has a 32 MiB simulated stack)",
      "--seed N": "random seed, 0..2^32-1 (default 42)",
    },
  },
  run: {
    usage: RUN_USAGE,
    summary: "compile, link with the native runtime and run rw_main with the collector (--stress=N: collect at every N-th safepoint)",
    options: RUN_OPTIONS,
  },
  demo: {
    usage: "rootwalk demo [--llvm VERSION] [--out-dir DIR]",
    summary: "compile and run the bundled example programs with and without the collector; heap maps go to DIR (default: the current folder)",
    options: {
      "--llvm VERSION": "the LLVM major version to use, 14..19 (ROOTWALK_LLVM wins)",
      "--out-dir DIR": "where the heap maps (SVG) go (default: the current folder)",
    },
  },
  help: { usage: "rootwalk help [COMMAND]", summary: "print the usage of one command, or of all", options: {} },
};

const USAGE = `usage: rootwalk <command> [options]      (rootwalk help COMMAND, rootwalk COMMAND --help)

commands:
${Object.values(COMMAND_USAGE)
  .map((c) => `  ${c.usage.replace(/^rootwalk /, "").replace(/\n {13}/g, "\n      ")}\n        ${c.summary}`)
  .join("\n")}
  --version
        print rootwalk's version and the LLVM it found

LLVM: ROOTWALK_LLVM (a version 14..19 or a folder holding llc), else --llvm VERSION, else the newest installed.
Exit codes: 0 ok, 1 bad input or usage, 3 runtime or collector failure (or an internal error), 4 verification failure.
Output is written whole before the exit, into a pipe too; a reader that stops early (| head) ends the command quietly, exit 0.
`;

function commandHelp(command: string): string {
  const c = COMMAND_USAGE[command]!;
  const options = Object.entries(c.options);
  const width = Math.max(0, ...options.map(([o]) => o.length));
  const table = options.length === 0 ? "" : `\noptions:\n${options.map(([o, meaning]) => `  ${o.padEnd(width)}  ${meaning}`).join("\n")}\n`;
  return `usage: ${c.usage}\n\n${c.summary}\n${table}`;
}

/**
 * sim's default heap: small enough that the default gcbench collects (3 times; at 64M it never
 * did, and the first thing a curious user runs showed "collections 0").
 */
const SIM_DEFAULT_HEAP = "16M";

/** Bounds of sim's options (each thread holds a 32 MiB simulated stack). */
const MAX_SIM_THREADS = 32;
const MAX_SIM_SCALE = 10;


/** Runs one command line; returns the exit code. Bad input: code 1 and one line on stderr. */
export async function runCli(argv: readonly string[], io: CliIo = PROCESS_IO): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command !== undefined && command !== "help" && Object.hasOwn(COMMAND_USAGE, command) && rest.some((a) => a === "--help" || a === "-h")) {
      io.stdout(commandHelp(command));
      return 0;
    }
    switch (command) {
      case "dump": {
        const { positional, options } = parseOptions(rest, ["format", "readobj-version"]);
        const format = (options.get("format") ?? "text") as DumpFormat;
        if (!DUMP_FORMATS.includes(format)) throw new InvalidArgumentError("--format", format, DUMP_FORMATS.join(" | "));
        const readobjVersion = options.get("readobj-version");
        const out = dumpFilesReporting(positional, format, readobjVersion === undefined ? {} : { readobjVersion });
        io.stdout(out.text);
        for (const error of out.errors) io.stderr(`rootwalk: ${error.split("\n")[0]}\n`);
        return out.errors.length > 0 ? 1 : 0;
      }
      case "walk": {
        const { positional, options, flags } = parseOptions(rest, ["method"], ["json"]);
        const method = (options.get("method") ?? "segments") as WalkMethod;
        if (!WALK_METHODS.includes(method)) throw new InvalidArgumentError("--method", method, WALK_METHODS.join(" | "));
        if (positional.length !== 1) throw new InvalidArgumentError("walk", `${positional.length} files`, "one SNAPSHOT.json");
        io.stdout(walkSnapshotFile(positional[0]!, method, flags.has("json")));
        return 0;
      }
      case "roots": {
        const { positional, options, flags } = parseOptions(rest, ["max-depth"], ["json"]);
        if (positional.length < 1 || positional.length > 2) throw new InvalidArgumentError("roots", `${positional.length} arguments`, "CORE [EXECUTABLE]");
        const { DEFAULT_ROOTS_MAX_DEPTH, parseMaxDepth, rootsCommand } = await import("./roots-command.js");
        const maxDepth = options.has("max-depth") ? parseMaxDepth(options.get("max-depth")!) : DEFAULT_ROOTS_MAX_DEPTH;
        rootsCommand(positional[0]!, positional[1], { json: flags.has("json"), maxDepth }, io.stdout);
        return 0;
      }
      case "compile": {
        const { positional, options, flags, lists } = parseOptions(rest, ["o", "llvm"], ["statepoint", "plimmix", "no-check", "strict-check"], ["llc-flag", "opt-flag"]);
        if (flags.has("statepoint") && flags.has("plimmix")) throw new InvalidArgumentError("compile", "--statepoint and --plimmix", "at most one of them");
        const output = options.get("o");
        if (positional.length !== 1 || output === undefined) throw new InvalidArgumentError("compile", `${positional.length} inputs${output ? "" : ", no -o"}`, "one FILE.ll and -o OUT.o");
        checkOutputPath(output, "-o");
        const { compileProgramTo } = await import("../toolchain/compile-program.js");
        const { activeLlvm, requestLlvm } = await import("../toolchain/llvm-selection.js");
        requestLlvm(options.get("llvm"));
        activeLlvm(); // a bad --llvm is the one line, before any warning about the source
        const mode = flags.has("statepoint") ? "statepoint" : flags.has("plimmix") ? "plimmix" : "plain";
        const { checkBeforeBuild } = await import("./check-command.js");
        if (!flags.has("no-check") && !(await checkBeforeBuild(positional, flags.has("strict-check"), io.stderr, "rootwalk compile"))) return 1;
        await compileProgramTo(positional[0]!, output, {
          mode,
          llcFlags: lists.get("llc-flag") ?? [],
          optFlags: lists.get("opt-flag") ?? [],
          onWarning: (line) => io.stderr(`rootwalk: ${line}\n`),
        });
        io.stdout(`${output}\n`);
        return 0;
      }
      case "sim": {
        const { positional, options, flags } = parseOptions(rest, ["workload", "heap", "svg", "scale", "threads", "seed"], ["verify", "poison", "json", "sweep"], [], ["stress"]);
        if (positional.length > 0) throw new InvalidArgumentError("sim", positional.join(" "), "no positional arguments");
        const { WORKLOADS } = await import("./sim/workloads.js");
        const { simCommand } = await import("./sim/sim-command.js");
        const { parseHeapSize } = await import("./run-command.js");
        const workload = (options.get("workload") ?? "gcbench") as (typeof WORKLOADS)[number];
        if (!WORKLOADS.includes(workload)) throw new InvalidArgumentError("--workload", workload, WORKLOADS.join(" | "));
        // Every count and size is bounded: each simulated thread holds a 32 MiB stack, the heap is
        // one ArrayBuffer, and the scale multiplies work and memory.
        const number = (name: string, fallback: number, min: number, max: number) => {
          const v = options.has(name) ? Number(options.get(name)) : fallback;
          if (!(v >= min && v <= max)) throw new InvalidArgumentError(`--${name}`, String(options.get(name)), `a number from ${min} to ${max}`);
          return v;
        };
        const wholeNumber = (name: string, v: number): number => {
          if (!Number.isInteger(v)) throw new InvalidArgumentError(`--${name}`, String(options.get(name)), "a whole number");
          return v;
        };
        if (options.has("svg")) checkOutputPath(options.get("svg")!, "--svg");
        const stress = options.has("stress");
        const stressEvery = stress ? parseStressEvery(options.get("stress")!) : 1;
        return await simCommand(
          {
            workload,
            heapBytes: parseHeapSize(options.get("heap") ?? SIM_DEFAULT_HEAP),
            stress,
            stressEvery,
            verify: flags.has("verify"),
            poison: flags.has("poison"),
            scale: number("scale", stress ? 0.02 : 1, 0.0001, MAX_SIM_SCALE),
            threads: wholeNumber("threads", number("threads", 4, 1, MAX_SIM_THREADS)),
            seed: wholeNumber("seed", number("seed", 42, 0, 2 ** 32 - 1)),
            json: flags.has("json"),
            sweep: flags.has("sweep"),
            ...(options.has("svg") ? { svg: options.get("svg")! } : {}),
          },
          io,
        );
      }
      case "check": {
        const { positional, options, flags, lists } = parseOptions(rest, ["llvm"], ["json"], ["collects"]);
        const { requestLlvm } = await import("../toolchain/llvm-selection.js");
        requestLlvm(options.get("llvm"));
        const { checkCommand, parseCollects } = await import("./check-command.js");
        return await checkCommand(positional, { collects: parseCollects(lists.get("collects") ?? []), json: flags.has("json") }, io);
      }
      case "run": {
        const { runCommand } = await import("./run-command.js");
        return await runCommand(rest, io);
      }
      case "demo": {
        const { options, positional } = parseOptions(rest, ["llvm", "out-dir"]);
        if (positional.length > 0) throw new InvalidArgumentError("demo", positional.join(" "), "no positional arguments");
        const { runDemo } = await import("./demo-command.js");
        await runDemo(io, options.get("llvm"), options.get("out-dir") ?? ".");
        return 0;
      }
      case "--version": {
        const { versionReport } = await import("./version-command.js");
        io.stdout(versionReport());
        return 0;
      }
      case "help": {
        const topic = rest[0];
        if (topic === undefined) {
          io.stdout(USAGE);
          return 0;
        }
        if (!Object.hasOwn(COMMAND_USAGE, topic)) throw new InvalidArgumentError("help", topic, Object.keys(COMMAND_USAGE).join(" | "));
        io.stdout(commandHelp(topic));
        return 0;
      }
      case undefined:
      case "--help":
      case "-h":
        io.stdout(USAGE);
        return command === undefined ? 1 : 0;
      default:
        throw new InvalidArgumentError("command", command, `${Object.keys(COMMAND_USAGE).join(" | ")} | --version (rootwalk help lists them)`);
    }
  } catch (e) {
    const failure = describeFailure(e);
    io.stderr(`rootwalk: ${failure.line}\n`);
    return failure.exitCode;
  }
}

/** `--stress` alone is 1 (every safepoint or allocation); `--stress=N` every N-th. Same in sim and run. */
/** `--name value` and `--name=value` options, the rest positional. */
export function parseOptions(
  args: readonly string[],
  valued: readonly string[],
  booleans: readonly string[] = [],
  repeated: readonly string[] = [],
  /** `--name` or `--name=value` (never `--name value`: the next word is not taken), e.g. --stress[=N]; "" when bare. */
  optionalValued: readonly string[] = [],
): { positional: string[]; options: Map<string, string>; flags: Set<string>; lists: Map<string, string[]> } {
  const positional: string[] = [];
  const options = new Map<string, string>();
  const flags = new Set<string>();
  const lists = new Map<string, string[]>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "-o" && valued.includes("o")) {
      const value = args[++i];
      if (value === undefined) throw new InvalidArgumentError("-o", "no value", "an output path");
      options.set("o", value);
      continue;
    }
    if (!arg.startsWith("--")) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    if (optionalValued.includes(name)) {
      if (name === "stress" && eq < 0) refuseSpacedStressCount(args[i + 1]);
      options.set(name, eq >= 0 ? arg.slice(eq + 1) : "");
      continue;
    }
    if (booleans.includes(name) && eq < 0) {
      flags.add(name);
      continue;
    }
    if (repeated.includes(name)) {
      const value = eq >= 0 ? arg.slice(eq + 1) : args[++i];
      if (value === undefined) throw new InvalidArgumentError(arg, "no value", "a value");
      lists.set(name, [...(lists.get(name) ?? []), value]);
      continue;
    }
    if (!valued.includes(name)) throw new InvalidArgumentError("option", arg, [...valued, ...booleans, ...repeated, ...optionalValued].map((v) => `--${v}`).join(", ") || "no options");
    const value = eq >= 0 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined) throw new InvalidArgumentError(arg, "no value", "a value");
    options.set(name, value);
  }
  return { positional, options, flags, lists };
}

const invokedDirectly = process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  crossCheckFromEnvironment();
  endQuietlyWhenReaderCloses();
  runCli(process.argv.slice(2)).then(exitAfterOutput, (e: unknown) => {
    const failure = describeFailure(e);
    process.stderr.write(`rootwalk: ${failure.line}\n`);
    exitAfterOutput(failure.exitCode);
  });
}
