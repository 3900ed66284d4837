/*
 * The recipe compiler's index from a slot list's 32-bit hash to the first recipe with that hash
 * (src/safepoints/scan-recipes.ts). A Map would box every hash above 2^30 as a heap number;
 * this is open addressing on two typed arrays:
 *  - capacity is a power of two, at least twice the entries (a probe always meets an empty slot);
 *  - recipes[i] = -1 marks an empty slot (any u32 is a valid hash);
 *  - linear probing from the hash's high bits; entries are never removed.
 */

const MIN_LOG_CAPACITY = 6;

export class RecipeHashIndex {
  private logCapacity = MIN_LOG_CAPACITY;
  private hashes = new Uint32Array(1 << MIN_LOG_CAPACITY);
  private recipes = new Int32Array(1 << MIN_LOG_CAPACITY).fill(-1);
  private entries = 0;

  /** The recipe first added with `hash`, or -1. */
  get(hash: number): number {
    const mask = (1 << this.logCapacity) - 1;
    for (let i = this.home(hash); ; i = (i + 1) & mask) {
      const recipe = this.recipes[i]!;
      if (recipe < 0 || this.hashes[i] === hash) return recipe;
    }
  }

  /** Adds `hash` -> `recipe`; `hash` must not be present. */
  add(hash: number, recipe: number): void {
    if ((this.entries + 1) * 2 > this.recipes.length) this.grow();
    this.place(hash, recipe);
    this.entries++;
  }

  private home(hash: number): number {
    return Math.imul(hash, 0x9e3779b1) >>> (32 - this.logCapacity);
  }

  private place(hash: number, recipe: number): void {
    const mask = (1 << this.logCapacity) - 1;
    let i = this.home(hash);
    while (this.recipes[i]! >= 0) i = (i + 1) & mask;
    this.hashes[i] = hash;
    this.recipes[i] = recipe;
  }

  private grow(): void {
    const hashes = this.hashes;
    const recipes = this.recipes;
    this.logCapacity++;
    this.hashes = new Uint32Array(1 << this.logCapacity);
    this.recipes = new Int32Array(1 << this.logCapacity).fill(-1);
    for (let i = 0; i < recipes.length; i++) if (recipes[i]! >= 0) this.place(hashes[i]!, recipes[i]!);
  }
}
