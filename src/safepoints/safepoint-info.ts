import { locationDwarfReg, LocationKind, locationKind } from "../location/location-word.js";
import { addressArgument } from "../bytes/address-argument.js";
import { FLAG_FRAME_POINTER_CFA } from "./frame-descriptors.js";
import { type RegisteredModule, type RegistrySnapshot, checkSnapshotArgument } from "./registry.js";

/**
 * A root's location as a caller reads it, without decoding packed location words:
 * - register: the value is in the register at the safepoint;
 * - direct: the value is `register + offsetBytes` (an address, e.g. of an alloca);
 * - indirect: the value is the word in memory at `register + offsetBytes` (a spill slot);
 * - constant: a constant operand: LLVM's Constant as a decimal string, ConstantIndex as
 *   `constants[i]` (the index into the blob's constant pool).
 */
export type RootLocation =
  | { kind: "register"; register: string }
  | { kind: "direct"; register: string; offsetBytes: number }
  | { kind: "indirect"; register: string; offsetBytes: number }
  | { kind: "constant"; value: string };

/** One safepoint, readable: what a runtime author checks against llvm-readobj or gdb. */
export interface SafepointInfo {
  /** Absolute return address (load bias applied): the key the walker looks up. */
  returnAddress: number;
  /** The registered module's name (the path given at registration). */
  module: string;
  function: string | undefined;
  /** SP at the safepoint to the return-address slot; null when the frame is found via rbp. */
  frameSizeBytes: number | null;
  /** "sp+N", or "rbp+8" style for frames the walker climbs by the frame pointer. */
  frameRule: string;
  /** (base, derived) pairs; base and derived are equal for a plain root. */
  roots: { base: RootLocation; derived: RootLocation }[];
}

function location(module: RegisteredModule, loc: number): RootLocation {
  const d = module.descriptors;
  const w0 = d.locations[loc * 2]!;
  const w1 = d.locations[loc * 2 + 1]!;
  const register = d.architecture.registerName(locationDwarfReg(w0));
  switch (locationKind(w0)) {
    case LocationKind.Register:
      return { kind: "register", register };
    case LocationKind.Direct:
      return { kind: "direct", register, offsetBytes: w1 };
    case LocationKind.Indirect:
      return { kind: "indirect", register, offsetBytes: w1 };
    case LocationKind.Constant:
      return { kind: "constant", value: String(w1) };
    default:
      return { kind: "constant", value: `constants[${w1}]` };
  }
}

function describe(module: RegisteredModule, i: number): SafepointInfo {
  const d = module.descriptors;
  const frameSize = d.frameSizeBytes[i]!;
  const roots: SafepointInfo["roots"] = [];
  for (let p = 0; p < d.pairCount[i]!; p++) {
    const pair = (d.pairStart[i]! + p) * 2;
    roots.push({ base: location(module, d.pairs[pair]!), derived: location(module, d.pairs[pair + 1]!) });
  }
  const viaRbp = (d.flags[i]! & FLAG_FRAME_POINTER_CFA) !== 0;
  const cfaOffset = d.cfaOffsetBytes[i]! - 8;
  return {
    returnAddress: d.returnAddress[i]!,
    module: module.name,
    function: d.functions[d.functionIndex[i]!]?.name,
    frameSizeBytes: frameSize >= 0 ? frameSize : null,
    frameRule: frameSize >= 0 ? `sp+${frameSize}` : viaRbp ? `rbp${cfaOffset >= 0 ? "+" : ""}${cfaOffset}` : "unknown",
    roots,
  };
}

/**
 * The safepoint at `returnAddress` (absolute), or undefined when none is registered there. The
 * address is a whole number in [0, 2^53) or a bigint in that range (taken exactly); anything else
 * is an InvalidArgumentError: "none there" would be a wrong answer for a caller's fraction or
 * string, and a bigint at or above 2^53 is named as the bigint it is.
 */
export function safepointAt(snapshot: RegistrySnapshot, returnAddress: number | bigint): SafepointInfo | undefined {
  checkSnapshotArgument(snapshot);
  const address = addressArgument(returnAddress, "returnAddress");
  const found = snapshot.lookup(address);
  return found === undefined ? undefined : describe(found.module, found.index);
}

/** Every registered safepoint, module by module, in each module's record order. */
export function listSafepoints(snapshot: RegistrySnapshot): SafepointInfo[] {
  checkSnapshotArgument(snapshot);
  const out: SafepointInfo[] = [];
  for (const module of snapshot.modules.values()) {
    for (let i = 0; i < module.descriptors.count; i++) out.push(describe(module, i));
  }
  return out;
}
