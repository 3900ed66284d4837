import { hex } from "../errors.js";
import type { ElfFile } from "../elf/elf-file.js";
import type { Memory } from "../memory/memory.js";
import { ReturnBarrierMemory } from "./return-barrier-memory.js";
import { BARRIERS_SYMBOL, TRAMPOLINE_SYMBOL, readReturnBarrierTable } from "./return-barrier-table.js";

/** Where a mapped module defines the runtime's trampoline and table (absolute addresses). */
export interface ReturnBarrierSymbols {
  trampoline: number;
  table: number;
  /** The module's path, for messages. */
  path: string;
}

/** A core's memory with its armed return barriers restored, or as it is with why not. */
export interface RestoredCoreMemory {
  memory: Memory;
  /** Set when the table was used: which slots it restored. */
  restored: ReturnBarrierMemory | undefined;
  /** The trampoline's address, when a module defines it (the walk stops at one left unrestored). */
  trampoline: number | undefined;
  /** One line when the module defines the table but it cannot be used (then the walk is without it). */
  note: string | undefined;
}

/**
 * The runtime's return-barrier symbols in `elf` (its dynamic symbols, else its .symtab), both
 * defined there; undefined when it does not define both (any module but librwruntime).
 */
export function returnBarrierSymbols(elf: ElfFile, loadBias: number, path: string): ReturnBarrierSymbols | undefined {
  for (const symbols of [elf.dynamicSymbols(), elf.symbols()]) {
    const trampoline = symbols.find((s) => s.name === TRAMPOLINE_SYMBOL && s.definedSectionIndex !== undefined);
    const table = symbols.find((s) => s.name === BARRIERS_SYMBOL && s.definedSectionIndex !== undefined);
    if (trampoline !== undefined && table !== undefined) return { trampoline: trampoline.value + loadBias, table: table.value + loadBias, path };
  }
  return undefined;
}

/**
 * `memory` as the walk reads it: when a module defines the return-barrier table, the table is
 * read from the core (armed entries only) and every armed slot that holds the trampoline's
 * address reads as its original return address. A corrupt table is not used: `note` says why,
 * and a slot left holding the trampoline then ends its thread's walk (Unwinder "return-barrier").
 */
export function restoreReturnBarriers(memory: Memory, symbols: ReturnBarrierSymbols | undefined): RestoredCoreMemory {
  if (symbols === undefined) return { memory, restored: undefined, trampoline: undefined, note: undefined };
  const table = readReturnBarrierTable(memory, symbols.table);
  if (table.slots === undefined) {
    const note = `return barriers: ${table.problem}; walked without the table (${BARRIERS_SYMBOL} at ${hex(symbols.table)} in ${symbols.path})`;
    return { memory, restored: undefined, trampoline: symbols.trampoline, note };
  }
  if (table.slots.size === 0) return { memory, restored: undefined, trampoline: symbols.trampoline, note: undefined };
  const restored = new ReturnBarrierMemory(memory, symbols.trampoline, table.slots);
  return { memory: restored, restored, trampoline: symbols.trampoline, note: undefined };
}
