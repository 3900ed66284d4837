import { InvalidArgumentError } from "../errors.js";
import type { MapFormat } from "../safepoints/registry.js";
import type { StatepointRecognition } from "../stackmap/statepoint.js";
import { loadObjectStackMaps, type ObjectStackMaps } from "./object-file.js";
import { loadOcamlFromElf, type OcamlObject } from "./ocaml-loader.js";
import { loadPlimmixFromElf, type PlimmixObject } from "./plimmix-loader.js";

/**
 * Which stack map formats an ELF file (object, shared library, executable) holds, and their
 * loaded maps: the one place that decides it, for `rootwalk dump`, `registerFile` and the
 * per-format register functions (loader/register-maps.ts). A file may hold several (a program
 * linking statepoint and gcroot objects):
 *   "llvm-v3"     a `.llvm_stackmaps` section (StackMap v3: statepoint, stackmap, patchpoint);
 *   "plimmix-v1"  `_GC_MAP_*` symbols (rootwalk's plimmix plugin, gcroot code);
 *   "ocaml"       `caml*__frametable` symbols (LLVM's OCaml GC printer).
 */
export const STACK_MAP_FORMATS: readonly MapFormat[] = ["llvm-v3", "plimmix-v1", "ocaml"];

/** What each format is, as messages name it. */
export const STACK_MAP_FORMAT_NAMES: Readonly<Record<MapFormat, string>> = {
  "llvm-v3": "an LLVM stack map v3 (.llvm_stackmaps)",
  "plimmix-v1": "a _GC_MAP_ v1 map (plimmix, gcroot code)",
  ocaml: "an OCaml frame table (caml*__frametable)",
};

export interface StackMapFile {
  path: string;
  /** The formats found, in STACK_MAP_FORMATS order. */
  formats: MapFormat[];
  llvm?: ObjectStackMaps;
  plimmix?: PlimmixObject;
  ocaml?: OcamlObject;
}

/**
 * Loads the stack maps of `formats` (default: all) found in the ELF file `bytes`. A format that
 * is absent is simply not in `formats`; one that is present but malformed throws its loader's
 * typed error (naming `path` and the offset).
 */
export function loadStackMapFile(
  bytes: Uint8Array,
  path: string,
  options: { formats?: readonly MapFormat[]; recognition?: StatepointRecognition } = {},
): StackMapFile {
  const wanted = options.formats ?? STACK_MAP_FORMATS;
  // A JavaScript caller's misspelt format matched none, and the file was said to hold the wrong one ("expected undefined").
  for (const f of wanted) if (!STACK_MAP_FORMATS.includes(f)) throw new InvalidArgumentError("format", String(f), STACK_MAP_FORMATS.join(" | "));
  const file: StackMapFile = { path, formats: [] };
  if (wanted.includes("llvm-v3")) {
    const llvm = loadObjectStackMaps(bytes, path, options.recognition ? { recognition: options.recognition } : {});
    if (llvm !== undefined) file.llvm = llvm;
  }
  if (wanted.includes("plimmix-v1")) {
    const plimmix = loadPlimmixFromElf(bytes, path);
    if (plimmix !== undefined) file.plimmix = plimmix;
  }
  if (wanted.includes("ocaml")) {
    const ocaml = loadOcamlFromElf(bytes, path);
    if (ocaml !== undefined) file.ocaml = ocaml;
  }
  file.formats = STACK_MAP_FORMATS.filter((f) => (f === "llvm-v3" ? file.llvm : f === "plimmix-v1" ? file.plimmix : file.ocaml) !== undefined);
  return file;
}

/**
 * A file that does not hold the stack maps asked for: names what it holds instead (or that it
 * holds none) and what was expected. `found` lists the formats present.
 */
export class StackMapFormatError extends InvalidArgumentError {
  constructor(
    readonly path: string,
    readonly foundFormats: readonly MapFormat[],
    expected: string,
  ) {
    super(
      path,
      foundFormats.length === 0
        ? "no stack maps (no .llvm_stackmaps section, no _GC_MAP_ symbol, no caml*__frametable symbol)"
        : foundFormats.map((f) => STACK_MAP_FORMAT_NAMES[f]).join(" and "),
      expected,
    );
  }
}

/**
 * The format of a map blob from its first bytes, as a program passes it to `gc_init`: an LLVM v3
 * section starts with version byte 3, a `_GC_MAP_` v1 blob with the 64-bit word 1 (its version);
 * undefined for anything else.
 */
export function blobFormat(head: Uint8Array): "llvm-v3" | "plimmix-v1" | undefined {
  if (head[0] === 3) return "llvm-v3";
  if (head[0] === 1 && head[1] === 0 && head[2] === 0 && head[3] === 0) return "plimmix-v1";
  return undefined;
}
