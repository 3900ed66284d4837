import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Every TypeScript source under `dir` (declaration files left out), appended to `out`. */
export function tsFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) tsFiles(path, out);
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}
