import { InvalidArgumentError } from "../errors.js";

/** Longest duration an option accepts: one day, in milliseconds. */
export const MAX_DURATION_MS = 86_400_000;

/**
 * `10` or `10s` (seconds), `2.5s`, `500ms`, `0` (off), for the option `option`; returns whole
 * milliseconds, at most MAX_DURATION_MS.
 */
export function parseDurationMs(text: string, option: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s)?$/.exec(text.trim());
  if (m === null) throw new InvalidArgumentError(option, text, "a duration like 10, 10s, 2.5s or 500ms (0: off)");
  const ms = Math.round(Number(m[1]) * (m[2] === "ms" ? 1 : 1000));
  if (ms > MAX_DURATION_MS) throw new InvalidArgumentError(option, text, "at most 86400s (one day)");
  return ms;
}
