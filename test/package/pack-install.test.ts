// The package as a user gets it: `npm pack`, installed from the tarball into an empty folder, then
// the public API imported from plain ESM, a .mts consumer type-checked, and the `rootwalk` bin run;
// and installed into a default `npm init -y` project (CommonJS), used through require.
// Nothing may be written inside the installed package: its caches go to ROOTWALK_CACHE_DIR.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runtimeSources } from "../../src/native/build-runtime.js";
import { llvmInstallCommand } from "../../src/toolchain/llvm-selection.js";
import { repoRoot } from "../../src/toolchain/llvm-toolchain.js";

const ROOT = repoRoot();
const work = mkdtempSync(join(tmpdir(), "rootwalk-pack-"));
const app = join(work, "app");
const userCache = join(work, "user-cache");
const installed = join(app, "node_modules", "rootwalk");
const commonJsApp = join(work, "cjs-app");
let tarballPath = "";
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

function sh(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  return execFileSync(command, args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20 });
}

beforeAll(() => {
  // `npm pack` runs the prepare script (tsc build) first, as a publish would.
  const tarball = sh(npm, ["pack", "--silent", "--pack-destination", work], ROOT).trim().split("\n").at(-1)!;
  execFileSync("mkdir", ["-p", app]);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", type: "module", private: true }));
  tarballPath = join(work, tarball);
  sh(npm, ["install", "--prefer-offline", "--no-audit", "--no-fund", "--silent", tarballPath], app);
}, 300_000);

describe("the packed and installed package", () => {
  it("ships the built walker/ and gc/ and the native sources the runtime and plugin build from", () => {
    for (const file of [
      "dist/src/index.js",
      "dist/src/index.d.ts",
      "dist/walker/unwinder.js",
      "dist/gc/immix-collector.js",
      "dist/walker/scan-kernel/scan-kernel.wasm",
      ...Object.values(runtimeSources())
        .flat()
        .map((path) => relative(ROOT, path)),
      "src/demo/demo-trees-statepoint.ll",
    ]) {
      expect(existsSync(join(installed, file)), file).toBe(true);
    }
    expect(readdirSync(join(installed, "src", "plimmix-plugin")).some((f) => f.endsWith(".cpp"))).toBe(true);
  });

  it("ships the walk snapshot's JSON Schema and an example the installed bin walks (test/ is not in the tarball)", () => {
    for (const file of ["schemas/stack-snapshot.schema.json", "schemas/stack-snapshot.example.json"])
      expect(existsSync(join(installed, file)), file).toBe(true);
    const bin = join(app, "node_modules", ".bin", "rootwalk");
    const walked = sh(bin, ["walk", join(installed, "schemas", "stack-snapshot.example.json"), "--json"], app, {
      ...process.env,
      ROOTWALK_CACHE_DIR: userCache,
    });
    expect(JSON.parse(walked)).toMatchObject({
      frames: 2,
      roots: [
        { slot: "0x7010", value: "0x50000000" },
        { slot: "0x7028", value: "0x50000040" },
      ],
    });
  });

  it("loads the scan kernel with no AssemblyScript installed, and a sim's scans run on it", () => {
    expect(existsSync(join(app, "node_modules", "assemblyscript"))).toBe(false);
    const loader = join(installed, "dist", "walker", "scan-kernel", "load-kernel.js");
    const loaded = sh(
      process.execPath,
      ["--input-type=module", "-e", `import { scanKernel } from ${JSON.stringify(loader)}; console.log(typeof scanKernel());`],
      app,
    );
    expect(loaded.trim()).toBe("function");
    const bin = join(app, "node_modules", ".bin", "rootwalk");
    const sim = sh(bin, ["sim", "--workload", "deep-recursion", "--stress", "--verify", "--scale", "0.005", "--json"], app, {
      ...process.env,
      ROOTWALK_CACHE_DIR: userCache,
      ROOTWALK_SCAN_CROSSCHECK: "1",
    });
    expect(JSON.parse(sim)).toMatchObject({ verifyFailures: 0, collections: expect.any(Number) as number });
  });

  it("imports the public API from plain ESM", () => {
    writeFileSync(
      join(app, "use.mjs"),
      `import { SafepointRegistry, ImmixCollector, StackRootScanner, SimulatedMemory } from "rootwalk";
console.log([SafepointRegistry, ImmixCollector, StackRootScanner, SimulatedMemory].map((f) => typeof f).join(","));`,
    );
    expect(sh(process.execPath, ["use.mjs"], app).trim()).toBe("function,function,function,function");
  });

  it("type-checks a .mts consumer against the shipped declarations", () => {
    writeFileSync(
      join(app, "use.mts"),
      `import { SafepointRegistry, type SafepointDescription, type WalkResult } from "rootwalk";
const registry: SafepointRegistry = new SafepointRegistry();
const described: SafepointDescription[] = [];
const walked: WalkResult | undefined = undefined;
export { registry, described, walked };`,
    );
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const r = spawnSync(
      process.execPath,
      [
        tsc,
        "--noEmit",
        "--strict",
        "--skipLibCheck",
        "--module",
        "nodenext",
        "--moduleResolution",
        "nodenext",
        "--target",
        "es2022",
        "--types",
        "node",
        "--typeRoots",
        join(ROOT, "node_modules", "@types"),
        "use.mts",
      ],
      { cwd: app, encoding: "utf8" },
    );
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("type-checks with the shipped declarations checked too, in a consumer without @types/node", () => {
    // A TypeScript consumer need not install @types/node: the shipped declarations must
    // not name Node's global namespace (NodeJS.ProcessEnv once made this fail in llvm-toolchain.d.ts).
    writeFileSync(
      join(app, "use-plain.mts"),
      `import { SafepointRegistry, listSafepoints } from "rootwalk";\nexport const n: number = listSafepoints(new SafepointRegistry().snapshot()).length;\n`,
    );
    writeFileSync(
      join(app, "tsconfig.plain.json"),
      JSON.stringify({
        compilerOptions: { noEmit: true, strict: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", types: [], typeRoots: [] },
        files: ["use-plain.mts"],
      }),
    );
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const r = spawnSync(process.execPath, [tsc, "-p", "tsconfig.plain.json"], { cwd: app, encoding: "utf8" });
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("runs the README's library example verbatim", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Use as a library"));
    const code = /```js\n([^]*?)```/.exec(section)![1]!;
    writeFileSync(join(app, "example.mjs"), code);
    sh(
      process.execPath,
      [join(installed, "dist", "src", "cli", "main.js"), "compile", "--statepoint", join(ROOT, "test", "ll", "call-chain.ll"), "-o", join(app, "call-chain.o")],
      app,
      { ...process.env, ROOTWALK_CACHE_DIR: userCache },
    );
    const out = sh(process.execPath, ["example.mjs"], app).trim().split("\n");
    expect(out[0]).toMatch(/^\w+ at 0x[0-9a-f]+: frame \d+ bytes, root at \[sp\+\d+\]$/);
    expect(out.slice(1)).toEqual([expect.stringMatching(/^frame 0: root at 0x700001[0-9a-f]{2} = 0x12345000$/)]);
  });

  it("without the LLVM it needs, rootwalk run says what to install in one line; the package ships that script and the docs", () => {
    for (const file of ["scripts/system-packages", "docs/cli.md", "docs/install.md", "docs/snapshot-format.md"])
      expect(existsSync(join(installed, file)), file).toBe(true);
    const bin = join(app, "node_modules", ".bin", "rootwalk");
    const r = spawnSync(bin, ["run", join(ROOT, "test", "ll", "call-chain.ll")], {
      cwd: app,
      encoding: "utf8",
      env: { ...process.env, ROOTWALK_CACHE_DIR: userCache, ROOTWALK_LLVM: "15" },
    });
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(`install it with: ${llvmInstallCommand(15)} (in a rootwalk checkout: bash scripts/system-packages --install start)`);
    const listed = spawnSync("bash", [join(installed, "scripts", "system-packages"), "--list", "start"], { cwd: app, encoding: "utf8" });
    expect(listed.stdout.trim()).toBe("gcc g++ llvm-19 llvm-19-tools llvm-19-dev");
  });

  it("runs the installed bin: --version, help, and a compile that caches outside the package", () => {
    const env = { ...process.env, ROOTWALK_CACHE_DIR: userCache };
    expect(sh(npm, ["exec", "--", "rootwalk", "--version"], app, env)).toMatch(/^rootwalk 0\.\d+\.\d+\nLLVM \d+\./);
    expect(sh(npm, ["exec", "--", "rootwalk", "help", "run"], app, env)).toMatch(/^usage: rootwalk run PROGRAM/);
    const out = join(app, "call-chain.o");
    sh(npm, ["exec", "--", "rootwalk", "compile", "--statepoint", join(ROOT, "test", "ll", "call-chain.ll"), "-o", out], app, env);
    expect(existsSync(out)).toBe(true);
    expect(readdirSync(join(userCache, "objects")).length).toBeGreaterThan(0);
    expect(existsSync(join(installed, ".cache"))).toBe(false);
  });
});

/*
 * A default `npm init -y` project is CommonJS: a .ts compiled there turns `import ... from
 * "rootwalk"` into require("rootwalk"). The package exported only an "import" condition, so that
 * compiled and then failed at run time (ERR_PACKAGE_PATH_NOT_EXPORTED, no hint). Node 20.19+
 * loads an ES module by require (the package has no top-level await): it must work, under both
 * TypeScript resolutions a CommonJS project uses (nodenext, and the classic commonjs/node10).
 */
describe("the installed package from CommonJS (a default npm init -y project)", () => {
  beforeAll(() => {
    execFileSync("mkdir", ["-p", commonJsApp]);
    sh(npm, ["init", "-y"], commonJsApp);
    sh(npm, ["install", "--prefer-offline", "--no-audit", "--no-fund", "--silent", tarballPath], commonJsApp);
  }, 300_000);

  const USE_TS = `import { SafepointRegistry, listSafepoints, walkStack } from "rootwalk";
console.log([typeof SafepointRegistry, typeof walkStack, listSafepoints(new SafepointRegistry().snapshot()).length].join(","));
`;

  it('is a CommonJS project, and require("rootwalk") gives the public API', () => {
    expect((JSON.parse(readFileSync(join(commonJsApp, "package.json"), "utf8")) as { type?: string }).type ?? "commonjs").toBe("commonjs");
    writeFileSync(
      join(commonJsApp, "use.cjs"),
      `const { SafepointRegistry, ImmixCollector } = require("rootwalk");\nconsole.log(typeof SafepointRegistry, typeof ImmixCollector);\n`,
    );
    const r = spawnSync(process.execPath, ["use.cjs"], { cwd: commonJsApp, encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe("function function");
  });

  it.each([
    ["nodenext", ["--module", "nodenext", "--moduleResolution", "nodenext"]],
    ["commonjs (node10 resolution)", ["--module", "commonjs", "--moduleResolution", "node10"]],
  ])("a .ts compiled as CommonJS (--module %s) type-checks, and runs", (_name, moduleFlags) => {
    writeFileSync(join(commonJsApp, "use.ts"), USE_TS);
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const flags = ["--strict", "--skipLibCheck", "--target", "es2022", "--types", "node", "--typeRoots", join(ROOT, "node_modules", "@types")];
    const compiled = spawnSync(process.execPath, [tsc, ...moduleFlags, ...flags, "use.ts"], { cwd: commonJsApp, encoding: "utf8" });
    expect(compiled.stdout + compiled.stderr).toBe("");
    expect(readFileSync(join(commonJsApp, "use.js"), "utf8")).toContain('require("rootwalk")');
    const r = spawnSync(process.execPath, ["use.js"], { cwd: commonJsApp, encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe("function,function,0");
  });
});
