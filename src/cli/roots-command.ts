import { statSync } from "node:fs";
import { CoreFile, type CoreThread } from "../core/core-file.js";
import { type RestoredCoreMemory, type ReturnBarrierSymbols, restoreReturnBarriers, returnBarrierSymbols } from "../core/core-return-barriers.js";
import { type CoreLibraries, checkProgramMachine, coreLibraries, mappingsUnderSysroot, readMappedFile } from "../core/core-mappings.js";
import { type ElfIdentity, readElfIdentity } from "../elf/elf-identity.js";
import { InvalidArgumentError, RootwalkError, hex, withContext } from "../errors.js";
import { registerObjectFile } from "../loader/register-maps.js";
import type { Memory } from "../memory/memory.js";
import { type RegistrySnapshot, SafepointRegistry } from "../safepoints/registry.js";
import { ModuleMap, type Mapping } from "../unwind/module-map.js";
import { type FrameReport, type WalkEnd, type WalkReport, frameReportJson, visitFrames } from "../../walker/frame-report.js";
import { RegisterContext } from "../../walker/register-context.js";
import { Unwinder } from "../../walker/unwinder.js";
import { refuseSpecialFile } from "../loader/input-file.js";
import { COMMAND_USAGE } from "./command-usage.js";
import { parseOptions } from "./options.js";
import type { CliIo } from "./process-io.js";

/*
 * `rootwalk roots CORE [EXECUTABLE] [--json] [--sysroot DIR]`: the post-mortem view of a core
 * file, x86-64 or AArch64 (the core's e_machine decides the registers and frame rules). Each thread
 * is walked from its NT_PRSTATUS registers (the stop address is exact, not a return address)
 * through managed frames (by their safepoints) and native frames (by the CFI of the module the
 * NT_FILE note says is mapped there, read from disk and checked against the build id the core
 * holds), leniently: a thread stopped in the middle of managed code is reported as such and its
 * frame's roots as unknown, never guessed. EXECUTABLE replaces the program's path from the core
 * when the file has moved: the mapping that holds the program's headers (NT_AUXV AT_PHDR, or
 * its entry point AT_ENTRY), never the first NT_FILE entry (libraries come first under the
 * legacy layout `ulimit -s unlimited` gives).
 */

const VDSO_NAME = "[vdso]";

/** Frames walked per thread unless --max-depth says otherwise (memory grows with frames walked). */
export const DEFAULT_ROOTS_MAX_DEPTH = 2_000_000;
export const MAX_ROOTS_MAX_DEPTH = 1_000_000_000;
/** Output is handed to the writer in pieces of about this many characters. */
const OUTPUT_CHUNK_CHARS = 1 << 20;

/** A frame of a core; `returnBarrier`: its pc was read from the return-barrier table (its slot held the trampoline). */
export type CoreFrame = FrameReport & { returnBarrier: boolean };

export interface CoreThreadWalk extends WalkReport {
  tid: number;
  frames: CoreFrame[];
}

export interface CoreWalk {
  threads: CoreThreadWalk[];
  /** One line when the core's return-barrier table could not be used (walked without it). */
  note: string | undefined;
  /** What the walks used, for further walks of the same core (tests). */
  snapshot: RegistrySnapshot;
  memory: Memory;
  modules: ModuleMap;
}

/** A core opened for walking: its memory read by position, its modules' stack maps registered. */
interface OpenedCore {
  core: CoreFile;
  snapshot: RegistrySnapshot;
  modules: ModuleMap;
  /** What a walk that ends in unmapped code adds: the libraries not found, and how to give them. */
  unmappedHint: string | undefined;
  /** The memory walked: the core's, armed return barriers restored (src/core/core-return-barriers.ts). */
  barriers: RestoredCoreMemory;
}

/** The N of `--max-depth N`: frames walked per thread at most. */
export function parseMaxDepth(text: string): number {
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= 1 && n <= MAX_ROOTS_MAX_DEPTH)) throw new InvalidArgumentError("--max-depth", text, `a whole number of frames from 1 to ${MAX_ROOTS_MAX_DEPTH}`);
  return n;
}

function openCore(corePath: string, executable: string | undefined, sysroot: string | undefined): OpenedCore {
  const core = openCoreFile(corePath);
  try {
    if (core.threads.length === 0) throw new RootwalkError("WALK", `${corePath}: no NT_PRSTATUS note (no thread registers)`);
    const { barrierSymbols, ...registered } = registerModules(core, executable, sysroot);
    return { core, ...registered, barriers: restoreReturnBarriers(core.memory, barrierSymbols) };
  } catch (e) {
    core.close();
    throw e;
  }
}

/**
 * The core's mapped files as modules (EXECUTABLE in the program's place), stack maps registered.
 * A core without NT_FILE (qemu-user's) names no files: EXECUTABLE is the program, placed by the
 * auxiliary vector, and the libraries come from the dynamic linker's list in the core's memory,
 * looked for under SYSROOT first (src/core/core-mappings.ts).
 */
function registerModules(
  core: CoreFile,
  executable: string | undefined,
  sysroot: string | undefined,
): Omit<OpenedCore, "core" | "barriers"> & { barrierSymbols: ReturnBarrierSymbols | undefined } {
  if (core.files.length === 0 && executable === undefined)
    throw new InvalidArgumentError("core", "no NT_FILE note (a qemu-user core names no mapped files)", "EXECUTABLE, the program the core was written by");
  const libraries = core.files.length === 0 ? coreLibraries(core, executable!, { ...(sysroot !== undefined ? { sysroot } : {}) }) : undefined;
  const files: Mapping[] = libraries?.mappings ?? kernelCoreMappings(core, executable, sysroot);
  // The vDSO (clock_gettime, gettimeofday, the signal return on some kernels) has no file: its
  // image and CFI come from the core's memory.
  const vdso = core.vdsoImage();
  if (vdso !== undefined) files.push({ start: vdso.start, end: vdso.start + vdso.bytes.length, fileOffset: 0, path: VDSO_NAME });
  const modules = ModuleMap.fromMappings(files, {
    readFile: readMappedElf,
    pseudoImage: (m) => (m.path === VDSO_NAME ? vdso?.bytes : undefined),
  });
  const registry = new SafepointRegistry();
  let barrierSymbols: ReturnBarrierSymbols | undefined;
  for (const m of modules.modules) {
    if (m.path === VDSO_NAME) continue; // no stack maps in the kernel's code
    // Its headers and notes only: a core can name data files of any size, which are no modules.
    const identity = mappedElfIdentity(m.path);
    if (identity === undefined) continue; // unwinding into it reports the module; no stack maps can come from it
    const coreId = core.buildIdAt(m.start);
    // The core's copy of the mapping's notes decides: a file with another build id, or with none
    // where the mapped one had one, is not the file that was mapped (its stack maps and CFI could
    // name other addresses). A core without the notes page cannot be checked.
    if (coreId !== undefined && identity.buildId !== coreId) {
      throw new InvalidArgumentError(
        m.path,
        identity.buildId === undefined ? "no build id" : `build id ${identity.buildId}`,
        `build id ${coreId} (the file mapped when the core was written)`,
      );
    }
    const elf = m.elf(); // the file's one whole read, kept by the module for its CFI
    if (elf.section(".llvm_stackmaps") !== undefined) registerObjectFile(registry, elf.bytes, { path: m.path, loadBias: m.loadBias });
    barrierSymbols ??= returnBarrierSymbols(elf, m.loadBias, m.path);
  }
  const unmappedHint = libraries === undefined ? undefined : missingLibrariesHint(libraries);
  return { snapshot: registry.snapshot(), modules, unmappedHint, barrierSymbols };
}

/**
 * A qemu-user core names no mapped files: libraries of the dynamic linker's list that were found
 * nowhere leave their code unmapped, and a walk ends in it. Says which, and the option that
 * finds them (the interpreter's sysroot is tried first: src/core/core-mappings.ts).
 */
function missingLibrariesHint(libraries: CoreLibraries): string | undefined {
  const { missing, sysroot } = libraries;
  if (missing.length === 0) return undefined;
  const where = sysroot === undefined ? "" : ` under ${sysroot}`;
  return `a qemu-user core names no mapped files, and ${missing.length} of the program's libraries (${missing[0]}${missing.length > 1 ? ", ..." : ""}) were not found${where}: give the folder they are under with --sysroot DIR (qemu-aarch64's -L)`;
}

/**
 * The mappings NT_FILE names, looked for under SYSROOT first (src/core/core-mappings.ts), with
 * EXECUTABLE in the program's place: the mapping that holds the program's headers by the
 * auxiliary vector.
 */
function kernelCoreMappings(core: CoreFile, executable: string | undefined, sysroot: string | undefined): Mapping[] {
  if (executable !== undefined) checkExecutable(core, executable);
  const program = executable === undefined ? undefined : core.executablePath();
  if (executable !== undefined && program === undefined)
    throw new InvalidArgumentError(
      "core",
      "no NT_AUXV entry AT_PHDR or AT_ENTRY inside a mapped file",
      "the auxiliary vector to name the program's mapping (EXECUTABLE takes its place)",
    );
  const files: Mapping[] = sysroot === undefined ? core.files.map((f) => ({ ...f })) : mappingsUnderSysroot(core, sysroot, program);
  if (executable !== undefined) for (const f of files) if (f.path === program) f.path = executable;
  return files;
}

/**
 * Refuses an EXECUTABLE that cannot be the program: missing or unreadable (a Node system error
 * naming it), not a regular file, not an ELF file, or for another machine. Left to the walk, it
 * was a module like any other that cannot be read: every thread ended at its first frame in the
 * program, with exit 0. Its build id is checked against the core's with the other modules'.
 */
function checkExecutable(core: CoreFile, executable: string): void {
  try {
    checkProgramMachine(core, executable, readElfIdentity(executable).machine);
  } catch (e) {
    throw e instanceof RootwalkError && !e.message.startsWith(`${executable}:`) ? withContext(e, executable) : e;
  }
}

/**
 * A mapped file's bytes for its module, read whole only after its header says it is an ELF file:
 * a walk that meets an address inside a data file's mapping (a corrupted stack) reads 64 bytes of
 * it, not GiBs, before it ends there.
 */
function readMappedElf(path: string): Uint8Array {
  readElfIdentity(path);
  return readMappedFile(path);
}

/** A mapped file's identity, or undefined when it is not a readable ELF file (a data file, a device, a deleted file). */
function mappedElfIdentity(path: string): ElfIdentity | undefined {
  try {
    return readElfIdentity(path);
  } catch (e) {
    if (e instanceof RootwalkError || typeof (e as NodeJS.ErrnoException).code === "string") return undefined;
    throw e;
  }
}

/** Walks one thread from its NT_PRSTATUS registers (the core's architecture's), handing each frame to `visit`. */
function walkThread(opened: OpenedCore, t: CoreThread, maxDepth: number, visit: (f: CoreFrame) => void): WalkEnd {
  const r = t.registers;
  const architecture = opened.core.architecture;
  const registers = RegisterContext.from(Object.fromEntries(architecture.calleeSavedNames.map((name) => [name, r[name]!])), architecture);
  const { memory, restored, trampoline } = opened.barriers;
  const options = {
    mode: "lenient",
    modules: opened.modules,
    maxDepth,
    architecture,
    ...(trampoline !== undefined ? { returnBarrierTrampoline: trampoline } : {}),
  } as const;
  const u = new Unwinder(opened.snapshot, memory, options);
  const { sp, pc } = architecture.coreRegisters;
  const start = { sp: Number(r[sp]!), ra: Number(r[pc]!), registers, pcIsExact: true };
  const end = visitFrames(u, memory, start, (f) => visit({ ...f, returnBarrier: restored?.restores(f.pcSlot) === true }));
  if (opened.unmappedHint === undefined || u.stopReason !== "no-unwind-info" || opened.modules.moduleAt(u.stoppedAt) !== undefined) return end;
  return { ...end, stopDetail: `${end.stopDetail}; ${opened.unmappedHint}` };
}

/** Every thread of a core, walked and kept whole (tests and the library; the command streams). */
export function walkCore(corePath: string, executable?: string, maxDepth = DEFAULT_ROOTS_MAX_DEPTH, sysroot?: string): CoreWalk {
  const opened = openCore(corePath, executable, sysroot);
  const threads = opened.core.threads.map((t): CoreThreadWalk => {
    const frames: CoreFrame[] = [];
    return { tid: t.tid, frames, ...walkThread(opened, t, maxDepth, (f) => frames.push(f)) };
  });
  return { threads, note: opened.barriers.note, snapshot: opened.snapshot, memory: opened.barriers.memory, modules: opened.modules };
}

function openCoreFile(path: string): CoreFile {
  refuseSpecialFile(path, "a readable core file");
  try {
    return CoreFile.open(path);
  } catch (e) {
    if (e instanceof RootwalkError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== undefined) throw new InvalidArgumentError(path, code, "a readable core file");
    throw e;
  }
}

export interface RootsOptions {
  json: boolean;
  maxDepth: number;
  /** Where a qemu-user core's library paths are looked for first. */
  sysroot?: string;
}

/**
 * `rootwalk roots`: writes every thread's frames as they are walked, in pieces (`write` is the
 * command's stdout): no frame is kept, so a deep stack costs the output, not a copy of it.
 */
export function rootsCommand(
  corePath: string,
  executable: string | undefined,
  options: RootsOptions,
  write: (text: string) => void,
  warn: (line: string) => void = () => {},
): void {
  let opened: OpenedCore;
  try {
    opened = openCore(corePath, executable, options.sysroot);
  } catch (e) {
    // Named once: a message about the core file itself already starts with its path.
    throw e instanceof RootwalkError && !e.message.startsWith(`${corePath}:`) ? withContext(e, corePath) : e;
  }
  if (opened.barriers.note !== undefined) warn(`rootwalk roots: ${opened.barriers.note}\n`);
  const out = new ChunkedOutput(write);
  try {
    const format = options.json ? JSON_FORMAT : TEXT_FORMAT;
    out.add(format.begin);
    opened.core.threads.forEach((t, i) => {
      let frames = 0;
      let roots = 0;
      const end = walkThread(opened, t, options.maxDepth, (f) => {
        out.add(format.frame(t.tid, i, f));
        frames++;
        roots += f.roots.length;
      });
      const limited =
        end.stopReason === "depth-limit"
          ? { ...end, stopDetail: `${end.stopDetail}, the --max-depth limit (${options.maxDepth}; a larger one walks further)` }
          : end;
      out.add(format.threadEnd(t.tid, i, frames, roots, limited));
    });
    out.add(format.end);
  } finally {
    opened.core.close();
  }
  out.flush();
}

/** Collects small pieces of output and writes them about OUTPUT_CHUNK_CHARS at a time. */
class ChunkedOutput {
  private parts: string[] = [];
  private chars = 0;
  constructor(private readonly write: (text: string) => void) {}
  add(text: string): void {
    this.parts.push(text);
    this.chars += text.length;
    if (this.chars >= OUTPUT_CHUNK_CHARS) this.flush();
  }
  flush(): void {
    if (this.parts.length > 0) this.write(this.parts.join(""));
    this.parts = [];
    this.chars = 0;
  }
}

/**
 * The two output formats, piece by piece. A thread's first line (text) or object (JSON) opens
 * with its frame #0, whose kind says whether it stopped inside managed code; its counts and
 * why the walk ended come after its frames.
 */
interface RootsFormat {
  begin: string;
  frame(tid: number, thread: number, f: CoreFrame): string;
  threadEnd(tid: number, thread: number, frames: number, roots: number, end: WalkEnd): string;
  end: string;
}

const TEXT_FORMAT: RootsFormat = {
  begin: "",
  frame(tid, _thread, f) {
    const head = f.index === 0 ? textThreadHeader(tid, f.kind === "managed-unsafe") : "";
    const kind = f.kind === "managed" ? "managed" : f.kind === "managed-unsafe" ? "MANAGED, NOT AT A SAFEPOINT" : f.kind;
    const tag = f.returnBarrier ? `${kind}, return barrier: pc from the runtime's table` : kind;
    const roots = f.roots.map((r) => `        root ${r.register ?? `[${hex(r.slot)}]`} = ${hex(r.value)}\n`).join("");
    return `${head}  #${f.index}  pc ${hex(f.pc)}  sp ${hex(f.sp)}  cfa ${f.cfa === null ? "?" : hex(f.cfa)}  ${f.function ?? "?"}  [${tag}]\n${roots}`;
  },
  threadEnd(tid, _thread, frames, roots, end) {
    const reason = end.stopReason === "stack-end" ? "end of stack" : `${end.stopReason}${end.stopDetail ? `: ${end.stopDetail}` : ""}`;
    return `${frames === 0 ? textThreadHeader(tid, false) : ""}  ${frames} frames, ${roots} roots; ${reason}\n`;
  },
  end: "",
};

function textThreadHeader(tid: number, inManagedCode: boolean): string {
  return `thread ${tid}${inManagedCode ? ": stopped inside managed code, not at a safepoint (that frame's roots are unknown)" : ""}\n`;
}

const JSON_FORMAT: RootsFormat = {
  begin: '{"threads":[',
  frame(tid, thread, f) {
    const head = f.index === 0 ? `${thread > 0 ? "," : ""}{"tid":${tid},"frames":[` : ",";
    return head + JSON.stringify(f.returnBarrier ? { ...frameReportJson(f), returnBarrier: true } : frameReportJson(f));
  },
  threadEnd(tid, thread, frames, _roots, end) {
    const head = frames === 0 ? `${thread > 0 ? "," : ""}{"tid":${tid},"frames":[` : "";
    return `${head}],"inManagedCode":${end.inManagedCode},"stopReason":${JSON.stringify(end.stopReason ?? null)},"stopDetail":${JSON.stringify(end.stopDetail)}}`;
  },
  end: "]}\n",
};

/** `rootwalk roots CORE [EXECUTABLE] [--json] [--max-depth N]`. */
export function rootsCli(args: readonly string[], io: CliIo): number {
  const o = parseOptions(COMMAND_USAGE["roots"]!.options, args);
  const n = o.positional.length;
  if (n < 1 || n > 2) throw new InvalidArgumentError("roots", `${n} arguments`, "CORE [EXECUTABLE]");
  const maxDepth = o.has("--max-depth") ? parseMaxDepth(o.value("--max-depth")!) : DEFAULT_ROOTS_MAX_DEPTH;
  const sysroot = o.value("--sysroot");
  // A sysroot that is no directory would only be passed over, each file then read from the host.
  if (sysroot !== undefined && statSync(sysroot, { throwIfNoEntry: false })?.isDirectory() !== true)
    throw new InvalidArgumentError("--sysroot", JSON.stringify(sysroot), "a directory (where the files the core names are looked for first)");
  rootsCommand(o.positional[0]!, o.positional[1], { json: o.has("--json"), maxDepth, ...(sysroot !== undefined ? { sysroot } : {}) }, io.stdout, io.stderr);
  return 0;
}
