// The scan kernel's WebAssembly module is committed (walker/scan-kernel/scan-kernel.wasm) so the
// sources load it under vitest and the tarball ships it without AssemblyScript. This rebuilds it
// with the exact command `npm run build:kernel` runs and requires the same bytes: a kernel source
// changed without rebuilding the module fails here.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";
import { SCAN_KERNEL_FILE } from "../../walker/scan-kernel/load-kernel.js";

const ROOT = repoRoot();

describe("the committed scan kernel module", () => {
  it("is byte for byte what build:kernel makes from walker/scan-kernel/assembly", () => {
    const scripts = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
    const [tool, ...args] = scripts["build:kernel"]!.split(" ");
    expect(tool).toBe("asc");
    const outFile = args.indexOf("--outFile") + 1;
    expect(join(ROOT, args[outFile]!)).toBe(SCAN_KERNEL_FILE);
    args[outFile] = join(mkdtempSync(join(tmpdir(), "rootwalk-kernel-")), "scan-kernel.wasm");
    execFileSync(process.execPath, [join(ROOT, "node_modules", "assemblyscript", "bin", "asc.js"), ...args], { cwd: ROOT, stdio: "pipe" });
    expect(Buffer.compare(readFileSync(args[outFile]!), readFileSync(SCAN_KERNEL_FILE))).toBe(0);
  }, 120_000);
});
