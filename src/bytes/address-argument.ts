import { InvalidArgumentError } from "../errors.js";

/** What an address argument must be, in every message that refuses one. */
export const ADDRESS_EXPECTED = "an address: a whole number in [0, 2^53)";

/** 2^53 as a bigint: the first address a plain number cannot hold exactly. */
const TWO_POW_53 = 1n << 53n;

/**
 * A caller's address as a plain number, exact: a whole number in [0, 2^53), or a bigint in the
 * same range (addresses read as 64-bit words often are bigints: `0x34n` is 52). Anything else is
 * an InvalidArgumentError naming `what` and the value as given: a string quoted, a bigint with its
 * `n` (a bigint at or above 2^53 is named as one, not as the number it would round to).
 */
export function addressArgument(value: unknown, what: string): number {
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === "bigint" && value >= 0n && value < TWO_POW_53) return Number(value);
  throw new InvalidArgumentError(what, describeAddressValue(value), ADDRESS_EXPECTED);
}

/** `52.5`, `"0x34"`, `a bigint 9007199254740992n`: an address argument as a message names it. */
export function describeAddressValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "bigint") return `a bigint ${value}n`;
  return String(value);
}
