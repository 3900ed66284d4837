import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { InvalidArgumentError, ToolError } from "../errors.js";

/**
 * Which LLVM rootwalk drives (opt, llc, llvm-readobj, llvm-config, ...):
 *
 *  1. the version a command's line asks for (`--llvm 19` on compile / run / check / demo), which
 *     the command passes to `activeLlvm` and hands the selection down (`options.llvm`);
 *  2. else `ROOTWALK_LLVM`: a major version (`19`) or a folder holding the tools (`/usr/lib/llvm-19/bin`);
 *  3. else the newest of 14..19 installed (`llc-19`, `/usr/lib/llvm-19/bin/llc`, or a plain `llc`
 *     that says it is 19).
 *
 * Invariant: every tool of one selection reports the same major version (checked when the tool
 * is first resolved), so an object is never built by llc 19 and read back by llvm-readobj 14.
 */

/** The LLVM major versions rootwalk is tested against (14 and 19 in CI; the others in between). */
export const SUPPORTED_LLVM_MAJORS = [14, 15, 16, 17, 18, 19] as const;

/** The environment variable that chooses when no command line does. */
export const LLVM_ENV_VARIABLE = "ROOTWALK_LLVM";

/** The first major version whose IR has opaque pointers only (typed `T*` is upgraded on input). */
export const FIRST_OPAQUE_POINTER_MAJOR = 17;

export interface LlvmSelection {
  /** e.g. 19. */
  readonly major: number;
  /** Full version of its llc, e.g. "19.1.7". */
  readonly version: string;
  /** How it was chosen, for messages: "--llvm 19", "ROOTWALK_LLVM=19", "newest installed". */
  readonly chosenBy: string;
  /** The command for tool `name` (e.g. "llc-19", "/opt/llvm/bin/llc"); throws a ToolError if missing. */
  tool(name: string): string;
}

/**
 * The Debian/Ubuntu packages of LLVM `major` that `rootwalk run` needs (its tools, and its headers
 * for the plugins), as `scripts/system-packages --check start` names them: that script owns the
 * list, test/package/system-packages.test.ts holds this quote to it.
 */
export function llvmInstallCommand(major: number): string {
  return `apt-get install -y llvm-${major} llvm-${major}-tools llvm-${major}-dev`;
}

/** `command --version` (stdout + stderr), or undefined if it does not run. */
export function versionText(command: string): string | undefined {
  const result = spawnSync(command, ["--version"], { encoding: "utf8" });
  if (result.error !== undefined || result.status !== 0) return undefined;
  return `${result.stdout}${result.stderr}`;
}

/** "LLVM version 19.1.7" (tools) or a bare "19.1.7" (llvm-config) -> "19.1.7". */
function parseVersion(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  return /LLVM version (\d+\.\d+\.\d+)/.exec(text)?.[1] ?? /^\s*(\d+\.\d+\.\d+)/.exec(text)?.[1];
}

function majorOf(version: string): number {
  return Number(version.split(".")[0]);
}

/** Candidate commands for `name` of LLVM `major` when no folder is given, most specific first. */
function versionedCandidates(name: string, major: number): string[] {
  return [`${name}-${major}`, `/usr/lib/llvm-${major}/bin/${name}`, name];
}

class Selection implements LlvmSelection {
  private readonly tools = new Map<string, string>();
  constructor(
    readonly major: number,
    readonly version: string,
    readonly chosenBy: string,
    /** A folder to take every tool from, or undefined: versioned names on PATH. */
    private readonly binDir: string | undefined,
  ) {}

  tool(name: string): string {
    if (!/^[A-Za-z0-9_.+-]+$/.test(name)) {
      throw new InvalidArgumentError("tool name", JSON.stringify(name), "a bare command name like llc");
    }
    const known = this.tools.get(name);
    if (known !== undefined) return known;
    const candidates = this.binDir !== undefined ? [join(this.binDir, name)] : versionedCandidates(name, this.major);
    for (const candidate of candidates) {
      const version = parseVersion(versionText(candidate));
      if (version !== undefined && majorOf(version) === this.major) {
        this.tools.set(name, candidate);
        return candidate;
      }
    }
    throw new ToolError(
      name,
      `no LLVM ${this.major} build found (tried ${candidates.join(", ")}; LLVM chosen by ${this.chosenBy}); ` +
        `install it with: ${llvmInstallCommand(this.major)} (in a rootwalk checkout: bash scripts/system-packages --install start)`,
    );
  }
}

function checkSupported(major: number, what: string, value: string): void {
  if (!(SUPPORTED_LLVM_MAJORS as readonly number[]).includes(major)) {
    throw new InvalidArgumentError(what, value, `an LLVM major version in ${SUPPORTED_LLVM_MAJORS.join(", ")}, or a folder holding llc`);
  }
}

/** The selection for a request: a major version ("19") or a folder holding llc. */
export function selectLlvm(request: string, chosenBy: string): LlvmSelection {
  if (/^\d+$/.test(request)) {
    const major = Number(request);
    checkSupported(major, chosenBy, request);
    const probe = new Selection(major, "", chosenBy, undefined);
    const version = parseVersion(versionText(probe.tool("llc")))!;
    return new Selection(major, version, chosenBy, undefined);
  }
  const dir = resolve(request);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new InvalidArgumentError(chosenBy, request, "an LLVM major version (14..19) or a folder holding llc");
  }
  const version = parseVersion(versionText(join(dir, "llc")));
  if (version === undefined) throw new ToolError("llc", `no runnable llc in ${dir} (${chosenBy})`);
  checkSupported(majorOf(version), `${chosenBy} (llc ${version})`, request);
  return new Selection(majorOf(version), version, chosenBy, dir);
}

/** The newest supported LLVM whose llc runs, or a ToolError listing what to install. */
export function newestInstalledLlvm(): LlvmSelection {
  for (const major of [...SUPPORTED_LLVM_MAJORS].reverse()) {
    for (const candidate of versionedCandidates("llc", major)) {
      const version = parseVersion(versionText(candidate));
      if (version !== undefined && majorOf(version) === major) return new Selection(major, version, "newest installed", undefined);
    }
  }
  throw new ToolError(
    "llc",
    `no LLVM ${SUPPORTED_LLVM_MAJORS[0]}..${SUPPORTED_LLVM_MAJORS.at(-1)} found (tried llc-N, /usr/lib/llvm-N/bin/llc, llc); ` +
      `install one with: ${llvmInstallCommand(19)} (in a rootwalk checkout: bash scripts/system-packages --install start)`,
  );
}

/** Selections already made, by request ("" for the newest installed): each tool is probed once. */
const selections = new Map<string, LlvmSelection>();

/**
 * The LLVM to use: `commandLine` (a command's `--llvm VERSION`) when given, which wins over
 * ROOTWALK_LLVM; else ROOTWALK_LLVM; else the newest installed. Memoized per request. A command
 * passes the result down (`options.llvm` of compileProgram, checkIrProgram, ...); code given no
 * selection calls this without a command line.
 */
export function activeLlvm(commandLine?: string): LlvmSelection {
  if (commandLine !== undefined && !/^\d+$/.test(commandLine)) throw new InvalidArgumentError("--llvm", commandLine, "an LLVM major version (14..19)");
  const fromEnv = process.env[LLVM_ENV_VARIABLE];
  const [request, chosenBy] =
    commandLine !== undefined
      ? [commandLine, `--llvm ${commandLine}`]
      : fromEnv !== undefined && fromEnv !== ""
        ? [fromEnv, `${LLVM_ENV_VARIABLE}=${fromEnv}`]
        : ["", "newest installed"];
  let selection = selections.get(request);
  if (selection === undefined) {
    selection = request === "" ? newestInstalledLlvm() : selectLlvm(request, chosenBy);
    selections.set(request, selection);
  }
  return selection;
}

/** Whether IR for this LLVM is opaque-pointer only (`ptr addrspace(1)`). */
export function hasOpaquePointersOnly(selection: LlvmSelection): boolean {
  return selection.major >= FIRST_OPAQUE_POINTER_MAJOR;
}
