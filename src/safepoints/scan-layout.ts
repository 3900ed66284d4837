import { OwnedRegion } from "../memory/owned-region.js";
import { scanMemory } from "../memory/scan-memory.js";
import { RECIPE_BYTES, RECIPE_COUNTS, RECIPE_FRAME_BYTES, RECIPE_NOT_FOUND, RECIPE_SAVE_START, RECIPE_SLOT_START } from "./recipe-record.js";
import type { SafepointTable } from "./safepoint-table.js";
import type { ScanRecipes } from "./scan-recipes.js";

/*
 * A registry snapshot's safepoint table and scan recipes laid out in the scan memory
 * (src/memory/scan-memory.ts) for the scan kernel (walker/scan-kernel/), in one region:
 *   keys          the table's key cells, u64 each (lo, hi), in the table's order (0 = empty)
 *   recipe of cell the joined recipe index of the safepoint in that cell, or NOT_FAST; for an
 *                 empty cell RECIPE_NOT_FOUND: a probe ends at the cell holding its key or at the
 *                 empty cell after its sequence, and one load of that cell's recipe answers both,
 *                 without the module slot and descriptor index the JS table's values hold (those
 *                 stay there, for lookups and the general unwinder)
 *   recipes       one record per recipe (src/safepoints/recipe-record.ts)
 *   slots, saves  the recipes' (base, derived) offset pairs and (register, CFA offset) pairs, i32
 * The layout is built once per snapshot, on its first scan (the native runtime asks for it at
 * gc_init: StackRootScanner.prepareScans), and never changes (the snapshot's
 * table and recipes never do); the region goes back when the snapshot becomes unreachable.
 */
export class ScanLayout {
  readonly keysOffset: number;
  readonly recipeOfCellOffset: number;
  readonly recipesOffset: number;
  readonly slotsOffset: number;
  readonly savesOffset: number;
  /** capacity - 1 and the hash shift of the table (SafepointTable.hashShift). */
  readonly mask: number;
  readonly shift: number;
  /** Bytes a scan may read: the sum of the columns above (page rounding not counted). */
  readonly sizeBytes: number;
  private readonly region: OwnedRegion;

  constructor(owner: object, table: SafepointTable, recipes: ScanRecipes, firstSafepointBySlot: Int32Array) {
    const cells = table.capacity;
    const recipeOfCell = cells * 8;
    const recipeRecords = align8(recipeOfCell + cells * 4);
    const slots = recipeRecords + recipes.frameBytes.length * RECIPE_BYTES;
    const saves = align8(slots + recipes.slots.length * 4);
    this.sizeBytes = saves + recipes.saves.length * 4;
    this.region = OwnedRegion.allocate(owner, this.sizeBytes, "safepoint table and scan recipes");
    const at = this.region.offset;
    this.keysOffset = at;
    this.recipeOfCellOffset = at + recipeOfCell;
    this.recipesOffset = at + recipeRecords;
    this.slotsOffset = at + slots;
    this.savesOffset = at + saves;
    this.mask = cells - 1;
    this.shift = table.hashShift;
    writeLayout(this, table, recipes, firstSafepointBySlot);
  }
}

function align8(bytes: number): number {
  return Math.ceil(bytes / 8) * 8;
}

function writeLayout(layout: ScanLayout, table: SafepointTable, recipes: ScanRecipes, firstSafepointBySlot: Int32Array): void {
  const buffer = scanMemory().buffer;
  const cells = table.capacity;
  new Uint32Array(buffer, layout.keysOffset, 2 * cells).set(table.keys);
  const recipeOfCell = new Int32Array(buffer, layout.recipeOfCellOffset, cells);
  const keys = table.keys;
  const values = table.values;
  for (let c = 0; c < cells; c++) {
    const empty = (keys[2 * c]! | keys[2 * c + 1]!) === 0;
    recipeOfCell[c] = empty ? RECIPE_NOT_FOUND : recipes.recipe[firstSafepointBySlot[values[2 * c]!]! + values[2 * c + 1]!]!;
  }
  const recipeCount = recipes.frameBytes.length;
  const records = new Uint32Array(buffer, layout.recipesOffset, (recipeCount * RECIPE_BYTES) / 4);
  for (let r = 0; r < recipeCount; r++) {
    const at = (r * RECIPE_BYTES) / 4;
    records[at + RECIPE_FRAME_BYTES / 4] = recipes.frameBytes[r]!;
    records[at + RECIPE_SLOT_START / 4] = recipes.slotStart[r]! / 2;
    records[at + RECIPE_COUNTS / 4] = recipes.pairCount[r]! | (recipes.saveCount[r]! << 16);
    records[at + RECIPE_SAVE_START / 4] = recipes.saveStart[r]! / 2;
  }
  new Int32Array(buffer, layout.slotsOffset, recipes.slots.length).set(recipes.slots);
  new Int32Array(buffer, layout.savesOffset, recipes.saves.length).set(recipes.saves);
}
