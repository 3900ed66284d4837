import { CollectorError, HeapExhaustedError, RootNotObjectError } from "../../gc/collector-error.js";
import { RootwalkError, ToolError } from "../errors.js";
import { EXIT_INTERRUPTED } from "./interrupt.js";

/**
 * Exit codes of the `rootwalk` command (docs/cli.md "Options, exit codes and output"):
 *   0 ok; 1 bad input or usage; 3 runtime or collector failure (and internal errors);
 *   4 verification failure (`--verify` found a broken heap or wrong roots).
 */
export const EXIT_OK = 0;
export const EXIT_BAD_INPUT = 1;
export const EXIT_RUNTIME_FAILURE = 3;
export const EXIT_VERIFY_FAILURE = 4;

/**
 * The `error` field of a failure's JSON (`run --json`): what kind of failure, by exit code.
 * runtime.c json_failure writes "runtime-failure" for the failures that end the process there.
 */
export function failureKind(exitCode: number, internal = false): "bad-input" | "runtime-failure" | "internal-error" | "verification-failure" | "interrupted" {
  if (exitCode === EXIT_VERIFY_FAILURE) return "verification-failure";
  if (exitCode === EXIT_INTERRUPTED) return "interrupted";
  if (exitCode === EXIT_RUNTIME_FAILURE) return internal ? "internal-error" : "runtime-failure";
  return "bad-input";
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
 * A size rounded up to a nice `--heap` value: 1M, 2M, 3M, 4M, 6M, 8M, 12M, 16M, ... (1 or 1.5
 * times a power of two MiB), at most the 4G maximum; spelled as --heap takes it (24M, 1536M, 4G).
 */
export function spellHeapSize(bytes: number): string {
  const MiB = 1 << 20;
  let size = MiB;
  for (let power = MiB; size < bytes && size < MAX_HEAP_BYTES; power *= 2) {
    size = power * 1.5 >= bytes && power >= 2 * MiB ? power * 1.5 : power * 2;
  }
  size = Math.min(size, 4 * 2 ** 30);
  return size >= 2 ** 30 && size % 2 ** 30 === 0 ? `${size / 2 ** 30}G` : `${size / MiB}M`;
}

/** The largest heap `--heap` takes (run-command.ts parseHeapSize). */
const MAX_HEAP_BYTES = 2 ** 32 - 32768;

/**
 * The heap to suggest after "heap exhausted", from the live bytes rather than by doubling the
 * heap (which took five tries to reach what a growing program needed):
 *   - live data plus the request, twice over: Immix needs free blocks to evacuate into and loses
 *     the free part of partly used lines;
 *   - four times over when the live data filled the heap (over 3/4 of it): the live set was still
 *     growing, so what was measured is a lower bound.
 */
export function suggestedHeapBytes(liveBytes: number, requestBytes: number, heapBytes: number): number {
  const headroom = liveBytes > heapBytes * 0.75 ? 4 : 2;
  return Math.max(heapBytes + 1, (liveBytes + requestBytes) * headroom);
}

/**
 * The one line a person sees for a failure, and the exit code. A RootwalkError is about the
 * input, the tools or the run; anything else is a bug in rootwalk and says so (with the stack
 * only when ROOTWALK_DEBUG is set).
 */
export function describeFailure(e: unknown): { line: string; exitCode: number; internal: boolean } {
  if (e instanceof HeapExhaustedError) {
    const advice =
      e.maxHeapBytes >= MAX_HEAP_BYTES - (1 << 20)
        ? "the heap is at its 4G maximum"
        : `try --heap ${spellHeapSize(suggestedHeapBytes(e.liveBytes, e.requestBytes, e.maxHeapBytes))}`;
    return { line: `heap exhausted: ${e.liveBytes} live bytes of ${e.maxHeapBytes}; ${advice}`, exitCode: EXIT_RUNTIME_FAILURE, internal: false };
  }
  // A root that is no object's address: the program's mistake, named (the collection was refused).
  if (e instanceof RootNotObjectError) return { line: e.message, exitCode: EXIT_RUNTIME_FAILURE, internal: false };
  if (e instanceof CollectorError) return { line: `collector failure: ${firstLine(e.message)}`, exitCode: EXIT_RUNTIME_FAILURE, internal: false };
  // Ctrl-C reached the tool too (same process group): the user's interrupt, not a tool failure.
  if (e instanceof ToolError && /\(killed by SIGINT\)/.test(e.message)) return { line: "interrupted", exitCode: EXIT_INTERRUPTED, internal: false };
  // A tool's failure keeps its diagnostic lines (already printable and bounded) and the command.
  if (e instanceof ToolError) return { line: e.message, exitCode: EXIT_BAD_INPUT, internal: false };
  if (e instanceof RootwalkError) return { line: firstLine(e.message), exitCode: EXIT_BAD_INPUT, internal: false };
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

function firstLine(text: string): string {
  return text.split("\n")[0]!;
}
