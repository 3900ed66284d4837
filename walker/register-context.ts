import { InvalidArgumentError } from "../src/errors.js";
import { CALLEE_SAVED_COUNT, CALLEE_SAVED_NAMES } from "../src/safepoints/frame-descriptors.js";

export type CalleeSavedName = (typeof CALLEE_SAVED_NAMES)[number];

/**
 * The callee-saved registers (rbx, rbp, r12-r15) as they are at the innermost safepoint. The
 * runtime's safepoint trampoline captures them; a root that lives in one of them is read from
 * here and a relocated value is written back here, for the runtime to restore into the register.
 * Registers not captured are unknown: a walk that needs one fails with a typed error.
 */
export class RegisterContext {
  readonly values = new Float64Array(CALLEE_SAVED_COUNT);
  knownMask = 0;

  static from(registers: Partial<Record<CalleeSavedName, number>>): RegisterContext {
    const context = new RegisterContext();
    CALLEE_SAVED_NAMES.forEach((name, k) => {
      const value = registers[name];
      if (value === undefined) return;
      if (!Number.isSafeInteger(value) || value < 0) throw new InvalidArgumentError(`register ${name}`, String(value), "an integer in [0, 2^53)");
      context.values[k] = value;
      context.knownMask |= 1 << k;
    });
    return context;
  }

  isKnown(k: number): boolean {
    return (this.knownMask & (1 << k)) !== 0;
  }

  toObject(): Partial<Record<CalleeSavedName, number>> {
    const out: Partial<Record<CalleeSavedName, number>> = {};
    CALLEE_SAVED_NAMES.forEach((name, k) => {
      if (this.isKnown(k)) out[name] = this.values[k]!;
    });
    return out;
  }
}
