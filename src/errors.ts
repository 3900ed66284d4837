/**
 * Every failure rootwalk reports on purpose is a `RootwalkError`. Callers (the CLI, the native
 * bridge, tests) rely on this: anything else escaping a decoder or the walker is a bug.
 *
 * Messages follow one pattern so that a person can act on them without a debugger:
 *   "<what> at <offset or address>: found <value>, expected <value>"
 * and the same facts are kept as fields for programs.
 */

export type ErrorCode =
  "TRUNCATED" | "MALFORMED" | "UNSUPPORTED" | "DUPLICATE_SAFEPOINT" | "INVALID_ARGUMENT" | "MEMORY_ACCESS" | "GC" | "WALK" | "TOOL" | "UNSAFE_CACHE";

/**
 * Exit codes of the `rootwalk` command (docs/cli.md "Options, exit codes and output"):
 *   0 ok; 1 bad input or usage; 3 runtime or collector failure (and internal errors);
 *   4 verification failure (`--verify` found a broken heap or wrong roots); 130 interrupted
 *   (Ctrl-C, 128 + SIGINT, as the shell reports it).
 */
export const EXIT_OK = 0;
export const EXIT_BAD_INPUT = 1;
export const EXIT_RUNTIME_FAILURE = 3;
export const EXIT_VERIFY_FAILURE = 4;
export const EXIT_INTERRUPTED = 130;

export class RootwalkError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string) {
    super(message);
    this.code = code;
    this.name = new.target.name;
  }

  /** The exit code a command ends with for this error: bad input unless a subclass says otherwise. */
  get exitCode(): number {
    return EXIT_BAD_INPUT;
  }

  /** The one line a person sees for this error (describeFailure): the message's first line. */
  failureLine(): string {
    return firstLine(this.message);
  }
}

/** Formats an offset or address the way every message does: lower-case hex with 0x. */
export function hex(value: number | bigint): string {
  return value < 0 ? `-0x${(-value).toString(16)}` : `0x${value.toString(16)}`;
}

/**
 * What a JavaScript caller passed, for a message: "undefined", "null", "a string", "an array",
 * "an object" (a plain one), else its class ("an ArrayBuffer", "a SafepointRegistry"); never the
 * value itself (it may be huge).
 */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  const name = typeof value === "object" ? (value as object).constructor?.name : typeof value;
  const kind = name === undefined || name === "Object" ? "object" : name;
  return `${/^[aeio]/i.test(kind) ? "an" : "a"} ${kind}`; // "a Uint8Array": a U sounds like "you"
}

/**
 * Refuses a JavaScript caller's argument of the wrong kind where the types cannot: `ok` false
 * throws an InvalidArgumentError naming `what`, what the value is (describeValue) and `expected`.
 */
export function requireArgument(ok: boolean, what: string, value: unknown, expected: string): void {
  if (!ok) throw new InvalidArgumentError(what, describeValue(value), expected);
}

/** The input ends before a field that the format says is there. */
export class TruncatedInputError extends RootwalkError {
  constructor(
    readonly what: string,
    readonly offset: number,
    readonly neededBytes: number,
    readonly availableBytes: number,
  ) {
    super("TRUNCATED", `${what} at offset ${hex(offset)}: found ${Math.max(0, availableBytes)} bytes, expected ${neededBytes}`);
  }
}

/** A field holds a value the format does not allow. */
export class MalformedInputError extends RootwalkError {
  constructor(
    readonly what: string,
    readonly offset: number,
    readonly found: string | number | bigint,
    readonly expected: string,
  ) {
    super("MALFORMED", `${what} at offset ${hex(offset)}: found ${String(found)}, expected ${expected}`);
  }
}

/** Well-formed input that uses a feature rootwalk does not implement (named, never guessed at). */
export class UnsupportedInputError extends RootwalkError {
  constructor(
    readonly what: string,
    readonly offset: number,
    readonly found: string | number | bigint,
    readonly supported: string,
  ) {
    super("UNSUPPORTED", `${what} at offset ${hex(offset)}: found ${String(found)}, supported ${supported}`);
  }
}

/** A caller passed something the API does not accept. */
export class InvalidArgumentError extends RootwalkError {
  constructor(
    readonly argument: string,
    readonly found: string,
    readonly expected: string,
  ) {
    super("INVALID_ARGUMENT", `${argument}: found ${found}, expected ${expected}`);
  }
}

/**
 * A snapshot (or a module read through it) whose module was unregistered with `{ release: true }`:
 * its memory went back for reuse, so it is refused rather than read (src/safepoints/registration-pool.ts).
 */
export class ReleasedModuleError extends InvalidArgumentError {
  constructor(
    readonly moduleName: string,
    readonly handle: number,
  ) {
    super(
      "snapshot",
      `a snapshot holding module "${moduleName}" (handle ${handle}), whose memory unregister(${handle}, { release: true }) handed back for reuse`,
      "a snapshot taken after that unregister (registry.snapshot())",
    );
  }
}

/** An external tool (opt, llc, gcc, ...) failed or is missing. */
export class ToolError extends RootwalkError {
  constructor(
    readonly tool: string,
    message: string,
    /** The tool's own diagnostic (its stderr, printable, a few lines), shown before the message. */
    readonly diagnostic = "",
  ) {
    super("TOOL", diagnostic === "" ? `${tool}: ${message}` : `${diagnostic}\n${tool}: ${message}`);
  }

  /** Ctrl-C reached the tool too (same process group): the user's interrupt, not a tool failure. */
  private get interrupted(): boolean {
    return /\(killed by SIGINT\)/.test(this.message);
  }

  override get exitCode(): number {
    return this.interrupted ? EXIT_INTERRUPTED : EXIT_BAD_INPUT;
  }

  /** A tool's failure keeps its diagnostic lines (already printable and bounded) and the command. */
  override failureLine(): string {
    return this.interrupted ? "interrupted" : this.message;
  }
}

/**
 * A tool's stderr made safe for a terminal: control bytes and invalid UTF-8 (a binary file given
 * as source is echoed back by opt) shown as `?`, at most `maxLines`, each at most `maxColumns`
 * characters plus the elision mark. A long line loses its middle, not its end: tools write
 * `path:where: message`, and the path (a cache directory, a hashed object name) is what grows.
 */
export function printableDiagnostic(text: string, maxLines: number, maxColumns = 400): string {
  return (
    text
      .split("\n")
      // eslint-disable-next-line no-control-regex -- matching control characters is the point: they are replaced
      .map((line) => line.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\ufffd]/g, "?").trimEnd())
      .filter((line) => line.trim() !== "")
      .slice(0, maxLines)
      .map((line) => (line.length > maxColumns ? elideMiddle(line, maxColumns) : line))
      .join("\n")
  );
}

function elideMiddle(line: string, maxColumns: number): string {
  const headColumns = Math.floor(maxColumns / 4);
  return `${line.slice(0, headColumns)}...${line.slice(line.length - (maxColumns - headColumns))}`;
}

/** Prefixes an error's message with where the input came from (a file name, a blob index). */
export function withContext<T extends RootwalkError>(error: T, context: string): T {
  error.message = `${context}: ${error.message}`;
  return error;
}

/**
 * Two safepoints with the same absolute return address, from two modules or two records. `advice`
 * (after a "; ") says how to register both when that is possible.
 */
export class DuplicateSafepointError extends RootwalkError {
  constructor(
    readonly returnAddress: number,
    readonly first: string,
    readonly second: string,
    advice?: string,
  ) {
    super(
      "DUPLICATE_SAFEPOINT",
      `return address ${hex(returnAddress)}: found in ${second}, expected it only once (already registered by ${first})${advice === undefined ? "" : `; ${advice}`}`,
    );
  }
}

/** A read or write outside the memory's valid ranges, or misaligned. */
export class MemoryAccessError extends RootwalkError {
  constructor(
    readonly address: number,
    readonly sizeBytes: number,
    readonly operation: "read" | "write",
    readonly reason: string,
  ) {
    super("MEMORY_ACCESS", `${operation} of ${sizeBytes} bytes at ${hex(address)}: ${reason}`);
  }
}

/** Node's system errors (ENOENT, EACCES, ...) carry a code and the path they were about. */
interface SystemError extends Error {
  code: string;
  path?: string;
  syscall?: string;
}

function isSystemError(e: unknown): e is SystemError {
  return e instanceof Error && typeof (e as Partial<SystemError>).code === "string" && /^(E[A-Z]+|ERR_FS_FILE_TOO_LARGE)$/.test((e as SystemError).code);
}

const SYSTEM_WORDS: Record<string, string> = {
  ENOENT: "no such file or folder",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EISDIR: "is a folder, expected a file",
  ENOTDIR: "a part of the path is not a folder",
  EROFS: "read-only file system",
  ENOSPC: "no space left on the device",
  EEXIST: "already exists",
  EMFILE: "too many open files",
  ERR_FS_FILE_TOO_LARGE: "file too large to read (over 2 GiB)",
};

/**
 * The one line a person sees for a failure, and the exit code. A RootwalkError is about the
 * input, the tools or the run and says both itself (`failureLine`, `exitCode`: the collector's
 * errors in gc/collector-error.ts are runtime failures); anything else is a bug in rootwalk and
 * says so (with the stack only when ROOTWALK_DEBUG is set).
 */
export function describeFailure(e: unknown): { line: string; exitCode: number; internal: boolean } {
  if (e instanceof RootwalkError) return { line: e.failureLine(), exitCode: e.exitCode, internal: false };
  if (isSystemError(e)) {
    const what = SYSTEM_WORDS[e.code] ?? e.code;
    return { line: `${e.path ?? e.syscall ?? "file"}: ${what}`, exitCode: EXIT_BAD_INPUT, internal: false };
  }
  if (e instanceof RangeError && /call stack|Invalid array length|Array buffer allocation failed/.test(e.message)) {
    return {
      line: `out of resources: ${e.message} (the input asks for more than this process can hold; try a smaller size or scale)`,
      exitCode: EXIT_RUNTIME_FAILURE,
      internal: false,
    };
  }
  const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  const stack = process.env["ROOTWALK_DEBUG"] && e instanceof Error && e.stack ? `\n${e.stack}` : "";
  return {
    line: `internal error (a bug in rootwalk, not in your input): ${firstLine(message)}; please report it to the rootwalk maintainers with the command line and the output of rootwalk --version (ROOTWALK_DEBUG=1 prints the stack)${stack}`,
    exitCode: EXIT_RUNTIME_FAILURE,
    internal: true,
  };
}

/** The first line of a text (a message, a diagnostic). */
export function firstLine(text: string): string {
  return text.split("\n")[0]!;
}
