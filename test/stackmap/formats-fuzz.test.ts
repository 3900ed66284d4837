import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ByteView } from "../../src/bytes/byte-view.js";
import { RootwalkError } from "../../src/errors.js";
import { buildOcamlDescriptors, loadOcamlFromElf } from "../../src/loader/ocaml-loader.js";
import { buildPlimmixDescriptors, loadPlimmixFromElf } from "../../src/loader/plimmix-loader.js";
import { SafepointRegistry } from "../../src/safepoints/registry.js";
import { OcamlFrametable } from "../../src/stackmap/ocaml-frametable.js";
import { PlimmixMap, parsePlimmixBlob, plimmixMapLength } from "../../src/stackmap/plimmix-map.js";
import { type FuzzTarget, runFuzz, expectCleanFuzz } from "../fuzz/fuzz-targets.js";
import { assembleFormatsAsm } from "../support/compile-formats.js";
import { OCAML_SOURCES, encodeOcaml, ocamlFixture } from "../support/ocaml-fixtures.js";
import { encodePlimmix, THREE_FUNCTIONS } from "./plimmix-encoder.js";

/*
 * Mutated `_GC_MAP_` blobs, OCaml frame tables and the ELF files holding them must end in a
 * RootwalkError or a successful load, never another exception (a RangeError is an out-of-bounds
 * read) and never a hang; test/fuzz/ (Rng, mutate, runFuzz) drives it. ROOTWALK_FUZZ_CASES cases
 * per target (default 3000).
 */
const CASES = Number(process.env.ROOTWALK_FUZZ_CASES ?? 3000);
const SEED = Number(process.env.ROOTWALK_FUZZ_SEED ?? 1);

function register(descriptors: Parameters<SafepointRegistry["register"]>[0]["descriptors"], format: "plimmix-v1" | "ocaml"): void {
  new SafepointRegistry().register({ name: "fuzz", format, descriptors, loadBias: 0x7f00_0000_0000, contentKey: "fuzz" });
}

/** A blob all the way into a registry, and its length walked over the same bytes as memory. */
const plimmixTarget: FuzzTarget = (bytes) => {
  // The length walk may only read whole words below the bound: a DataView over exactly the
  // bytes throws a RangeError (a failure) if it ever reads past them.
  const words = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const base = 0x10_0000;
  let walked: number | undefined;
  try {
    walked = plimmixMapLength((a) => words.getBigUint64(a - base, true), base, bytes.byteLength);
  } catch (e) {
    if (!(e instanceof RootwalkError)) throw e;
  }
  const map = parsePlimmixBlob(bytes);
  expect(walked).toBe(map.sizeBytes);
  register(buildPlimmixDescriptors([map]), "plimmix-v1");
};

const ocamlTarget: FuzzTarget = (bytes) => {
  const table = OcamlFrametable.parse(new ByteView(bytes), 0);
  register(buildOcamlDescriptors(table), "ocaml");
};

const elfTarget: FuzzTarget = (bytes) => {
  const ocaml = loadOcamlFromElf(bytes, "fuzz.o");
  if (ocaml !== undefined) register(ocaml.descriptors, "ocaml");
  const plimmix = loadPlimmixFromElf(bytes, "fuzz.o");
  if (plimmix !== undefined) register(plimmix.descriptors, "plimmix-v1");
};

const plimmixSeeds = [
  encodePlimmix({ functions: [] }),
  encodePlimmix({
    functions: [...THREE_FUNCTIONS],
    globals: [0x40_4000, 0x40_4008],
  }),
  encodePlimmix({
    functions: Array.from({ length: 8 }, (_, f) => ({
      address: 0x50_0000 + f * 0x100,
      frameWords: f + 1,
      safepoints: Array.from({ length: f % 3 }, (_, s) => 0x50_0000 + f * 0x100 + 0x10 * (s + 1)),
      roots: Array.from({ length: f % 4 }, (_, r) => ({ offset: 8 * (r % (f + 1)), type: r % 4 })),
    })),
    globals: [0x60_0000],
  }),
];

const ocamlFixtures = OCAML_SOURCES.map(ocamlFixture);
const ocamlSeeds = [
  ...ocamlFixtures.map((f) => new Uint8Array(loadOcamlFromElf(f.bytes, f.path)!.tables[0]!.view.bytes)),
  encodeOcaml([
    { returnAddress: 0x1013, frameSize: 8, live: [0] },
    { returnAddress: 0x1066, frameSize: 40, live: [-24, -16, -8] },
  ]),
];
const elfSeeds = [...ocamlFixtures.map((f) => f.bytes), readFileSync(assembleFormatsAsm("plimmix-handwritten.s"))];

describe("fuzzing the plimmix and OCaml decoders and loaders", () => {
  it(
    `_GC_MAP_ blobs: ${CASES} mutations`,
    () => {
      expectCleanFuzz("_GC_MAP_", runFuzz(plimmixTarget, plimmixSeeds, CASES, SEED + 2_000_000));
    },
    Math.max(60_000, CASES * 5),
  );

  it(
    `OCaml frame tables: ${CASES} mutations`,
    () => {
      expectCleanFuzz("frametables", runFuzz(ocamlTarget, ocamlSeeds, CASES, SEED + 3_000_000));
    },
    Math.max(60_000, CASES * 5),
  );

  it(
    `ELF files with either: ${CASES} mutations`,
    () => {
      expectCleanFuzz("objects", runFuzz(elfTarget, elfSeeds, CASES, SEED + 4_000_000));
    },
    Math.max(60_000, CASES * 20),
  );

  it("every truncation of every seed is a typed error", () => {
    for (const [target, seeds] of [
      [plimmixTarget, plimmixSeeds],
      [ocamlTarget, ocamlSeeds],
    ] as const) {
      for (const seed of seeds) {
        for (let length = 0; length < seed.length; length++) {
          const report = runFuzz((b) => target(b.subarray(0, length)), [seed], 1, length);
          expect(report.failures).toEqual([]);
          expect(() =>
            target === plimmixTarget
              ? PlimmixMap.parse(new ByteView(seed.subarray(0, length)), 0)
              : OcamlFrametable.parse(new ByteView(seed.subarray(0, length)), 0),
          ).toThrow();
        }
      }
    }
  });
});
