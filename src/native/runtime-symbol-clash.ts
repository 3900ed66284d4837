import { readFileSync } from "node:fs";
import { SHN_UNDEF, STB_GLOBAL, STB_GNU_UNIQUE, STB_WEAK } from "../elf/elf-constants.js";
import { ElfFile } from "../elf/elf-file.js";
import type { ElfSymbol } from "../elf/elf-symbol.js";
import { InvalidArgumentError, RootwalkError } from "../errors.js";

/**
 * A program may name its functions as it likes (`round`, `free`, `exit`, ...): the program
 * library is linked with -Bsymbolic (build-runtime.ts PROGRAM_LINK_FLAGS), so its references to
 * its own definitions bind to them, not to libc's or libm's. The one clash that cannot be
 * allowed is with the runtime itself: a program that defines `gc_alloc` (or any symbol the
 * runtime exports) would call its own version and bypass the collector. Such a program is
 * refused before linking, in one line naming the symbol.
 *
 * Which names are the runtime's is read from the runtime library's `.dynsym` (every defined
 * global it exports), so the list is never copied by hand. A program's definitions: each `.o`'s
 * `.symtab`, each user `.so`'s `.dynsym`; global, weak and unique symbols (local ones, LLVM's
 * `internal`, bind to nothing outside their file).
 */

function isExternalDefinition(symbol: ElfSymbol): boolean {
  return symbol.sectionIndex !== SHN_UNDEF && symbol.name !== "" && (symbol.bind === STB_GLOBAL || symbol.bind === STB_WEAK || symbol.bind === STB_GNU_UNIQUE);
}

/** The names a library exports (its defined `.dynsym` globals), or an object defines (`.symtab`). */
function externalDefinitions(elf: ElfFile): string[] {
  const table = elf.dynamicSymbols().length > 0 ? elf.dynamicSymbols() : elf.symbols();
  return table.filter(isExternalDefinition).map((symbol) => symbol.name);
}

const runtimeNames = new Map<string, ReadonlySet<string>>();

/** Every symbol the runtime library at `runtime` exports (memoized per path). */
export function runtimeExports(runtime: string): ReadonlySet<string> {
  let names = runtimeNames.get(runtime);
  if (names === undefined) {
    names = new Set(externalDefinitions(ElfFile.parse(readFileSync(runtime))));
    runtimeNames.set(runtime, names);
  }
  return names;
}

/**
 * Throws an InvalidArgumentError naming the first object (or user library) in `inputs` that
 * defines a symbol the runtime exports, by its name in `names` (the user's source for a compiled
 * object). An input that is not ELF is left to the linker to refuse.
 */
export function refuseRuntimeSymbolClash(inputs: readonly string[], names: readonly string[], runtime: string): void {
  const reserved = runtimeExports(runtime);
  for (const [k, input] of inputs.entries()) {
    let elf: ElfFile;
    try {
      elf = ElfFile.parse(readFileSync(input));
    } catch (error) {
      if (error instanceof RootwalkError) continue;
      throw error;
    }
    const clash = externalDefinitions(elf).find((name) => reserved.has(name));
    if (clash !== undefined) {
      throw new InvalidArgumentError(
        names[k] ?? input,
        `a definition of ${clash}, one of the native runtime's own entry points`,
        `a program that calls ${clash} and leaves its definition to the runtime (rename the program's ${clash})`,
      );
    }
  }
}
