import { InvalidArgumentError } from "../errors.js";

/** Largest N of `--stress=N` (a collection every N-th safepoint or allocation), for sim and run alike. */
export const MAX_STRESS_EVERY = 1_000_000_000;

/** The N of `--stress=N`; an empty value (plain `--stress`) is 1. */
export function parseStressEvery(text: string): number {
  if (text === "") return 1;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_STRESS_EVERY) throw new InvalidArgumentError("--stress", text, `a whole number from 1 to ${MAX_STRESS_EVERY}`);
  return n;
}
