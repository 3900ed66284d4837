import { readFileSync } from "node:fs";
import { InvalidArgumentError, RootwalkError, withContext } from "../errors.js";
import type { MapDescription, SafepointDescription } from "../loader/describe-safepoints.js";
import { describeFile } from "../loader/describe-file.js";
import { loadObjectStackMaps } from "../loader/object-file.js";
import { ElfFile } from "../elf/elf-file.js";
import { architectureOfMachine } from "../arch/elf-architecture.js";
import { elfSoname } from "../elf/dynamic.js";
import { formatBlobLikeReadobj, formatReadobjFileHeader, isReadobjVersion, READOBJ_VERSIONS, type ReadobjVersion } from "../stackmap/readobj-format.js";
import { activeLlvm } from "../toolchain/llvm-selection.js";
import { refuseSpecialFile } from "../loader/input-file.js";
import { COMMAND_USAGE } from "./command-usage.js";
import { parseOptions } from "./options.js";
import type { CliIo } from "./process-io.js";

export type DumpFormat = "readobj" | "text" | "json";
export const DUMP_FORMATS: readonly DumpFormat[] = ["readobj", "text", "json"];

export interface DumpOptions {
  /** `--readobj-version N`: whose llvm-readobj text to print; default the selected LLVM's. */
  readobjVersion?: string;
}

/**
 * The llvm-readobj version `--format readobj` imitates: `--readobj-version`, else the LLVM chosen
 * as for compiling (ROOTWALK_LLVM, else the newest installed), else (no LLVM at all: dump needs
 * none) the newest version rootwalk knows.
 */
export function readobjVersion(request: string | undefined): ReadobjVersion {
  if (request !== undefined) {
    const major = Number(request);
    if (!/^\d+$/.test(request) || !isReadobjVersion(major)) throw new InvalidArgumentError("--readobj-version", request, READOBJ_VERSIONS.join(" | "));
    return major;
  }
  try {
    const { major } = activeLlvm();
    if (isReadobjVersion(major)) return major;
  } catch (e) {
    if (!(e instanceof RootwalkError)) throw e;
  }
  return READOBJ_VERSIONS[READOBJ_VERSIONS.length - 1]!;
}

/** What `rootwalk dump` printed, and one line per file it could not read (it carries on, as llvm-readobj does). */
export interface DumpOutput {
  text: string;
  errors: string[];
}

/** Standard input's name in messages; `-` on the command line reads it. */
const STDIN_PATH = "-";
const STDIN_NAME = "<stdin>";

/**
 * Everything `rootwalk dump` prints for these files. A file that cannot be read or decoded is
 * reported (a RootwalkError naming file and offset) and the others are still printed.
 */
export function dumpFilesReporting(paths: readonly string[], format: DumpFormat, options: DumpOptions = {}): DumpOutput {
  if (paths.length === 0) throw new InvalidArgumentError("dump", "no FILE", "one or more object files, shared libraries or executables (- for stdin)");
  if (paths.filter((p) => p === STDIN_PATH).length > 1) throw new InvalidArgumentError("dump", "- more than once", "stdin at most once");
  // 14..19 print the same --stackmap text (readobj-format.ts); the version is still checked.
  if (format === "readobj") readobjVersion(options.readobjVersion);
  const errors: string[] = [];
  const texts: string[] = [];
  const maps: MapDescription[] = [];
  const named: string[] = [];
  for (const path of paths) {
    const name = path === STDIN_PATH ? STDIN_NAME : path;
    try {
      const bytes = readInput(path);
      if (format === "readobj") texts.push(dumpReadobj(bytes, name));
      else maps.push(...describeFile(bytes, name));
      named.push(name);
    } catch (e) {
      if (!(e instanceof RootwalkError)) throw e;
      errors.push(e.message.startsWith(name) ? e.message : withContext(e, name).message);
    }
  }
  if (named.length === 0) return { text: "", errors }; // nothing readable: nothing on stdout
  if (format === "readobj") return { text: texts.join(""), errors };
  if (format === "json") return { text: `${JSON.stringify({ maps })}\n`, errors };
  return { text: formatText(maps, named), errors };
}

/** As dumpFilesReporting, but the first bad file throws (the library's all-or-nothing form). */
export function dumpFiles(paths: readonly string[], format: DumpFormat, options: DumpOptions = {}): string {
  const out = dumpFilesReporting(paths, format, options);
  if (out.errors.length > 0) throw new InvalidArgumentError("dump", out.errors[0]!, "readable ELF files");
  return out.text;
}

function readInput(path: string): Uint8Array {
  if (path !== STDIN_PATH) refuseSpecialFile(path, "a readable file (- reads standard input)");
  try {
    return readFileSync(path === STDIN_PATH ? 0 : path);
  } catch (e) {
    throw new InvalidArgumentError(path === STDIN_PATH ? STDIN_NAME : path, (e as NodeJS.ErrnoException).code ?? String(e), "a readable file");
  }
}

function dumpReadobj(bytes: Uint8Array, path: string): string {
  let elf: ElfFile;
  try {
    elf = ElfFile.parse(bytes);
    architectureOfMachine(elf.machine);
  } catch (e) {
    throw e instanceof RootwalkError ? withContext(e, path) : e;
  }
  let out = formatReadobjFileHeader({ path, machine: elf.machine, soname: elfSoname(elf) });
  const loaded = loadObjectStackMaps(bytes, path);
  if (loaded !== undefined) for (const blob of loaded.rawBlobs) out += formatBlobLikeReadobj(blob);
  return out;
}

function formatText(maps: readonly MapDescription[], paths: readonly string[]): string {
  const lines: string[] = [];
  const withMaps = new Set(maps.map((m) => m.file));
  for (const path of paths) if (!withMaps.has(path)) lines.push(`${path}: no stack maps`);
  for (const map of maps) {
    lines.push(`${map.file}: ${map.format} blob #${map.blob} at section offset ${map.sectionOffset}: ${map.functions} functions, ${map.records} records`);
    let lastFunction: string | undefined;
    for (const s of map.safepoints) {
      const fnKey = `${s.function}@${s.functionAddress}`;
      if (fnKey !== lastFunction) {
        lines.push(
          `  ${s.function ?? "<unnamed>"} at ${s.functionAddress}, stack size ${s.stackSizeBytes === "18446744073709551615" ? "dynamic (UINT64_MAX)" : s.stackSizeBytes}`,
        );
        lastFunction = fnKey;
      }
      lines.push(
        `    ${s.returnAddress}  ${s.function ?? ""}+0x${s.instructionOffset.toString(16)}  ${s.kind}${s.id === null ? "" : ` id ${s.id}`}  ${frameText(s)}`,
      );
      if (Object.keys(s.savedRegisters).length > 0) {
        lines.push(
          `      saved: ${Object.entries(s.savedRegisters)
            .map(([r, o]) => `${r} at cfa${o}`)
            .join(", ")}`,
        );
      }
      if (s.kind === "statepoint") lines.push(`      cc ${s.callingConvention} flags ${s.statepointFlags}  deopt: ${s.deopt.join(", ") || "none"}`);
      if (s.roots.length > 0) lines.push(`      roots: ${s.roots.map(rootText).join("; ")}`);
      if (s.allocas.length > 0) lines.push(`      gc allocas: ${s.allocas.join(", ")}`);
      if (s.liveOuts.length > 0) lines.push(`      live-outs: ${s.liveOuts.join(", ")}`);
    }
  }
  return lines.join("\n") + "\n";
}

function frameText(s: SafepointDescription): string {
  const size = s.frameSizeBytes === null ? `frame via ${s.frameRule}` : `frame ${s.frameSizeBytes} bytes`;
  const notes: string[] = [];
  if (s.frameSizeDiffers) notes.push(`differs from stack size ${s.stackSizeBytes}: pushed arguments`);
  if (s.dynamicFrame) notes.push("dynamic frame");
  if (s.cfa === null) notes.push("no unwind info");
  return `${size}${s.cfa ? `  cfa ${s.cfa}` : ""}${notes.length ? `  (${notes.join("; ")})` : ""}`;
}

function rootText(r: SafepointDescription["roots"][number]): string {
  const typed = r.type ? ` ${r.type}` : "";
  return r.base === r.derived ? `${r.base}${typed}` : `${r.derived} derived from ${r.base}`;
}

/** `rootwalk dump FILE...|- [--format F] [--readobj-version N]`: every file's maps; a bad one is reported and the rest printed (exit 1 at the end). */
export function dumpCli(args: readonly string[], io: CliIo): number {
  const o = parseOptions(COMMAND_USAGE["dump"]!.options, args);
  const format = (o.value("--format") ?? "text") as DumpFormat;
  if (!DUMP_FORMATS.includes(format)) throw new InvalidArgumentError("--format", format, DUMP_FORMATS.join(" | "));
  const version = o.value("--readobj-version");
  if (version !== undefined) {
    readobjVersion(version); // a bad version is refused whatever the format
    // It changes the readobj text only: with another format it would be ignored without a word.
    if (format !== "readobj")
      throw new InvalidArgumentError("--readobj-version", `${version} with --format ${format}`, "--format readobj (the only output it changes)");
  }
  const out = dumpFilesReporting(o.positional, format, version === undefined ? {} : { readobjVersion: version });
  io.stdout(out.text);
  for (const error of out.errors) io.stderr(`rootwalk: ${error.split("\n")[0]}\n`);
  return out.errors.length > 0 ? 1 : 0;
}
