/**
 * A seeded generator of random, valid, terminating GC programs in LLVM IR (typed pointers, the
 * statepoint style: `gc "statepoint-example"`, compiled through RewriteStatepointsForGC by
 * `rootwalk run`). Each program builds object graphs with gc_alloc, keeps GC pointers live across
 * calls that can collect, and folds every value it reads into a checksum returned by rw_main; the
 * malloc-only reference runtime gives the expected checksum (oracle.ts).
 *
 * Valid by construction: functions only call functions with a higher index (plus one bounded
 * self-recursion), every loop has a constant trip count, every pointer read is of a slot the
 * generator wrote. Object layout: `slots` pointer slots at +0, then raw words; the first raw word
 * (+8*slots) holds the object's tag. Derived pointers (GEP into the raw words) are only passed
 * to gc-leaf helpers (a base reported by a stack map must be an object's address, README).
 *
 * Statements are emitted as blocks (one or more IR lines); the reducer deletes blocks.
 */

export interface FuzzFeatures {
  functions: number;
  maxArgs: number;
  recursion: boolean;
  derived: boolean;
  select: boolean;
  loops: boolean;
  collects: boolean;
  manyLive: boolean;
}

export interface GeneratedProgram {
  seed: number;
  features: FuzzFeatures;
  /** Names of the switched-on features (summary lines). */
  featureNames: string[];
  llcFlags: string[];
  optFlags: string[];
  /** The program as blocks; `render` joins them. A block may be deleted by the reducer. */
  blocks: string[];
}

/** xorshift32: the same program for the same seed on every machine. */
class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = (seed >>> 0) || 0x9e3779b9;
  }
  next(): number {
    let x = this.s;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.s = x >>> 0;
    return this.s;
  }
  int(n: number): number {
    return this.next() % n;
  }
  chance(p: number): boolean {
    return this.next() / 4294967296 < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}

const P = "i8 addrspace(1)*";

const PRELUDE = `declare void @gc_init(i8*)
declare ${P} @gc_alloc(i64, i64)
declare void @gc_safepoint()
declare void @gc_collect()
@__LLVM_StackMaps = extern_weak global i8

define internal ${P} @ld(${P} %o, i64 %i) #1 {
  %s = bitcast ${P} %o to ${P} addrspace(1)*
  %a = getelementptr ${P}, ${P} addrspace(1)* %s, i64 %i
  %v = load ${P}, ${P} addrspace(1)* %a, align 8
  ret ${P} %v
}
define internal void @st(${P} %o, i64 %i, ${P} %v) #1 {
  %s = bitcast ${P} %o to ${P} addrspace(1)*
  %a = getelementptr ${P}, ${P} addrspace(1)* %s, i64 %i
  store ${P} %v, ${P} addrspace(1)* %a, align 8
  ret void
}
define internal i64 @ldraw(${P} %o, i64 %off) #1 {
  %b = getelementptr i8, ${P} %o, i64 %off
  %p = bitcast ${P} %b to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %p, align 8
  ret i64 %v
}
define internal void @straw(${P} %o, i64 %off, i64 %v) #1 {
  %b = getelementptr i8, ${P} %o, i64 %off
  %p = bitcast ${P} %b to i64 addrspace(1)*
  store i64 %v, i64 addrspace(1)* %p, align 8
  ret void
}
define internal i64 @mix(i64 %acc, i64 %v) #1 {
  %m = mul i64 %acc, 1000003
  %r = xor i64 %m, %v
  ret i64 %r
}
define internal void @mixp(i64* %accp, i64 %v) #1 {
  %acc = load i64, i64* %accp, align 8
  %m = mul i64 %acc, 1000003
  %r = xor i64 %m, %v
  store i64 %r, i64* %accp, align 8
  ret void
}
attributes #1 = { noinline "gc-leaf-function" }
`;

/** A live GC pointer in the function being generated: its SSA name and its object's slot count. */
interface Live {
  name: string;
  slots: number;
}

interface Signature {
  name: string;
  /** Slot count of the object each pointer parameter must point at. */
  pointerParams: number[];
  intParams: number;
}

export function generateProgram(seed: number): GeneratedProgram {
  const rng = new Rng(seed);
  const features: FuzzFeatures = {
    functions: 1 + rng.int(5),
    maxArgs: rng.pick([0, 3, 6, 12]),
    recursion: rng.chance(0.4),
    derived: rng.chance(0.5),
    select: rng.chance(0.4),
    loops: rng.chance(0.5),
    collects: rng.chance(0.6),
    manyLive: rng.chance(0.3),
  };
  const llcFlags: string[] = [];
  const optFlags: string[] = [];
  const featureNames: string[] = [];
  if (rng.chance(0.3)) {
    llcFlags.push("-frame-pointer=all");
    featureNames.push("frame-pointer");
  }
  if (rng.chance(0.3)) {
    llcFlags.push("-max-registers-for-gc-values=4", "-fixup-allow-gcptr-in-csr");
    featureNames.push("gc-in-csr");
  }
  if (features.derived && rng.chance(0.5)) {
    optFlags.push("-spp-rematerialization-threshold=0");
    featureNames.push("no-remat");
  }
  featureNames.push(`functions-${features.functions}`);
  if (features.maxArgs >= 7) featureNames.push("stack-args");
  for (const f of ["recursion", "derived", "select", "loops", "collects", "manyLive"] as const) if (features[f]) featureNames.push(f);

  const signatures: Signature[] = [];
  for (let k = 0; k < features.functions; k++) {
    const total = features.maxArgs === 0 ? 0 : rng.int(features.maxArgs + 1);
    const pointers = rng.int(total + 1);
    signatures.push({ name: `f${k}`, pointerParams: Array.from({ length: pointers }, () => rng.int(3)), intParams: total - pointers });
  }

  const blocks: string[] = [PRELUDE];
  let tagCounter = seed % 1000;
  const nextTag = (): number => ++tagCounter * 7919 + 13;

  /** Generates one function's body over `pool`, starting with `acc` as the accumulator's name. */
  const body = (index: number, pool: Live[]): string[] => {
    const out: string[] = [];
    let n = 0;
    const fresh = (base: string): string => `%${base}${n++}`;
    // The checksum lives in a stack slot, folded by a leaf helper: statements do not chain through
    // SSA values, so the reducer can delete any statement whose pointers nothing else uses.
    out.push(`  %accp = alloca i64, align 8\n  store i64 ${index + 1}, i64* %accp, align 8`);
    let acc = "";
    /** Loads the checksum into a fresh value (for a condition or an argument); sets `acc`. */
    const loadAcc = (lines: string[]): void => {
      acc = fresh("acc");
      lines.push(`  ${acc} = load i64, i64* %accp, align 8`);
    };
    const fold = (value: string): string => `  call void @mixp(i64* %accp, i64 ${value})`;
    const alloc = (slots: number): { lines: string[]; live: Live } => {
      const name = fresh("p");
      const raw = 8 + 8 * rng.int(3);
      return { lines: [`  ${name} = call ${P} @gc_alloc(i64 ${slots}, i64 ${raw})`, `  call void @straw(${P} ${name}, i64 ${8 * slots}, i64 ${nextTag()})`], live: { name, slots } };
    };
    const statements = (features.manyLive ? 14 : 6) + rng.int(8);
    for (let s = 0; s < statements; s++) {
      const kind = rng.int(10);
      const lines: string[] = [];
      if (kind <= 2 || pool.length === 0) {
        const a = alloc(rng.int(3));
        lines.push(...a.lines);
        pool.push(a.live);
      } else if (kind === 3) {
        const withSlots = pool.filter((p) => p.slots > 0);
        if (withSlots.length > 0) {
          const target = rng.pick(withSlots);
          const value = rng.pick(pool);
          const slot = rng.int(target.slots);
          lines.push(`  call void @st(${P} ${target.name}, i64 ${slot}, ${P} ${value.name})`);
          // Read it back after a possible collection: the slot must have followed the object.
          lines.push(`  call void @gc_safepoint()`);
          const got = fresh("q");
          lines.push(`  ${got} = call ${P} @ld(${P} ${target.name}, i64 ${slot})`);
          const v = fresh("v");
          lines.push(`  ${v} = call i64 @ldraw(${P} ${got}, i64 ${8 * value.slots})`);
          lines.push(fold(v));
        }
      } else if (kind === 4) {
        lines.push(features.collects ? `  call void @gc_collect()` : `  call void @gc_safepoint()`);
      } else if (kind === 5 && features.derived) {
        const base = rng.pick(pool);
        const d = fresh("d");
        // The offset is not a constant (acc & 0, which opt cannot fold through @mix): a GEP with
        // constant indices costs nothing to rematerialize, so RS4GC would recompute it after the
        // call instead of reporting a (base, derived) pair.
        const zero = fresh("z");
        const off = fresh("o");
        loadAcc(lines);
        lines.push(`  ${zero} = and i64 ${acc}, 0`);
        lines.push(`  ${off} = add i64 ${zero}, ${8 * base.slots}`);
        lines.push(`  ${d} = getelementptr i8, ${P} ${base.name}, i64 ${off}`);
        lines.push(features.collects ? `  call void @gc_collect()` : `  call void @gc_safepoint()`);
        const v = fresh("v");
        lines.push(`  ${v} = call i64 @ldraw(${P} ${d}, i64 0)`);
        lines.push(fold(v));
      } else if (kind === 6 && features.select) {
        const a = rng.pick(pool);
        const same = pool.filter((p) => p.slots === a.slots);
        const b = rng.pick(same);
        const c = fresh("c");
        const sel = fresh("s");
        loadAcc(lines);
        lines.push(`  ${c} = trunc i64 ${acc} to i1`);
        lines.push(`  ${sel} = select i1 ${c}, ${P} ${a.name}, ${P} ${b.name}`);
        lines.push(`  call void @gc_safepoint()`);
        const v = fresh("v");
        lines.push(`  ${v} = call i64 @ldraw(${P} ${sel}, i64 ${8 * a.slots})`);
        lines.push(fold(v));
        pool.push({ name: sel, slots: a.slots });
      } else if (kind === 7 && index + 1 < signatures.length) {
        const callee = signatures[index + 1 + rng.int(signatures.length - index - 1)]!;
        const args: string[] = [];
        for (const slots of callee.pointerParams) {
          const candidates = pool.filter((p) => p.slots === slots);
          let arg = candidates.length > 0 ? rng.pick(candidates) : undefined;
          if (arg === undefined) {
            const a = alloc(slots);
            lines.push(...a.lines);
            pool.push(a.live);
            arg = a.live;
          }
          args.push(`${P} ${arg.name}`);
        }
        if (callee.intParams > 0) loadAcc(lines);
        for (let k = 0; k < callee.intParams; k++) args.push(`i64 ${rng.chance(0.5) ? acc : String(rng.int(1000))}`);
        const r = fresh("r");
        lines.push(`  ${r} = call i64 @${callee.name}(${args.join(", ")})`);
        lines.push(fold(r));
      } else if (kind === 8 && features.loops) {
        // A list of `count` nodes built in a loop with a safepoint per node, then folded.
        const count = 3 + rng.int(20);
        const l = `l${n++}`;
        const pre = fresh("pre");
        lines.push(`  br label %${pre.slice(1)}`);
        lines.push(`${pre.slice(1)}:`);
        lines.push(`  br label %${l}.body`);
        lines.push(`${l}.body:`);
        lines.push(`  %${l}.i = phi i64 [ 0, %${pre.slice(1)} ], [ %${l}.i1, %${l}.body ]`);
        lines.push(`  %${l}.h = phi ${P} [ null, %${pre.slice(1)} ], [ %${l}.n, %${l}.body ]`);
        lines.push(`  %${l}.n = call ${P} @gc_alloc(i64 1, i64 8)`);
        lines.push(`  call void @st(${P} %${l}.n, i64 0, ${P} %${l}.h)`);
        lines.push(`  call void @straw(${P} %${l}.n, i64 8, i64 %${l}.i)`);
        lines.push(`  call void @gc_safepoint()`);
        lines.push(`  %${l}.i1 = add i64 %${l}.i, 1`);
        lines.push(`  %${l}.c = icmp ult i64 %${l}.i1, ${count}`);
        lines.push(`  br i1 %${l}.c, label %${l}.body, label %${l}.sum`);
        lines.push(`${l}.sum:`);
        lines.push(`  %${l}.s = phi i64 [ 0, %${l}.body ], [ %${l}.s1, %${l}.sum ]`);
        lines.push(`  %${l}.p = phi ${P} [ %${l}.n, %${l}.body ], [ %${l}.nx, %${l}.sum ]`);
        lines.push(`  %${l}.v = call i64 @ldraw(${P} %${l}.p, i64 8)`);
        lines.push(`  %${l}.s1 = add i64 %${l}.s, %${l}.v`);
        lines.push(`  %${l}.nx = call ${P} @ld(${P} %${l}.p, i64 0)`);
        lines.push(`  %${l}.e = icmp eq ${P} %${l}.nx, null`);
        lines.push(`  br i1 %${l}.e, label %${l}.done, label %${l}.sum`);
        lines.push(`${l}.done:`);
        lines.push(fold(`%${l}.s1`));
      } else {
        const p = rng.pick(pool);
        const v = fresh("v");
        lines.push(`  ${v} = call i64 @ldraw(${P} ${p.name}, i64 ${8 * p.slots})`);
        lines.push(fold(v));
      }
      if (lines.length > 0) out.push(lines.join("\n"));
    }
    // Every pointer still live is read at the end (after everything that could collect).
    const finals: string[] = [];
    for (const p of pool) {
      const v = fresh("v");
      finals.push(`  ${v} = call i64 @ldraw(${P} ${p.name}, i64 ${8 * p.slots})`);
      finals.push(fold(v));
    }
    out.push(finals.join("\n"));
    const result = fresh("res");
    out.push(`  ${result} = load i64, i64* %accp, align 8\n  ret i64 ${result}`);
    return out;
  };

  for (let k = signatures.length - 1; k >= 0; k--) {
    const sig = signatures[k]!;
    const pool: Live[] = sig.pointerParams.map((slots, i) => ({ name: `%a${i}`, slots }));
    const params = [...sig.pointerParams.map((_, i) => `${P} %a${i}`), ...Array.from({ length: sig.intParams }, (_, i) => `i64 %i${i}`)];
    const lines = body(k, pool);
    // Fold the integer parameters too (they carry the caller's accumulator).
    const ints = Array.from({ length: sig.intParams }, (_, i) => `  %x${i} = call i64 @mix(i64 ${i === 0 ? "0" : `%x${i - 1}`}, i64 %i${i})`);
    const ret = lines.pop()!;
    const last = /ret i64 (%\S+)/.exec(ret)![1]!;
    const load = ret.split("\n")[0]!;
    const tail = sig.intParams > 0 ? [load, ...ints, `  %fin = call i64 @mix(i64 ${last}, i64 %x${sig.intParams - 1})`, `  ret i64 %fin`] : [ret];
    blocks.push(`define internal i64 @${sig.name}(${params.join(", ")}) gc "statepoint-example" {\nentry:`);
    blocks.push(...lines, tail.join("\n"), "}");
  }
  if (features.recursion) {
    const depth = 5 + (seed % 40);
    blocks.push(`define internal i64 @rec(i64 %d, ${P} %up) gc "statepoint-example" {
entry:
  %o = call ${P} @gc_alloc(i64 1, i64 8)
  call void @st(${P} %o, i64 0, ${P} %up)
  call void @straw(${P} %o, i64 8, i64 %d)
  %z = icmp eq i64 %d, 0
  br i1 %z, label %bottom, label %deeper
bottom:
  call void @gc_collect()
  br label %out
deeper:
  %d1 = sub i64 %d, 1
  %r = call i64 @rec(i64 %d1, ${P} %o)
  br label %out
out:
  %below = phi i64 [ 0, %bottom ], [ %r, %deeper ]
  %mine = call i64 @ldraw(${P} %o, i64 8)
  %u = call ${P} @ld(${P} %o, i64 0)
  %uv = call i64 @ldraw(${P} %u, i64 8)
  %a = call i64 @mix(i64 %below, i64 %mine)
  %b = call i64 @mix(i64 %a, i64 %uv)
  ret i64 %b
}`);
    blocks.push(`define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %top = call ${P} @gc_alloc(i64 1, i64 8)
  call void @straw(${P} %top, i64 8, i64 ${depth + 1})
  %r0 = call i64 @rec(i64 ${depth}, ${P} %top)`);
  } else {
    blocks.push(`define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %r0 = add i64 0, 0`);
  }
  const f0 = signatures[0]!;
  const mainArgs: string[] = [];
  const mainLines: string[] = [];
  f0.pointerParams.forEach((slots, i) => {
    mainLines.push(`  %m${i} = call ${P} @gc_alloc(i64 ${slots}, i64 8)`, `  call void @straw(${P} %m${i}, i64 ${8 * slots}, i64 ${nextTag()})`);
    mainArgs.push(`${P} %m${i}`);
  });
  for (let i = 0; i < f0.intParams; i++) mainArgs.push(`i64 ${i * 17 + 3}`);
  blocks.push(`${mainLines.join("\n")}
  %r1 = call i64 @f0(${mainArgs.join(", ")})
  %res = call i64 @mix(i64 %r0, i64 %r1)
  ret i64 %res
}`);
  return { seed, features, featureNames, llcFlags, optFlags, blocks };
}

export function renderProgram(p: GeneratedProgram, blocks: readonly string[] = p.blocks): string {
  return `; rootwalk fuzz program, seed ${p.seed}: ${p.featureNames.join(", ")}
; llc flags: ${p.llcFlags.join(" ") || "(none)"}; opt flags: ${p.optFlags.join(" ") || "(none)"}
source_filename = "fuzz-${p.seed}"

${blocks.join("\n")}
`;
}
