/**
 * A tiny `_GC_MAP_` v1 encoder for tests (layout: src/stackmap/plimmix-map.ts). It writes what it
 * is told, valid or not, so that tests can build every malformed variant by changing one field.
 */
export interface PlimmixFunctionSpec {
  address: number | bigint;
  /** In 8-byte words; -1 for a dynamic frame. */
  frameWords: number;
  stackArgs?: number;
  safepoints: readonly (number | bigint)[];
  roots: readonly { offset: number; type: number }[];
  /** Override the stored counts (to build inconsistent records). */
  numRoots?: number;
  numSafepoints?: number;
}

export interface PlimmixSpec {
  version?: number;
  versionHigh?: number;
  padding?: number;
  numFunctions?: number;
  functions: readonly PlimmixFunctionSpec[];
  globals?: readonly (number | bigint)[];
  numGlobals?: number;
  globalsPadding?: number;
}

export function encodePlimmix(spec: PlimmixSpec): Uint8Array {
  const words: number[] = []; // u32 words
  const u64 = (value: number | bigint): void => {
    const v = BigInt.asUintN(64, BigInt(value));
    words.push(Number(v & 0xffff_ffffn), Number(v >> 32n));
  };
  words.push(spec.version ?? 1, spec.versionHigh ?? 0, spec.numFunctions ?? spec.functions.length, spec.padding ?? 0);
  for (const f of spec.functions) {
    u64(f.address);
    words.push(f.frameWords, f.stackArgs ?? 0, f.numRoots ?? f.roots.length, f.numSafepoints ?? f.safepoints.length);
    for (const s of f.safepoints) u64(s);
    for (const r of f.roots) words.push(r.offset, r.type);
  }
  const globals = spec.globals ?? [];
  words.push(spec.numGlobals ?? globals.length, spec.globalsPadding ?? 0);
  for (const g of globals) u64(g);
  const bytes = new Uint8Array(words.length * 4);
  const view = new DataView(bytes.buffer);
  words.forEach((w, i) => view.setUint32(i * 4, w >>> 0, true));
  return bytes;
}

/** Offset of function record `f` (counts as encoded). */
export function functionOffsetOf(spec: PlimmixSpec, f: number): number {
  let at = 16;
  for (let i = 0; i < f; i++) at += 24 + 8 * spec.functions[i]!.safepoints.length + 8 * spec.functions[i]!.roots.length;
  return at;
}

/** Offset of the global root count. */
export function globalsOffsetOf(spec: PlimmixSpec): number {
  return functionOffsetOf(spec, spec.functions.length);
}

/**
 * Three functions the decoder, loader and fuzz tests share: a static 24-byte frame with two
 * safepoints and a POINTER and a TRAIT root; a dynamic frame with RBP-relative COMPLEX and ATOMIC
 * roots; a function without safepoints or roots.
 */
export const THREE_FUNCTIONS: readonly PlimmixFunctionSpec[] = [
  {
    address: 0x40_1000,
    frameWords: 3,
    stackArgs: 2,
    safepoints: [0x40_1010, 0x40_1020],
    roots: [
      { offset: 0, type: 3 },
      { offset: 8, type: 1 },
    ],
  },
  {
    address: 0x40_1100,
    frameWords: -1,
    safepoints: [0x40_1130],
    roots: [
      { offset: -24, type: 2 },
      { offset: -32, type: 0 },
    ],
  },
  { address: 0x40_1200, frameWords: 1, safepoints: [], roots: [] },
];
