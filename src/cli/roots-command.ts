import { readFileSync } from "node:fs";
import { CoreFile, elfBuildId } from "../elf/core-file.js";
import { InvalidArgumentError, RootwalkError, hex, withContext } from "../errors.js";
import { registerObjectFile } from "../loader/register-maps.js";
import { RangedMemory } from "../memory/memory.js";
import { type RegistrySnapshot, SafepointRegistry } from "../safepoints/registry.js";
import { ModuleMap, type Mapping } from "../unwind/module-map.js";
import { type FrameReport, type WalkReport, reportWalk } from "../../walker/frame-report.js";
import { RegisterContext } from "../../walker/register-context.js";
import { Unwinder } from "../../walker/unwinder.js";

/*
 * `rootwalk roots CORE [EXECUTABLE] [--json]`: the post-mortem view of a core file. Each thread
 * is walked from its NT_PRSTATUS registers (the stop address is exact, not a return address)
 * through managed frames (by their safepoints) and native frames (by the CFI of the module the
 * NT_FILE note says is mapped there, read from disk and checked against the build id the core
 * holds), leniently: a thread stopped in the middle of managed code is reported as such and its
 * frame's roots as unknown, never guessed. EXECUTABLE replaces the program's path from the core
 * (the first NT_FILE entry) when the file has moved.
 */

const VDSO_NAME = "[vdso]";

export type CoreFrame = FrameReport;

export interface CoreThreadWalk extends WalkReport {
  tid: number;
}

export interface CoreWalk {
  threads: CoreThreadWalk[];
  /** What the walks used, for further walks of the same core (tests). */
  snapshot: RegistrySnapshot;
  memory: RangedMemory;
  modules: ModuleMap;
}

export function walkCore(corePath: string, executable?: string): CoreWalk {
  const core = CoreFile.parse(readCoreFile(corePath));
  if (core.threads.length === 0) throw new RootwalkError("WALK", `${corePath}: no NT_PRSTATUS note (no thread registers)`);
  const files: Mapping[] = core.files.map((f) => ({ ...f }));
  if (executable !== undefined && files.length > 0) {
    const program = files[0]!.path;
    for (const f of files) if (f.path === program) f.path = executable;
  }
  // The vDSO (clock_gettime, gettimeofday, the signal return on some kernels) has no file: its
  // image and CFI come from the core's memory.
  const vdso = core.vdsoImage();
  if (vdso !== undefined) files.push({ start: vdso.start, end: vdso.start + vdso.bytes.length, fileOffset: 0, path: VDSO_NAME });
  const modules = ModuleMap.fromMappings(files, { readFile: (path) => readFileSync(path), pseudoImage: (m) => (m.path === VDSO_NAME ? vdso?.bytes : undefined) });
  const registry = new SafepointRegistry();
  for (const m of modules.modules) {
    if (m.path === VDSO_NAME) continue; // no stack maps in the kernel's code
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(m.path);
    } catch (e) {
      continue; // unwinding into it reports the module; no stack maps can come from it
    }
    const elf = m.elf();
    const fileId = elfBuildId(elf);
    const coreId = core.buildIdAt(m.start);
    // The core's copy of the mapping's notes decides: a file with another build id, or with none
    // where the mapped one had one, is not the file that was mapped (its stack maps and CFI could
    // name other addresses). A core without the notes page cannot be checked.
    if (coreId !== undefined && fileId !== coreId) {
      throw new InvalidArgumentError(m.path, fileId === undefined ? "no build id" : `build id ${fileId}`, `build id ${coreId} (the file mapped when the core was written)`);
    }
    if (elf.section(".llvm_stackmaps") !== undefined) registerObjectFile(registry, bytes, { path: m.path, loadBias: m.loadBias });
  }
  const memory = RangedMemory.fromPieces(core.segments.map((s) => ({ base: s.vaddr, bytes: s.bytes })));
  const snapshot = registry.snapshot();
  const threads = core.threads.map((t): CoreThreadWalk => {
    const r = t.registers;
    const registers = RegisterContext.from(r);
    const u = new Unwinder(snapshot, memory, { mode: "lenient", modules, maxDepth: 100_000 });
    return { tid: t.tid, ...reportWalk(u, memory, { sp: Number(r.rsp), ra: Number(r.rip), registers, pcIsExact: true }) };
  });
  return { threads, snapshot, memory, modules };
}

function readCoreFile(path: string): Uint8Array {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new InvalidArgumentError(path, (e as NodeJS.ErrnoException).code ?? String(e), "a readable core file");
  }
}

export function rootsCommand(corePath: string, executable: string | undefined, json: boolean): string {
  let walked: ReturnType<typeof walkCore>;
  try {
    walked = walkCore(corePath, executable);
  } catch (e) {
    throw e instanceof RootwalkError ? withContext(e, corePath) : e;
  }
  if (json) {
    return `${JSON.stringify({
      threads: walked.threads.map((t) => ({
        tid: t.tid,
        inManagedCode: t.inManagedCode,
        stopReason: t.stopReason,
        stopDetail: t.stopDetail,
        frames: t.frames.map((f) => ({
          kind: f.kind, pc: hex(f.pc), sp: hex(f.sp), cfa: hex(f.cfa), function: f.function ?? null,
          registers: Object.fromEntries(Object.entries(f.registers).map(([k, v]) => [k, v === null ? null : hex(v)])),
          roots: f.roots.map((r) => ({ slot: hex(r.slot), value: hex(r.value) })),
        })),
      })),
    })}\n`;
  }
  const lines: string[] = [];
  for (const t of walked.threads) {
    lines.push(`thread ${t.tid}${t.inManagedCode ? ": stopped inside managed code, not at a safepoint (that frame's roots are unknown)" : ""}`);
    for (const f of t.frames) {
      const tag = f.kind === "managed" ? "managed" : f.kind === "managed-unsafe" ? "MANAGED, NOT AT A SAFEPOINT" : f.kind;
      lines.push(`  #${f.index}  pc ${hex(f.pc)}  sp ${hex(f.sp)}  cfa ${hex(f.cfa)}  ${f.function ?? "?"}  [${tag}]`);
      for (const r of f.roots) lines.push(`        root [${hex(r.slot)}] = ${hex(r.value)}`);
    }
    const end = t.stopReason === "stack-end" ? "end of stack" : `${t.stopReason}${t.stopDetail ? `: ${t.stopDetail}` : ""}`;
    lines.push(`  ${t.frames.length} frames, ${t.frames.reduce((n, f) => n + f.roots.length, 0)} roots; ${end}`);
  }
  return lines.join("\n") + "\n";
}

