import { InvalidArgumentError } from "../errors.js";
import { locationDwarfReg, locationKind } from "../location/location-word.js";
import type { FrameDescriptors } from "./frame-descriptors.js";

/*
 * One safepoint's fields read in place from its module's descriptor columns, for the
 * non-allocating lookup of RegistrySnapshot (`find` + the `...At(index)` readers): an embedder's
 * walker calls these per frame, so none of them allocates. A module whose descriptors are deferred
 * (registered through the scan kernel's index) decodes the block holding the safepoint on its
 * first use and keeps it (src/loader/deferred-llvm-descriptors.ts): a one-off per block of 1024
 * safepoints, never per call.
 *
 * `descriptor` is the safepoint's index in its module's descriptors; the caller (the snapshot)
 * has checked it.
 */

/** Which location of a (base, derived) pair: the base object, or the derived pointer into it. */
export type RootSide = "base" | "derived";

/**
 * What these readers need of a registered module (RegisteredModule has it; named here so this
 * file does not import the registry, which imports it): its descriptors, or the deferred ones.
 */
interface DescriptorSource {
  readonly descriptors: FrameDescriptors;
  readonly deferred: { descriptorsOf(index: number): FrameDescriptors; rowOf(index: number): number } | undefined;
}

function columnsOf(module: DescriptorSource, descriptor: number): FrameDescriptors {
  return module.deferred === undefined ? module.descriptors : module.deferred.descriptorsOf(descriptor);
}

function rowOf(module: DescriptorSource, descriptor: number): number {
  return module.deferred === undefined ? descriptor : module.deferred.rowOf(descriptor);
}

export function returnAddressOf(module: DescriptorSource, descriptor: number): number {
  return columnsOf(module, descriptor).returnAddress[rowOf(module, descriptor)]!;
}

/** SP at the safepoint to its return-address slot, or -1 when the frame is found by the frame pointer. */
export function frameSizeBytesOf(module: DescriptorSource, descriptor: number): number {
  const size = columnsOf(module, descriptor).frameSizeBytes[rowOf(module, descriptor)]!;
  return size >= 0 ? size : -1;
}

export function rootCountOf(module: DescriptorSource, descriptor: number): number {
  return columnsOf(module, descriptor).pairCount[rowOf(module, descriptor)]!;
}

/** Word `word` (0: kind and register, 1: offset or constant) of root `root`'s `side` location. */
function locationWord(module: DescriptorSource, descriptor: number, root: number, side: RootSide, word: 0 | 1): number {
  const d = columnsOf(module, descriptor);
  const row = rowOf(module, descriptor);
  const count = d.pairCount[row]!;
  if (!(Number.isInteger(root) && root >= 0 && root < count)) {
    throw new InvalidArgumentError("root", String(root), `a root of this safepoint: a whole number in [0, ${count})`);
  }
  if (side !== "base" && side !== "derived") throw new InvalidArgumentError("side", String(side), '"base" or "derived"');
  const location = d.pairs[(d.pairStart[row]! + root) * 2 + (side === "base" ? 0 : 1)]!;
  return d.locations[location * 2 + word]!;
}

/** The location's kind (LocationKind: 1 Register, 2 Direct, 3 Indirect, 4 Constant, 5 ConstantIndex). */
export function rootKindOf(module: DescriptorSource, descriptor: number, root: number, side: RootSide): number {
  return locationKind(locationWord(module, descriptor, root, side, 0));
}

/** The location's DWARF register number (the register, or the base of a Direct/Indirect address). */
export function rootRegisterOf(module: DescriptorSource, descriptor: number, root: number, side: RootSide): number {
  return locationDwarfReg(locationWord(module, descriptor, root, side, 0));
}

/** Direct/Indirect: the byte offset from the register; Constant: the constant; ConstantIndex: the pool index; Register: 0. */
export function rootOffsetOrConstantOf(module: DescriptorSource, descriptor: number, root: number, side: RootSide): number {
  return locationWord(module, descriptor, root, side, 1);
}
