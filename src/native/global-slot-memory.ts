import koffi from "koffi";
import { readU64, writeU64 } from "../bytes/word-codec.js";

/** Global slots in the program's data (8 bytes each, through a view per slot, made at its first access). */
export class GlobalSlotMemory {
  private readonly views = new Map<number, Uint32Array>();
  private view(address: number): Uint32Array {
    let v = this.views.get(address);
    if (v === undefined) {
      v = new Uint32Array(koffi.view(BigInt(address), 8));
      this.views.set(address, v);
    }
    return v;
  }
  readWord(address: number): number {
    return readU64(this.view(address), 0);
  }
  writeWord(address: number, value: number): void {
    writeU64(this.view(address), 0, value);
  }
}
