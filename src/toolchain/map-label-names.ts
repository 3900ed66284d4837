import { readFileSync } from "node:fs";
import { basename } from "node:path";

/*
 * The plimmix plugin names a module's `_GC_MAP_` v1 map `_GC_MAP_` + the module's source_filename
 * (src/plimmix-plugin/plimmix-gc.cpp). A module without a `source_filename` line takes the name of
 * the file llc read, which is a path in rootwalk's cache, so a program that declares
 * `@"_GC_MAP_prog"` and calls gc_init with it links, and then fails to load with the dynamic
 * linker's bare "undefined symbol: _GC_MAP_prog". This turns that failure into a sentence naming
 * the label, the modules' source_filenames, and the line to add.
 */

const UNDEFINED_MAP_LABEL = /undefined symbol: (_GC_MAP_\S*)/;
const SOURCE_FILENAME = /^source_filename\s*=\s*"([^"]*)"/m;

/** A program file's `source_filename`, or null for text IR without one (undefined: not text IR, unreadable). */
function sourceFilenameOf(path: string): string | null | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
  if (!path.endsWith(".ll")) return undefined;
  return SOURCE_FILENAME.exec(text)?.[1] ?? null;
}

/**
 * The loader's message about an undefined `_GC_MAP_` label, explained from the program's files;
 * undefined when the message is about something else.
 */
export function explainUndefinedMapLabel(loaderMessage: string, programFiles: readonly string[]): string | undefined {
  const label = UNDEFINED_MAP_LABEL.exec(loaderMessage)?.[1];
  if (label === undefined) return undefined;
  const wanted = label.slice("_GC_MAP_".length);
  const named = programFiles.map((file) => ({ file, name: sourceFilenameOf(file) })).filter((m) => m.name !== undefined);
  const without = named.filter((m) => m.name === null).map((m) => basename(m.file));
  const withName = named.filter((m) => m.name !== null).map((m) => `${basename(m.file)}: "${m.name}"`);
  const modules = [...withName, ...without.map((f) => `${f}: no source_filename`)].join("; ");
  const advice =
    without.length === 1 && withName.length === 0
      ? `add the line source_filename = "${wanted}" to ${without[0]}`
      : `give the module that calls gc_init with it the line source_filename = "${wanted}"`;
  return (
    `the program uses the map label ${label}, which no module defines: the plimmix plugin names a module's map _GC_MAP_ + its source_filename` +
    (modules === "" ? "" : ` (${modules})`) +
    `; ${advice}`
  );
}
