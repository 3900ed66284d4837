import type { Architecture } from "../src/arch/architecture.js";
import type { Aarch64CalleeSavedName } from "../src/arch/aarch64.js";
import type { X86_64CalleeSavedName } from "../src/arch/x86-64.js";
import { InvalidArgumentError, describeValue } from "../src/errors.js";

/** A callee-saved register's name on any architecture rootwalk walks (`rbx`, `x20`). */
export type CalleeSavedName = X86_64CalleeSavedName | Aarch64CalleeSavedName;

const U64_MAX = (1n << 64n) - 1n;

/**
 * The callee-saved registers of an architecture (x86-64: rbx, rbp, r12-r15; AArch64: x19-x30) as
 * they are at the innermost safepoint, indexed k in the architecture's calleeSavedDwarf order.
 * The runtime's safepoint trampoline captures them (or a core's NT_PRSTATUS holds them); a root
 * that lives in one of them is read from here and a relocated value is written back here, for
 * the runtime to restore into the register. Registers not captured are unknown: a walk that
 * needs one fails with a typed error.
 *
 * A register can hold anything (an integer like -48 as well as a pointer): `exact` keeps all 64
 * bits, so a register the collector did not change goes back unchanged; `values` is the number
 * the walker computes with (exact below 2^53, which every address and heap pointer is).
 */
export class RegisterContext {
  readonly values: Float64Array;
  readonly exact: BigUint64Array;
  knownMask = 0;

  constructor(readonly architecture: Architecture) {
    this.values = new Float64Array(architecture.calleeSavedDwarf.length);
    this.exact = new BigUint64Array(architecture.calleeSavedDwarf.length);
  }

  /**
   * A context from register names of `architecture` (X86_64 or AARCH64: no default, the names
   * belong to one machine); a name it lacks is refused.
   */
  static from(registers: Partial<Record<CalleeSavedName, number | bigint>>, architecture: Architecture): RegisterContext {
    if (typeof architecture !== "object" || architecture === null || !Array.isArray(architecture.calleeSavedNames))
      throw new InvalidArgumentError("architecture", describeValue(architecture), "an architecture description (X86_64 or AARCH64, exported by rootwalk)");
    if (typeof registers !== "object" || registers === null)
      throw new InvalidArgumentError(
        "registers",
        describeValue(registers),
        `an object of callee-saved registers, e.g. { ${architecture.calleeSavedNames[0]}: 0x1000 }`,
      );
    const context = new RegisterContext(architecture);
    for (const name of Object.keys(registers)) {
      if (!architecture.calleeSavedNames.includes(name))
        throw new InvalidArgumentError("register", name, `a callee-saved register of ${architecture.name} (${architecture.calleeSavedNames.join(", ")})`);
    }
    architecture.calleeSavedNames.forEach((name, k) => {
      const value = registers[name as CalleeSavedName];
      if (value === undefined) return;
      const exact = typeof value === "bigint" ? value : Number.isSafeInteger(value) ? BigInt(value) : -1n;
      if (exact < 0n || exact > U64_MAX)
        throw new InvalidArgumentError(`register ${name}`, String(value), "an unsigned 64-bit integer (a bigint, or a number below 2^53)");
      context.exact[k] = exact;
      context.values[k] = Number(exact);
      context.knownMask |= 1 << k;
    });
    return context;
  }

  isKnown(k: number): boolean {
    return (this.knownMask & (1 << k)) !== 0;
  }

  /** Sets register k to a 64-bit value read from the runtime (a context refilled at each stop). */
  load(k: number, exact: bigint): void {
    this.exact[k] = exact;
    this.values[k] = Number(exact);
    this.knownMask |= 1 << k;
  }

  /** Sets register k (a relocated root). */
  set(k: number, value: number): void {
    this.values[k] = value;
    this.exact[k] = BigInt(value);
    this.knownMask |= 1 << k;
  }

  toObject(): Partial<Record<CalleeSavedName, bigint>> {
    const out: Partial<Record<CalleeSavedName, bigint>> = {};
    this.architecture.calleeSavedNames.forEach((name, k) => {
      if (this.isKnown(k)) out[name as CalleeSavedName] = this.exact[k]!;
    });
    return out;
  }
}
