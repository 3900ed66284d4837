import { InvalidArgumentError } from "../errors.js";

/** `64M`, `512K`, `1G`, `1.5MiB` or a plain byte count, for the option `option`. */
export function parseSize(text: string, option = "--heap"): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kKmMgG]?)i?[bB]?$/.exec(text.trim());
  if (m === null) throw new InvalidArgumentError(option, text, "a size like 64M, 512K, 1G or 1048576");
  const unit = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2]!.toLowerCase() as "" | "k" | "m" | "g"];
  return Math.floor(Number(m[1]) * unit);
}

/** `--nursery SIZE` (run, sim): the generational nursery budget, 32K..4G. */
export function parseNurserySize(text: string): number {
  const bytes = parseSize(text, "--nursery");
  if (!(bytes >= 32 * 1024 && bytes <= 2 ** 32)) throw new InvalidArgumentError("--nursery", text, "between 32K (one block) and 4G");
  return bytes;
}
