// `npm start`'s build step: rebuilds only what is out of date, so a start right after `npm ci`
// (whose `prepare` just built everything) goes straight to the demo.
//   node scripts/build-if-stale.mjs          build the stale parts, say which, then mark
//   node scripts/build-if-stale.mjs --mark   record that everything was just built (`npm run build`)
// Invariant: dist/.build-stamp is written only after a complete build, so a stamp newer than every
// TypeScript input means dist/ holds their output. The scan kernel's module is rebuilt (asc, about
// 40 s) only when a source under walker/scan-kernel/assembly/ is newer than the module itself.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync, writeFileSync, mkdirSync, copyFileSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

process.chdir(join(dirname(fileURLToPath(import.meta.url)), ".."));
const STAMP = "dist/.build-stamp";
const KERNEL_SOURCES = "walker/scan-kernel/assembly";
const KERNEL = "walker/scan-kernel/scan-kernel.wasm";
const KERNEL_COPY = "dist/walker/scan-kernel/scan-kernel.wasm";
const TS_INPUTS = ["src", "gc", "walker", "tsconfig.json", "tsconfig.build.json", "package.json"];

/** The newest modification time (ms) of a file or of every file under a folder; 0 if absent. */
function newestMs(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMs(join(path, entry)));
  return newest;
}

function mtimeMs(path) {
  return existsSync(path) ? statSync(path).mtimeMs : 0;
}

function run(what, command, args) {
  process.stderr.write(`rootwalk: ${what}\n`);
  execFileSync(command, args, { stdio: "inherit" });
}

function mark() {
  mkdirSync("dist", { recursive: true });
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
}

if (process.argv.includes("--mark")) {
  mark();
} else {
  const npx = process.platform === "win32" ? "npx.cmd" : "npx";
  let built = false;
  if (newestMs(KERNEL_SOURCES) > mtimeMs(KERNEL)) {
    run("rebuilding the scan kernel (its AssemblyScript source changed; about 40 s)", "npm", ["run", "--silent", "build:kernel"]);
    built = true;
  }
  if (TS_INPUTS.some((input) => newestMs(input) > mtimeMs(STAMP))) {
    run("rebuilding dist/ (TypeScript changed since the last build)", npx, ["tsc", "-p", "tsconfig.build.json"]);
    built = true;
  }
  if (mtimeMs(KERNEL) > mtimeMs(KERNEL_COPY)) {
    mkdirSync("dist/walker/scan-kernel", { recursive: true });
    copyFileSync(KERNEL, KERNEL_COPY);
  }
  if (built || !existsSync(STAMP)) mark();
}
