import { ByteView } from "../bytes/byte-view.js";
import { MalformedInputError } from "../errors.js";

/*
 * ELF notes (a PT_NOTE segment or an SHT_NOTE section): name, type and descriptor, each padded to
 * 4 bytes. Read by the core reader (src/core/core-file.ts: NT_PRSTATUS, NT_FILE, NT_AUXV) and for a
 * mapped file's GNU build id (src/elf/elf-identity.ts).
 */

/** NT_GNU_BUILD_ID: the note (name "GNU") whose descriptor is the build id. */
const NT_GNU_BUILD_ID = 3;

/** The GNU build id (hex) in a run of notes (a PT_NOTE segment), or undefined. */
export function buildIdOfNotes(bytes: Uint8Array): string | undefined {
  try {
    for (const note of readNotes(bytes, 0)) {
      if (note.name === "GNU" && note.type === NT_GNU_BUILD_ID) return [...note.desc].map((b) => b.toString(16).padStart(2, "0")).join("");
    }
  } catch {
    return undefined;
  }
  return undefined;
}

export interface Note {
  name: string;
  type: number;
  desc: Uint8Array;
  descOffset: number;
}

export function readNotes(bytes: Uint8Array, baseOffset: number): Note[] {
  const view = new ByteView(bytes);
  const notes: Note[] = [];
  let at = 0;
  const align4 = (n: number): number => (n + 3) & ~3;
  while (at + 12 <= bytes.length) {
    const namesz = view.u32(at);
    const descsz = view.u32(at + 4);
    const type = view.u32(at + 8);
    const nameAt = at + 12;
    const descAt = nameAt + align4(namesz);
    if (descAt + descsz > bytes.length)
      throw new MalformedInputError(
        "core note",
        baseOffset + at,
        `${namesz}+${descsz} bytes`,
        `at most ${bytes.length - at - 12} bytes of name and descriptor`,
      );
    const name = new TextDecoder().decode(bytes.subarray(nameAt, nameAt + Math.max(0, namesz - 1)));
    notes.push({ name, type, desc: bytes.subarray(descAt, descAt + descsz), descOffset: baseOffset + descAt });
    at = descAt + align4(descsz);
  }
  return notes;
}
