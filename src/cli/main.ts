#!/usr/bin/env node
import { crossCheckRequested } from "../../walker/scan-cross-check.js";
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { InvalidArgumentError } from "../errors.js";
import { describeFailure } from "../errors.js";
import { COMMAND_USAGE, USAGE, commandHelp } from "./command-usage.js";
import { helpRequested } from "./options.js";
import { type CliIo, PROCESS_IO, endQuietlyWhenReaderCloses, exitAfterOutput } from "./process-io.js";

/*
 * The `rootwalk` command: a dispatch to each command's own function, which parses its arguments
 * with the one option parser (options.ts) by its option table (command-usage.ts) and does its
 * work. Each is imported when used, so a command loads only what it needs.
 */

/** What a process entry read once at startup and passes to the commands that scan stacks. */
export interface CliContext {
  /** ROOTWALK_SCAN_CROSSCHECK=1: every stack scanned or walked is cross-checked (walker/scan-cross-check.ts). */
  crossCheck?: boolean;
}

type Command = (args: readonly string[], io: CliIo, context: CliContext) => Promise<number>;

const COMMANDS: Readonly<Record<string, Command>> = {
  dump: async (args, io) => (await import("./dump-command.js")).dumpCli(args, io),
  walk: async (args, io, context) => (await import("./walk-command.js")).walkCli(args, io, context.crossCheck),
  roots: async (args, io) => (await import("./roots-command.js")).rootsCli(args, io),
  compile: async (args, io) => (await import("./compile-command.js")).compileCli(args, io),
  check: async (args, io) => (await import("./check-command.js")).checkCli(args, io),
  sim: async (args, io, context) => {
    const options = (await import("./sim/sim-arguments.js")).parseSimArguments(args);
    return (await import("./sim/sim-command.js")).simCommand(
      { ...options, ...(context.crossCheck !== undefined ? { crossCheck: context.crossCheck } : {}) },
      io,
    );
  },
  // run reports its own failures (with --json, as one object on stdout too).
  run: async (args, io, context) => (await import("./run-command.js")).runCommand(args, io, context.crossCheck),
  demo: async (args, io) => (await import("./demo-command.js")).demoCli(args, io),
  reduce: async (args, io) => (await import("./reduce-command.js")).reduceCli(args, io),
  "--version": async (args, io) => {
    if (args.length > 0) throw new InvalidArgumentError("--version", args.join(" "), "no arguments");
    io.stdout((await import("./version-command.js")).versionReport());
    return 0;
  },
  help: async ([topic, ...extra], io) => {
    if (extra.length > 0) throw new InvalidArgumentError("help", [topic, ...extra].join(" "), "at most one COMMAND");
    if (topic !== undefined && !Object.hasOwn(COMMAND_USAGE, topic)) throw new InvalidArgumentError("help", topic, Object.keys(COMMAND_USAGE).join(" | "));
    io.stdout(topic === undefined ? USAGE : commandHelp(topic));
    return 0;
  },
};

/** Runs one command line; returns the exit code. Bad input: code 1 and one line on stderr. */
export async function runCli(argv: readonly string[], io: CliIo = PROCESS_IO, context: CliContext = {}): Promise<number> {
  const [command, ...args] = argv;
  try {
    if (command === undefined || command === "--help" || command === "-h") {
      io.stdout(USAGE);
      return command === undefined ? 1 : 0;
    }
    if (command !== "help" && Object.hasOwn(COMMAND_USAGE, command) && helpRequested(args)) {
      io.stdout(commandHelp(command));
      return 0;
    }
    if (!Object.hasOwn(COMMANDS, command))
      throw new InvalidArgumentError("command", command, `${Object.keys(COMMAND_USAGE).join(" | ")} | --version (rootwalk help lists them)`);
    return await COMMANDS[command]!(args, io, context);
  } catch (e) {
    const failure = describeFailure(e);
    io.stderr(`rootwalk: ${failure.line}\n`);
    return failure.exitCode;
  }
}

const invokedDirectly = process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  endQuietlyWhenReaderCloses();
  runCli(process.argv.slice(2), PROCESS_IO, { crossCheck: crossCheckRequested() }).then(exitAfterOutput, (e: unknown) => {
    const failure = describeFailure(e);
    process.stderr.write(`rootwalk: ${failure.line}\n`);
    exitAfterOutput(failure.exitCode);
  });
}
