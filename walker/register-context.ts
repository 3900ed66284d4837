import { InvalidArgumentError } from "../src/errors.js";
import { CALLEE_SAVED_COUNT, CALLEE_SAVED_NAMES } from "../src/safepoints/frame-descriptors.js";

export type CalleeSavedName = (typeof CALLEE_SAVED_NAMES)[number];

const U64_MAX = (1n << 64n) - 1n;

/**
 * The callee-saved registers (rbx, rbp, r12-r15) as they are at the innermost safepoint. The
 * runtime's safepoint trampoline captures them; a root that lives in one of them is read from
 * here and a relocated value is written back here, for the runtime to restore into the register.
 * Registers not captured are unknown: a walk that needs one fails with a typed error.
 *
 * A register can hold anything (an integer like -48 as well as a pointer): `exact` keeps all 64
 * bits, so a register the collector did not change goes back unchanged; `values` is the number
 * the walker computes with (exact below 2^53, which every address and heap pointer is).
 */
export class RegisterContext {
  readonly values = new Float64Array(CALLEE_SAVED_COUNT);
  readonly exact = new BigUint64Array(CALLEE_SAVED_COUNT);
  knownMask = 0;

  static from(registers: Partial<Record<CalleeSavedName, number | bigint>>): RegisterContext {
    const context = new RegisterContext();
    CALLEE_SAVED_NAMES.forEach((name, k) => {
      const value = registers[name];
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
    CALLEE_SAVED_NAMES.forEach((name, k) => {
      if (this.isKnown(k)) out[name] = this.exact[k]!;
    });
    return out;
  }
}
