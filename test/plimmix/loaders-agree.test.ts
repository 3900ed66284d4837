import { activeLlvm } from "../../src/toolchain/llvm-selection.js";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadOcamlFromElf } from "../../src/loader/ocaml-loader.js";
import { loadPlimmixFromElf } from "../../src/loader/plimmix-loader.js";
import { FLAG_DYNAMIC_FRAME, type FrameDescriptors } from "../../src/safepoints/frame-descriptors.js";
import { buildPlimmixPlugin, compilePlimmix } from "../../src/toolchain/plimmix-plugin.js";
import { compileToObject } from "../../src/toolchain/llvm-toolchain.js";
import { PROGRAMS, ocamlSource, programPath, scratchDir } from "./programs.js";

/*
 * Every gcroot program compiled with the plimmix plugin and, as a peer, with LLVM's built-in
 * gc "ocaml" printer (same llc, plugin loaded so the code is identical), loaded by rootwalk's own
 * loaders: for every safepoint the same return address, the same frame size (plimmix words * 8 ==
 * OCaml bytes, both excluding the return address) and the same roots (both are loaded relative to
 * the CFA, which also undoes OCaml's RBP-relative offsets in frame-pointer functions).
 */
function summary(d: FrameDescriptors): Map<number, { stackSizeBytes: number; frameSizeBytes: number; roots: number[] }> {
  const out = new Map<number, { stackSizeBytes: number; frameSizeBytes: number; roots: number[] }>();
  for (let i = 0; i < d.count; i++) {
    const roots: number[] = [];
    for (let p = 0; p < d.pairCount[i]!; p++) {
      const loc = d.pairs[(d.pairStart[i]! + p) * 2]!;
      roots.push(d.locations[loc * 2 + 1]!);
    }
    out.set(d.returnAddress[i]!, { stackSizeBytes: d.stackSizeBytes[i]!, frameSizeBytes: d.frameSizeBytes[i]!, roots: roots.sort((a, b) => a - b) });
  }
  return out;
}

describe("plimmix and OCaml maps of the same programs agree", () => {
  const plugin = buildPlimmixPlugin();
  let compared = 0;
  for (const entry of PROGRAMS) {
    for (const flags of [["-O2"], ["-O2", "-frame-pointer=all"]]) {
      it(`${entry.name} ${flags.join(" ")}`, () => {
        const plimmixObject = compilePlimmix(programPath(entry), { llcFlags: flags });
        const plimmix = loadPlimmixFromElf(readFileSync(plimmixObject), plimmixObject);
        if (entry.ocaml === "rejected") {
          // LLVM's OCaml printer aborts on dynamic frames; plimmix records them as -1.
          expect(plimmix).toBeDefined();
          const d = plimmix!.descriptors;
          expect([...Array(d.count).keys()].some((i) => (d.flags[i]! & FLAG_DYNAMIC_FRAME) !== 0)).toBe(true);
          return;
        }
        const ocamlObject = compileToObject(ocamlSource(entry), { llcFlags: [`-load=${plugin}`, ...flags], cacheDir: scratchDir("objects") });
        const ocaml = loadOcamlFromElf(readFileSync(ocamlObject), ocamlObject);
        if (entry.ocaml === "none") {
          expect(ocaml).toBeUndefined();
          return;
        }
        const p = summary(plimmix!.descriptors);
        const o = summary(ocaml!.descriptors);
        // plimmix also lists functions without safepoints; OCaml only safepoints: compare those.
        expect([...o.keys()].sort()).toEqual([...p.keys()].sort());
        for (const [ra, mine] of p) expect(o.get(ra), `safepoint 0x${ra.toString(16)}`).toEqual(mine);
        compared += p.size;
      });
    }
  }
  it("compared safepoints in most programs", () => {
    console.log(`plimmix vs ocaml (LLVM ${activeLlvm().version}): ${compared} safepoints compared`);
    expect(compared).toBeGreaterThan(20);
  });
});
