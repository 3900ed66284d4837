import { InvalidArgumentError } from "../errors.js";

/** `64M`, `512K`, `1G`, `1.5MiB` or a plain byte count, for the option `option`. */
export function parseSize(text: string, option = "--heap"): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kKmMgG]?)i?[bB]?$/.exec(text.trim());
  if (m === null) throw new InvalidArgumentError(option, text, "a size like 64M, 512K, 1G or 1048576");
  const unit = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2]!.toLowerCase() as "" | "k" | "m" | "g"];
  return Math.floor(Number(m[1]) * unit);
}
