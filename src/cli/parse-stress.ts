import { InvalidArgumentError, RootwalkError } from "../errors.js";

/** Largest N of `--stress=N` (a collection every N-th safepoint or allocation), for sim and run alike. */
export const MAX_STRESS_EVERY = 1_000_000_000;

/** The N of `--stress=N`; an empty value (plain `--stress`) is 1. */
export function parseStressEvery(text: string): number {
  if (text === "") return 1;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_STRESS_EVERY)
    throw new InvalidArgumentError("--stress", text, `a whole number from 1 to ${MAX_STRESS_EVERY}`);
  return n;
}

/**
 * `--stress 100` (a space) would take 100 as a program (run) or a stray argument (sim): the count
 * of an option spelled `--stress[=N]` is only read after `=`, because a bare `--stress` is
 * complete. Refused, naming the spelling: "--stress takes its count after '=': --stress=100".
 */
export function refuseSpacedCount(spelling: string, next: string | undefined): void {
  if (next !== undefined && /^\d+$/.test(next)) throw new SpacedCountError(spelling, next);
}

export class SpacedCountError extends RootwalkError {
  constructor(
    readonly spelling: string,
    readonly count: string,
  ) {
    super("INVALID_ARGUMENT", `${spelling} takes its count after '=': ${spelling}=${count}`);
  }
}
