/**
 * A seeded generator of random, valid, terminating GC programs in LLVM IR (typed pointers), in
 * both styles rootwalk runs:
 *  - statepoint: `gc "statepoint-example"`, GC pointers are SSA values in addrspace(1), compiled
 *    through RewriteStatepointsForGC by `rootwalk run`;
 *  - plimmix (gcroot): `gc "plimmix"`, every GC pointer that lives across a call is kept in an
 *    entry-block alloca registered with llvm.gcroot and reloaded after each call that can collect.
 * Each program builds object graphs with gc_alloc, keeps GC pointers live across calls that can
 * collect, and folds every value it reads into a checksum returned by rw_main; the malloc-only
 * reference runtime gives the expected checksum (oracle.ts).
 *
 * Valid by construction: functions only call functions with a higher index (plus one bounded
 * self-recursion), every loop has a constant trip count, every pointer read is of a slot the
 * generator wrote. Object layout: `slots` pointer slots at +0, then raw words; the first raw word
 * (+8*slots) holds the object's tag. Derived pointers (GEP into the raw words) are only passed
 * to gc-leaf helpers (a base reported by a stack map must be an object's address, README). With
 * threads, every thread computes from its own objects only (no globals), so the checksum does not
 * depend on scheduling; a stuck region touches no heap object (the collector may move them).
 *
 * Statements are emitted as blocks (one or more IR lines); the reducer deletes blocks.
 */

export type FuzzStyle = "statepoint" | "plimmix";

export interface FuzzFeatures {
  style: FuzzStyle;
  functions: number;
  maxArgs: number;
  recursion: boolean;
  /** Derived pointers (statepoint only: the gcroot style has no derived roots). */
  derived: boolean;
  select: boolean;
  loops: boolean;
  collects: boolean;
  manyLive: boolean;
  /** Globals registered with gc_add_global (0 = none; never with threads). */
  globals: number;
  /** Mutator threads started with gc_thread_start besides the main one (0 = single-threaded). */
  threads: number;
  /** thread_stuck_start / thread_stuck_end regions around integer-only work. */
  stuck: boolean;
  dynamicAlloca: boolean;
  /** Alignment of an entry-block alloca above the stack's 16 (0 = none): a realigned frame. */
  overAlignBytes: number;
  /** Calls to generated functions as `invoke` with a cleanup landing pad (never taken). */
  invokes: boolean;
  optLevel: "O0" | "O2" | "O3";
}

export interface GeneratedProgram {
  seed: number;
  features: FuzzFeatures;
  /** Names of the switched-on features (summary lines); the style's name is the first. */
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
    // Neighbouring small seeds start far apart (xorshift's first outputs of a small state are small).
    this.s = Math.imul((seed >>> 0) ^ 0x5bd1e995, 0x9e3779b1) >>> 0 || 0x9e3779b9;
    for (let k = 0; k < 4; k++) this.next();
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

/** The IR spelling of one style: its pointer types, its strategy and how rw_main finds its map. */
interface Dialect {
  /** A GC pointer. */
  P: string;
  /** A pointer to a GC pointer slot inside an object. */
  slotPtr: string;
  /** A pointer to a raw word inside an object. */
  rawPtr: string;
  gc: string;
  mapDeclaration: string;
  mapArgument: string;
}

function dialectFor(style: FuzzStyle, seed: number): Dialect {
  if (style === "statepoint") {
    const P = "i8 addrspace(1)*";
    return {
      P,
      slotPtr: `${P} addrspace(1)*`,
      rawPtr: "i64 addrspace(1)*",
      gc: `gc "statepoint-example"`,
      mapDeclaration: "@__LLVM_StackMaps = extern_weak global i8",
      mapArgument: "i8* @__LLVM_StackMaps",
    };
  }
  // The plimmix plugin names its map `_GC_MAP_` + source_filename (renderProgram: "fuzz-SEED").
  return {
    P: "i8*",
    slotPtr: "i8**",
    rawPtr: "i64*",
    gc: `gc "plimmix"`,
    mapDeclaration: `@"_GC_MAP_fuzz-${seed}" = external global i8`,
    mapArgument: `i8* @"_GC_MAP_fuzz-${seed}"`,
  };
}

function prelude(d: Dialect): string {
  const { P } = d;
  return `declare void @gc_init(i8*)
declare ${P} @gc_alloc(i64, i64)
declare void @gc_safepoint()
declare void @gc_collect()
declare void @gc_add_global(${P}*)
declare i64 @gc_thread_start(void (i64)*, i64)
declare void @gc_thread_join(i64)
declare void @thread_stuck_start()
declare void @thread_stuck_end()
declare void @llvm.gcroot(i8**, i8*)
declare void @gc_write_barrier(${P}) #1
${d.mapDeclaration}

define internal ${P} @ld(${P} %o, i64 %i) #1 {
  %s = bitcast ${P} %o to ${d.slotPtr}
  %a = getelementptr ${P}, ${d.slotPtr} %s, i64 %i
  %v = load ${P}, ${d.slotPtr} %a, align 8
  ret ${P} %v
}
define internal void @st(${P} %o, i64 %i, ${P} %v) #1 {
  %s = bitcast ${P} %o to ${d.slotPtr}
  %a = getelementptr ${P}, ${d.slotPtr} %s, i64 %i
  store ${P} %v, ${d.slotPtr} %a, align 8
  call void @gc_write_barrier(${P} %o)
  ret void
}
define internal i64 @ldraw(${P} %o, i64 %off) #1 {
  %b = getelementptr i8, ${P} %o, i64 %off
  %p = bitcast ${P} %b to ${d.rawPtr}
  %v = load i64, ${d.rawPtr} %p, align 8
  ret i64 %v
}
define internal i64 @ldraw_or0(${P} %o, i64 %off) #1 {
entry:
  %n = icmp eq ${P} %o, null
  br i1 %n, label %none, label %some
none:
  ret i64 0
some:
  %b = getelementptr i8, ${P} %o, i64 %off
  %p = bitcast ${P} %b to ${d.rawPtr}
  %v = load i64, ${d.rawPtr} %p, align 8
  ret i64 %v
}
define internal void @straw(${P} %o, i64 %off, i64 %v) #1 {
  %b = getelementptr i8, ${P} %o, i64 %off
  %p = bitcast ${P} %b to ${d.rawPtr}
  store i64 %v, ${d.rawPtr} %p, align 8
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
define internal i32 @rw_personality(...) {
  ret i32 0
}
@results = global [4 x i64] zeroinitializer, align 8
attributes #1 = { noinline "gc-leaf-function" }
`;
}

/**
 * A GC pointer in the function being generated and its object's slot count. Statepoint: `name`
 * is the SSA value. Plimmix: `name` is the gcroot alloca holding it (reloaded before each use).
 */
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

/** Per-function naming and root bookkeeping shared by the statement generators. */
class FunctionScope {
  private counter = 0;
  /** Entry-block lines: gcroot allocas (plimmix), the over-aligned buffer. */
  readonly entryLines: string[] = [];
  constructor(
    readonly d: Dialect,
    readonly style: FuzzStyle,
  ) {}
  fresh(base: string): string {
    return `%${base}${this.counter++}`;
  }
  label(): string {
    return `l${this.counter++}`;
  }
  /** A value of `p` valid at this point (plimmix: reloaded from its root). */
  use(p: Live, lines: string[]): string {
    if (this.style === "statepoint") return p.name;
    const t = this.fresh("t");
    lines.push(`  ${t} = load i8*, i8** ${p.name}, align 8`);
    return t;
  }
  /** Keeps `value` live across collections (plimmix: stores it into a fresh root). */
  bind(value: string, slots: number, lines: string[]): Live {
    if (this.style === "statepoint") return { name: value, slots };
    const root = this.fresh("root");
    this.entryLines.push(`  ${root} = alloca i8*, align 8\n  call void @llvm.gcroot(i8** ${root}, i8* null)\n  store i8* null, i8** ${root}, align 8`);
    lines.push(`  store i8* ${value}, i8** ${root}, align 8`);
    return { name: root, slots };
  }
}

export function generateProgram(seed: number): GeneratedProgram {
  const rng = new Rng(seed);
  const style: FuzzStyle = rng.chance(0.35) ? "plimmix" : "statepoint";
  const d = dialectFor(style, seed);
  const { P } = d;
  const threads = rng.chance(0.2) ? 1 + rng.int(3) : 0;
  const features: FuzzFeatures = {
    style,
    functions: 1 + rng.int(5),
    maxArgs: rng.pick([0, 3, 6, 12]),
    recursion: rng.chance(0.4),
    derived: style === "statepoint" && rng.chance(0.5),
    select: rng.chance(0.4),
    loops: rng.chance(0.5),
    collects: rng.chance(0.6),
    manyLive: rng.chance(0.3),
    globals: threads === 0 && rng.chance(0.3) ? 1 + rng.int(3) : 0,
    threads,
    stuck: rng.chance(0.25),
    dynamicAlloca: rng.chance(0.25),
    // The plimmix map (v1) cannot express roots in a realigned frame: its plugin refuses them.
    overAlignBytes: style === "statepoint" && rng.chance(0.25) ? rng.pick([32, 64, 128]) : 0,
    invokes: rng.chance(0.25),
    optLevel: rng.pick(["O0", "O2", "O2", "O2", "O3"] as const),
  };
  const llcFlags: string[] = [];
  const optFlags: string[] = [];
  const featureNames: string[] = [style];
  if (features.optLevel !== "O2") llcFlags.push(`-${features.optLevel}`);
  featureNames.push(features.optLevel);
  // rootwalk compiles PIC (compile-program.ts); the static model is still a user's choice.
  if (rng.chance(0.15) && !features.invokes) {
    llcFlags.push("-relocation-model=static");
    featureNames.push("static");
  }
  if (rng.chance(0.3)) {
    llcFlags.push("-frame-pointer=all");
    featureNames.push("frame-pointer");
  }
  if (style === "statepoint" && rng.chance(0.3)) {
    llcFlags.push("-max-registers-for-gc-values=4", "-fixup-allow-gcptr-in-csr");
    featureNames.push("gc-in-csr");
  }
  if (features.derived && rng.chance(0.5)) {
    optFlags.push("-spp-rematerialization-threshold=0");
    featureNames.push("no-remat");
  }
  featureNames.push(`functions-${features.functions}`);
  if (features.maxArgs >= 7) featureNames.push("stack-args");
  for (const f of ["recursion", "derived", "select", "loops", "collects", "manyLive", "stuck", "dynamicAlloca", "invokes"] as const)
    if (features[f]) featureNames.push(f);
  if (features.globals > 0) featureNames.push("globals");
  if (features.threads > 0) featureNames.push("threads");
  if (features.overAlignBytes > 0) featureNames.push("over-aligned");

  const signatures: Signature[] = [];
  for (let k = 0; k < features.functions; k++) {
    const total = features.maxArgs === 0 ? 0 : rng.int(features.maxArgs + 1);
    const pointers = rng.int(total + 1);
    signatures.push({ name: `f${k}`, pointerParams: Array.from({ length: pointers }, () => rng.int(3)), intParams: total - pointers });
  }
  /** Global k holds objects with k % 3 pointer slots. */
  const globalSlots = (k: number): number => k % 3;

  const blocks: string[] = [prelude(d)];
  for (let k = 0; k < features.globals; k++) blocks.push(`@g${k} = global ${P} null, align 8`);
  let tagCounter = seed % 1000;
  const nextTag = (): number => ++tagCounter * 7919 + 13;
  const personality = features.invokes ? " personality i8* bitcast (i32 (...)* @rw_personality to i8*)" : "";
  const collectCall = (): string => (features.collects ? `  call void @gc_collect()` : `  call void @gc_safepoint()`);

  /** gc_alloc + tag store; the new object is bound (rooted) in `scope`. */
  const allocate = (scope: FunctionScope, slots: number, lines: string[]): Live => {
    const name = scope.fresh("p");
    const raw = 8 + 8 * rng.int(3);
    lines.push(`  ${name} = call ${P} @gc_alloc(i64 ${slots}, i64 ${raw})`, `  call void @straw(${P} ${name}, i64 ${8 * slots}, i64 ${nextTag()})`);
    return scope.bind(name, slots, lines);
  };

  /**
   * A call of generated function `callee` (as an invoke when the program has invokes and the
   * seed says so); arguments of the right slot count come from `pool`, or are allocated.
   * Returns the name of the i64 result.
   */
  const callFunction = (scope: FunctionScope, callee: Signature, pool: Live[], intArg: () => string, lines: string[]): string => {
    const chosen: Live[] = [];
    for (const slots of callee.pointerParams) {
      const candidates = pool.filter((p) => p.slots === slots);
      let arg = candidates.length > 0 ? rng.pick(candidates) : undefined;
      if (arg === undefined) {
        arg = allocate(scope, slots, lines);
        pool.push(arg);
      }
      chosen.push(arg);
    }
    // Plimmix: every argument is reloaded after the last allocation, right before the call.
    const args = chosen.map((arg) => `${P} ${scope.use(arg, lines)}`);
    for (let k = 0; k < callee.intParams; k++) args.push(`i64 ${intArg()}`);
    const r = scope.fresh("r");
    if (features.invokes && rng.chance(0.6)) {
      const l = scope.label();
      lines.push(`  ${r} = invoke i64 @${callee.name}(${args.join(", ")})\n          to label %${l}.ok unwind label %${l}.lp`);
      // RS4GC relocates through the landing pad's value, which must then be a token (LLVM's
      // statepoint tests spell it so); nothing is ever thrown, so the pad ends unreachable.
      if (style === "statepoint") lines.push(`${l}.lp:\n  %${l}.x = landingpad token\n          cleanup\n  unreachable`);
      else lines.push(`${l}.lp:\n  %${l}.x = landingpad { i8*, i32 }\n          cleanup\n  resume { i8*, i32 } %${l}.x`);
      lines.push(`${l}.ok:`);
    } else {
      lines.push(`  ${r} = call i64 @${callee.name}(${args.join(", ")})`);
    }
    return r;
  };

  /** Generates one function's body over `pool` (its parameters, bound in `scope`). */
  const body = (index: number, scope: FunctionScope, pool: Live[]): string[] => {
    const out: string[] = [];
    const fresh = (base: string): string => scope.fresh(base);
    const use = (p: Live, lines: string[]): string => scope.use(p, lines);
    // The checksum lives in a stack slot, folded by a leaf helper: statements do not chain through
    // SSA values, so the reducer can delete any statement whose pointers nothing else uses.
    out.push(`  %accp = alloca i64, align 8\n  store i64 ${index + 1}, i64* %accp, align 8`);
    let acc = "";
    /** Loads the checksum into a fresh value (for a condition or an argument); sets `acc`. */
    const loadAcc = (lines: string[]): void => {
      acc = fresh("acc");
      lines.push(`  ${acc} = load i64, i64* %accp, align 8`);
    };
    /** A run-time zero opt cannot fold (acc & 0 through the leaf @mixp): keeps values dynamic. */
    const dynamicZero = (lines: string[]): string => {
      loadAcc(lines);
      const zero = fresh("z");
      lines.push(`  ${zero} = and i64 ${acc}, 0`);
      return zero;
    };
    const fold = (value: string): string => `  call void @mixp(i64* %accp, i64 ${value})`;
    const readTag = (p: Live, lines: string[]): void => {
      const v = fresh("v");
      lines.push(`  ${v} = call i64 @ldraw(${P} ${use(p, lines)}, i64 ${8 * p.slots})`);
      lines.push(fold(v));
    };
    if (features.overAlignBytes > 0) scope.entryLines.push(`  %over = alloca [4 x i64], align ${features.overAlignBytes}`);
    const statements = (features.manyLive ? 14 : 6) + rng.int(8);
    for (let s = 0; s < statements; s++) {
      const kind = rng.int(14);
      const lines: string[] = [];
      if (kind <= 2 || pool.length === 0) {
        pool.push(allocate(scope, rng.int(3), lines));
      } else if (kind === 3) {
        const withSlots = pool.filter((p) => p.slots > 0);
        if (withSlots.length > 0) {
          const target = rng.pick(withSlots);
          const value = rng.pick(pool);
          const slot = rng.int(target.slots);
          const t = use(target, lines);
          lines.push(`  call void @st(${P} ${t}, i64 ${slot}, ${P} ${use(value, lines)})`);
          // Read it back after a possible collection: the slot must have followed the object.
          lines.push(`  call void @gc_safepoint()`);
          const got = fresh("q");
          lines.push(`  ${got} = call ${P} @ld(${P} ${use(target, lines)}, i64 ${slot})`);
          const v = fresh("v");
          lines.push(`  ${v} = call i64 @ldraw(${P} ${got}, i64 ${8 * value.slots})`);
          lines.push(fold(v));
        }
      } else if (kind === 4) {
        lines.push(collectCall());
      } else if (kind === 5 && features.derived) {
        const base = rng.pick(pool);
        const dp = fresh("d");
        // The offset is not a constant: a GEP with constant indices costs nothing to
        // rematerialize, so RS4GC would recompute it after the call instead of reporting a
        // (base, derived) pair.
        const zero = dynamicZero(lines);
        const off = fresh("o");
        lines.push(`  ${off} = add i64 ${zero}, ${8 * base.slots}`);
        lines.push(`  ${dp} = getelementptr i8, ${P} ${base.name}, i64 ${off}`);
        lines.push(collectCall());
        const v = fresh("v");
        lines.push(`  ${v} = call i64 @ldraw(${P} ${dp}, i64 0)`);
        lines.push(fold(v));
      } else if (kind === 6 && features.select) {
        const a = rng.pick(pool);
        const b = rng.pick(pool.filter((p) => p.slots === a.slots));
        const c = fresh("c");
        const sel = fresh("s");
        const av = use(a, lines);
        const bv = use(b, lines);
        loadAcc(lines);
        lines.push(`  ${c} = trunc i64 ${acc} to i1`);
        lines.push(`  ${sel} = select i1 ${c}, ${P} ${av}, ${P} ${bv}`);
        const bound = scope.bind(sel, a.slots, lines);
        lines.push(`  call void @gc_safepoint()`);
        readTag(bound, lines);
        pool.push(bound);
      } else if (kind === 7 && index + 1 < signatures.length) {
        const callee = signatures[index + 1 + rng.int(signatures.length - index - 1)]!;
        if (callee.intParams > 0) loadAcc(lines);
        const accNow = acc;
        const r = callFunction(scope, callee, pool, () => (rng.chance(0.5) ? accNow : String(rng.int(1000))), lines);
        lines.push(fold(r));
      } else if (kind === 8 && features.loops) {
        lines.push(...listLoop(scope, fold));
      } else if (kind === 9 && features.globals > 0) {
        // Through a registered global: stored, collected, read back (the global must follow).
        const k = rng.int(features.globals);
        const candidates = pool.filter((p) => p.slots === globalSlots(k));
        const obj = candidates.length > 0 ? rng.pick(candidates) : allocate(scope, globalSlots(k), lines);
        lines.push(`  store ${P} ${use(obj, lines)}, ${P}* @g${k}, align 8`);
        lines.push(collectCall());
        const g = fresh("g");
        const v = fresh("v");
        lines.push(`  ${g} = load ${P}, ${P}* @g${k}, align 8`, `  ${v} = call i64 @ldraw(${P} ${g}, i64 ${8 * globalSlots(k)})`, fold(v));
      } else if (kind === 10 && features.dynamicAlloca) {
        // A variable-sized alloca filled before a collection and checked after it.
        const words = 2 + rng.int(4);
        const n = fresh("n");
        const buf = fresh("buf");
        lines.push(`  ${n} = add i64 ${dynamicZero(lines)}, ${words}`, `  ${buf} = alloca i64, i64 ${n}, align 8`);
        const base = nextTag();
        for (let j = 0; j < words; j++)
          lines.push(`  %${buf.slice(1)}.w${j} = getelementptr i64, i64* ${buf}, i64 ${j}`, `  store i64 ${base + j}, i64* %${buf.slice(1)}.w${j}, align 8`);
        lines.push(collectCall());
        for (let j = 0; j < words; j++) lines.push(`  %${buf.slice(1)}.r${j} = load i64, i64* %${buf.slice(1)}.w${j}, align 8`, fold(`%${buf.slice(1)}.r${j}`));
      } else if (kind === 11 && features.stuck) {
        // Integer-only work while the thread is stuck: no safepoint, no heap object touched.
        lines.push(`  call void @thread_stuck_start()`);
        for (let j = 0; j < 1 + rng.int(3); j++) lines.push(fold(String(nextTag())));
        lines.push(`  call void @thread_stuck_end()`);
      } else if (kind === 12 && features.overAlignBytes > 0) {
        const base = nextTag();
        const w = fresh("ow");
        for (let j = 0; j < 4; j++)
          lines.push(`  ${w}.${j} = getelementptr [4 x i64], [4 x i64]* %over, i64 0, i64 ${j}`, `  store i64 ${base + j}, i64* ${w}.${j}, align 8`);
        lines.push(collectCall());
        for (let j = 0; j < 4; j++) lines.push(`  ${w}.r${j} = load i64, i64* ${w}.${j}, align 8`, fold(`${w}.r${j}`));
        // The realigned slot's address modulo its alignment is 0 in every runtime.
        const a = fresh("al");
        lines.push(`  ${a} = ptrtoint [4 x i64]* %over to i64`, `  ${a}.m = and i64 ${a}, ${features.overAlignBytes - 1}`, fold(`${a}.m`));
      } else {
        readTag(rng.pick(pool), lines);
      }
      if (lines.length > 0) out.push(lines.join("\n"));
    }
    // Every pointer still live is read at the end (after everything that could collect).
    const finals: string[] = [];
    for (const p of pool) readTag(p, finals);
    out.push(finals.join("\n"));
    const result = fresh("res");
    out.push(`  ${result} = load i64, i64* %accp, align 8\n  ret i64 ${result}`);
    return out;
  };

  /** A list of `count` nodes built in a loop with a safepoint per node, then folded. */
  const listLoop = (scope: FunctionScope, fold: (v: string) => string): string[] => {
    const lines: string[] = [];
    const count = 3 + rng.int(20);
    const l = scope.label();
    const pre = `${l}.pre`;
    lines.push(`  br label %${pre}`, `${pre}:`);
    let headRoot = "";
    if (style === "statepoint") {
      lines.push(`  br label %${l}.body`, `${l}.body:`);
      lines.push(`  %${l}.i = phi i64 [ 0, %${pre} ], [ %${l}.i1, %${l}.body ]`);
      lines.push(`  %${l}.h = phi ${P} [ null, %${pre} ], [ %${l}.n, %${l}.body ]`);
      lines.push(`  %${l}.n = call ${P} @gc_alloc(i64 1, i64 8)`);
      lines.push(`  call void @st(${P} %${l}.n, i64 0, ${P} %${l}.h)`);
    } else {
      // The list's head lives in a root across each node's allocation and safepoint.
      headRoot = scope.bind("null", 1, lines).name;
      lines.push(`  br label %${l}.body`, `${l}.body:`);
      lines.push(`  %${l}.i = phi i64 [ 0, %${pre} ], [ %${l}.i1, %${l}.body ]`);
      lines.push(`  %${l}.n = call ${P} @gc_alloc(i64 1, i64 8)`);
      lines.push(`  %${l}.h = load i8*, i8** ${headRoot}, align 8`);
      lines.push(`  call void @st(${P} %${l}.n, i64 0, ${P} %${l}.h)`);
      lines.push(`  store i8* %${l}.n, i8** ${headRoot}, align 8`);
    }
    lines.push(`  call void @straw(${P} %${l}.n, i64 8, i64 %${l}.i)`);
    lines.push(`  call void @gc_safepoint()`);
    lines.push(`  %${l}.i1 = add i64 %${l}.i, 1`);
    lines.push(`  %${l}.c = icmp ult i64 %${l}.i1, ${count}`);
    lines.push(`  br i1 %${l}.c, label %${l}.body, label %${l}.first`);
    lines.push(`${l}.first:`);
    // Plimmix: the head is reloaded after the loop's last safepoint; the walk below only calls
    // leaf helpers, which never collect.
    const first = style === "statepoint" ? `%${l}.n` : `%${l}.hd`;
    if (style === "plimmix") lines.push(`  %${l}.hd = load i8*, i8** ${headRoot}, align 8`);
    lines.push(`  br label %${l}.sum`, `${l}.sum:`);
    lines.push(`  %${l}.s = phi i64 [ 0, %${l}.first ], [ %${l}.s1, %${l}.sum ]`);
    lines.push(`  %${l}.p = phi ${P} [ ${first}, %${l}.first ], [ %${l}.nx, %${l}.sum ]`);
    lines.push(`  %${l}.v = call i64 @ldraw(${P} %${l}.p, i64 8)`);
    lines.push(`  %${l}.s1 = add i64 %${l}.s, %${l}.v`);
    lines.push(`  %${l}.nx = call ${P} @ld(${P} %${l}.p, i64 0)`);
    lines.push(`  %${l}.e = icmp eq ${P} %${l}.nx, null`);
    lines.push(`  br i1 %${l}.e, label %${l}.done, label %${l}.sum`);
    lines.push(`${l}.done:`);
    lines.push(fold(`%${l}.s1`));
    return lines;
  };

  /** `define ... {` + entry block with the scope's roots, then the body's blocks, then `}`. */
  const emitFunction = (signatureLine: string, scope: FunctionScope, bodyBlocks: string[]): void => {
    blocks.push(`${signatureLine} ${d.gc}${personality} {\nentry:${scope.entryLines.length > 0 ? `\n${scope.entryLines.join("\n")}` : ""}`);
    blocks.push(...bodyBlocks, "}");
  };

  for (let k = signatures.length - 1; k >= 0; k--) {
    const sig = signatures[k]!;
    const scope = new FunctionScope(d, style);
    const bindParams: string[] = [];
    const pool: Live[] = sig.pointerParams.map((slots, i) => scope.bind(`%a${i}`, slots, bindParams));
    const params = [...sig.pointerParams.map((_, i) => `${P} %a${i}`), ...Array.from({ length: sig.intParams }, (_, i) => `i64 %i${i}`)];
    const lines = body(k, scope, pool);
    // Fold the integer parameters too (they carry the caller's accumulator).
    const ints = Array.from({ length: sig.intParams }, (_, i) => `  %x${i} = call i64 @mix(i64 ${i === 0 ? "0" : `%x${i - 1}`}, i64 %i${i})`);
    const ret = lines.pop()!;
    const last = /ret i64 (%\S+)/.exec(ret)![1]!;
    const load = ret.split("\n")[0]!;
    const tail = sig.intParams > 0 ? [load, ...ints, `  %fin = call i64 @mix(i64 ${last}, i64 %x${sig.intParams - 1})`, `  ret i64 %fin`] : [ret];
    // Plimmix: parameters go into their roots first (kept with the entry block: never reduced away).
    if (bindParams.length > 0) scope.entryLines.push(...bindParams);
    emitFunction(`define internal i64 @${sig.name}(${params.join(", ")})`, scope, [...lines, tail.join("\n")]);
  }

  if (features.recursion) blocks.push(recursion(d, style));

  /** Allocates f0's pointer arguments and calls it: rw_main and each thread's worker do this. */
  const callEntry = (scope: FunctionScope, lines: string[], salt: number): string => {
    const pool: Live[] = [];
    const f0 = signatures[0]!;
    let i = 0;
    return callFunction(scope, f0, pool, () => String(i++ * 17 + 3 + salt), lines);
  };

  const mainScope = new FunctionScope(d, style);
  const mainLines: string[] = [`  call void @gc_init(${d.mapArgument})`];
  for (let k = 0; k < features.globals; k++) mainLines.push(`  call void @gc_add_global(${P}* @g${k})`);
  const mainBlocks: string[] = [mainLines.join("\n")];
  for (let t = 0; t < features.threads; t++) {
    const workerScope = new FunctionScope(d, style);
    const workerLines: string[] = [];
    const r = callEntry(workerScope, workerLines, t + 1);
    workerLines.push(`  %slot = getelementptr [4 x i64], [4 x i64]* @results, i64 0, i64 %k`, `  store i64 ${r}, i64* %slot, align 8`, `  ret void`);
    emitFunction(`define void @worker${t}(i64 %k)`, workerScope, [workerLines.join("\n")]);
    mainBlocks.push(`  %th${t} = call i64 @gc_thread_start(void (i64)* @worker${t}, i64 ${t})`);
  }
  if (features.recursion) {
    const depth = 5 + (seed % 40);
    const lines: string[] = [];
    const top = mainScope.fresh("top");
    lines.push(
      `  ${top} = call ${P} @gc_alloc(i64 1, i64 8)`,
      `  call void @straw(${P} ${top}, i64 8, i64 ${depth + 1})`,
      `  %rec0 = call i64 @rec(i64 ${depth}, ${P} ${top})`,
    );
    mainBlocks.push(lines.join("\n"));
  } else {
    mainBlocks.push(`  %rec0 = add i64 0, 0`);
  }
  const entryLines: string[] = [];
  const r1 = callEntry(mainScope, entryLines, 0);
  entryLines.push(`  %res = call i64 @mix(i64 %rec0, i64 ${r1})`);
  mainBlocks.push(entryLines.join("\n"));
  let result = "%res";
  for (let t = 0; t < features.threads; t++) {
    mainBlocks.push(
      `  call void @gc_thread_join(i64 %th${t})\n  %tr${t}.p = getelementptr [4 x i64], [4 x i64]* @results, i64 0, i64 ${t}\n  %tr${t} = load i64, i64* %tr${t}.p, align 8\n  %res.t${t} = call i64 @mix(i64 ${result}, i64 %tr${t})`,
    );
    result = `%res.t${t}`;
  }
  for (let k = 0; k < features.globals; k++) {
    mainBlocks.push(
      `  %gl${k} = load ${P}, ${P}* @g${k}, align 8\n  %glv${k} = call i64 @ldraw_or0(${P} %gl${k}, i64 ${8 * globalSlots(k)})\n  %res.g${k} = call i64 @mix(i64 ${result}, i64 %glv${k})`,
    );
    result = `%res.g${k}`;
  }
  mainBlocks.push(`  ret i64 ${result}`);
  emitFunction(`define i64 @rw_main()`, mainScope, mainBlocks);
  return { seed, features, featureNames, llcFlags, optFlags, blocks };
}

/** A bounded self-recursion: each level allocates a node pointing at its caller's and collects at the bottom. */
function recursion(d: Dialect, style: FuzzStyle): string {
  const { P } = d;
  const gcroot = style === "plimmix";
  // Plimmix: %up and the new node live in gcroot slots and are reloaded after each call.
  const reload = (name: string, root: string): string => (gcroot ? `  %${name} = load i8*, i8** %${root}, align 8\n` : "");
  const value = (name: string, statepointName: string): string => (gcroot ? `%${name}` : `%${statepointName}`);
  const roots = gcroot
    ? `  %rup = alloca i8*, align 8
  call void @llvm.gcroot(i8** %rup, i8* null)
  store i8* %up, i8** %rup, align 8
  %ro = alloca i8*, align 8
  call void @llvm.gcroot(i8** %ro, i8* null)
  store i8* null, i8** %ro, align 8
`
    : "";
  return `define internal i64 @rec(i64 %d, ${P} %up) ${d.gc} {
entry:
${roots}  %o = call ${P} @gc_alloc(i64 1, i64 8)
${gcroot ? "  store i8* %o, i8** %ro, align 8\n" : ""}${reload("up1", "rup")}  call void @st(${P} %o, i64 0, ${P} ${value("up1", "up")})
  call void @straw(${P} %o, i64 8, i64 %d)
  %z = icmp eq i64 %d, 0
  br i1 %z, label %bottom, label %deeper
bottom:
  call void @gc_collect()
  br label %out
deeper:
  %d1 = sub i64 %d, 1
${reload("o1", "ro")}  %r = call i64 @rec(i64 %d1, ${P} ${value("o1", "o")})
  br label %out
out:
  %below = phi i64 [ 0, %bottom ], [ %r, %deeper ]
${reload("o2", "ro")}  %mine = call i64 @ldraw(${P} ${value("o2", "o")}, i64 8)
  %u = call ${P} @ld(${P} ${value("o2", "o")}, i64 0)
  %uv = call i64 @ldraw(${P} %u, i64 8)
  %a = call i64 @mix(i64 %below, i64 %mine)
  %b = call i64 @mix(i64 %a, i64 %uv)
  ret i64 %b
}`;
}

export function renderProgram(p: GeneratedProgram, blocks: readonly string[] = p.blocks): string {
  return `; rootwalk fuzz program, seed ${p.seed}: ${p.featureNames.join(", ")}
; llc flags: ${p.llcFlags.join(" ") || "(none)"}; opt flags: ${p.optFlags.join(" ") || "(none)"}
source_filename = "fuzz-${p.seed}"

${blocks.join("\n")}
`;
}
