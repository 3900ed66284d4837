import type { ImmixCollector } from "../../../gc/immix-collector.js";
import { RootwalkError } from "../../errors.js";
import type { FrameTemplate, SimFrame, SimThread } from "./sim-thread.js";

/*
 * The mutators of `rootwalk sim`: classic GC workloads written against simulated threads, so that
 * every GC-pointer local lives in a real frame's root slot and a collection finds it only through
 * the stack walker. Objects use the collector's default model (pointer slots, then raw bytes).
 * Every workload checks its own results: a lost or corrupted object is a SimCheckError.
 */

export class SimCheckError extends RootwalkError {
  constructor(what: string) {
    super("GC", `simulation check failed: ${what}`);
  }
}

export interface SimContext {
  collector: ImmixCollector;
  threads: SimThread[];
  templates: Map<string, FrameTemplate>;
  /** Deterministic randomness (mt-gcbench). */
  random: () => number;
  /** Called now and then with the fraction done. */
  progress: (fraction: number) => void;
  /** Size parameter: 1 is the default size; tests use smaller. */
  scale: number;
}

export type WorkloadName = "gcbench" | "mt-gcbench" | "deep-recursion" | "binary-trees";
export const WORKLOADS: readonly WorkloadName[] = ["gcbench", "mt-gcbench", "deep-recursion", "binary-trees"];

function template(ctx: SimContext, name: string): FrameTemplate {
  const t = ctx.templates.get(name);
  if (t === undefined) throw new SimCheckError(`the sim program has no usable safepoint in ${name}`);
  return t;
}

// Tree nodes: 2 pointer slots (left, right) and 8 raw bytes (i, j).
const NODE_POINTERS = 2;
const NODE_RAW = 8;

function setNodeData(ctx: SimContext, node: number, i: number, j: number): void {
  const raw = ctx.collector.rawBytes(node);
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  view.setInt32(0, i, true);
  view.setInt32(4, j, true);
}
function nodeI(ctx: SimContext, node: number): number {
  const raw = ctx.collector.rawBytes(node);
  return new DataView(raw.buffer, raw.byteOffset, raw.byteLength).getInt32(0, true);
}

/** Bottom-up: children first, each kept in the frame's root slots while the parent is allocated. */
function makeTreeBottomUp(ctx: SimContext, thread: SimThread, depth: number): number {
  if (depth <= 0) {
    const leaf = thread.alloc(NODE_POINTERS, NODE_RAW);
    setNodeData(ctx, leaf, depth, 0);
    return leaf;
  }
  return thread.call(template(ctx, "sim_two"), (f) => {
    f.set(0, makeTreeBottomUp(ctx, thread, depth - 1));
    f.set(1, makeTreeBottomUp(ctx, thread, depth - 1));
    const node = thread.alloc(NODE_POINTERS, NODE_RAW);
    ctx.collector.writePointer(node, 0, f.get(0));
    ctx.collector.writePointer(node, 1, f.get(1));
    setNodeData(ctx, node, depth, 0);
    return node;
  });
}

/** Top-down: the node first (a root), then its children filled in. */
function populate(ctx: SimContext, thread: SimThread, depth: number, node: number): void {
  if (depth <= 0) return;
  thread.call(template(ctx, "sim_one"), (f) => {
    f.set(0, node);
    const left = thread.alloc(NODE_POINTERS, NODE_RAW);
    ctx.collector.writePointer(f.get(0), 0, left);
    const right = thread.alloc(NODE_POINTERS, NODE_RAW);
    ctx.collector.writePointer(f.get(0), 1, right);
    setNodeData(ctx, right, depth - 1, 1);
    populate(ctx, thread, depth - 1, ctx.collector.readPointer(f.get(0), 0));
    populate(ctx, thread, depth - 1, ctx.collector.readPointer(f.get(0), 1));
  });
}

/** Node count of a tree, checking the stored depth of every node on the way. */
function checkTree(ctx: SimContext, node: number, depth: number, what: string): number {
  let count = 0;
  const stack: number[] = [node, depth];
  while (stack.length > 0) {
    const d = stack.pop()!;
    const n = stack.pop()!;
    if (n === 0) throw new SimCheckError(`${what}: a null child at depth ${d}`);
    count++;
    const left = ctx.collector.readPointer(n, 0);
    const right = ctx.collector.readPointer(n, 1);
    if (d > 0) {
      stack.push(left, d - 1, right, d - 1);
    } else if (left !== 0 || right !== 0) {
      throw new SimCheckError(`${what}: a leaf with children`);
    }
  }
  return count;
}

const treeSize = (depth: number) => 2 ** (depth + 1) - 1;

/**
 * Boehm's GCBench (Ellis, Kovac, Boehm), scaled: a stretch tree, a long-lived tree and a large
 * array of doubles that stay live, then many short-lived trees of depths 4..max built top-down
 * and bottom-up. At scale 1: max depth 14, stretch 15, array of 50,000 doubles (a large object).
 */
function gcbench(ctx: SimContext, thread: SimThread, maxDepth = Math.max(6, Math.round(14 + Math.log2(ctx.scale)))): void {
  const stretch = maxDepth + 1;
  thread.call(template(ctx, "sim_four"), (f) => {
    f.set(0, makeTreeBottomUp(ctx, thread, stretch));
    if (checkTree(ctx, f.get(0), stretch, "stretch tree") !== treeSize(stretch)) throw new SimCheckError("stretch tree size");
    f.set(0, 0);
    // Long-lived data: a tree and an array of doubles (raw bytes: a large object).
    f.set(1, thread.alloc(NODE_POINTERS, NODE_RAW));
    populate(ctx, thread, maxDepth, f.get(1));
    const doubles = Math.max(1000, Math.round(50_000 * ctx.scale));
    f.set(2, thread.alloc(0, doubles * 8));
    {
      const raw = ctx.collector.rawBytes(f.get(2));
      const view = new Float64Array(raw.buffer, raw.byteOffset, doubles);
      for (let i = 0; i < doubles / 2; i++) view[i] = 1 / (i + 1);
    }
    const depths: number[] = [];
    for (let d = 4; d <= maxDepth; d += 2) depths.push(d);
    let done = 0;
    for (const d of depths) {
      const iterations = Math.max(1, Math.floor((2 * treeSize(stretch)) / treeSize(d)));
      for (let k = 0; k < iterations; k++) {
        f.set(0, thread.alloc(NODE_POINTERS, NODE_RAW));
        populate(ctx, thread, d, f.get(0));
        if (checkTree(ctx, f.get(0), d, "top-down tree") !== treeSize(d)) throw new SimCheckError("top-down tree size");
        f.set(0, makeTreeBottomUp(ctx, thread, d));
        if (checkTree(ctx, f.get(0), d, "bottom-up tree") !== treeSize(d)) throw new SimCheckError("bottom-up tree size");
      }
      ctx.progress(++done / depths.length);
    }
    if (checkTree(ctx, f.get(1), maxDepth, "long-lived tree") !== treeSize(maxDepth)) throw new SimCheckError("long-lived tree size");
    const raw = ctx.collector.rawBytes(f.get(2));
    const view = new Float64Array(raw.buffer, raw.byteOffset, doubles);
    if (view[1000 % (doubles / 2)] !== 1 / ((1000 % (doubles / 2)) + 1)) throw new SimCheckError("the array of doubles changed");
  });
}

/**
 * Benchmarks Game binary-trees, scaled (max depth 14 at scale 1): stretch, long-lived, then
 * 2^(max - d + 4) trees of each depth d, each counted.
 */
function binaryTrees(ctx: SimContext, thread: SimThread): void {
  const maxDepth = Math.max(6, Math.round(14 + Math.log2(ctx.scale)));
  thread.call(template(ctx, "sim_two"), (f) => {
    f.set(0, makeTreeBottomUp(ctx, thread, maxDepth + 1));
    checkTree(ctx, f.get(0), maxDepth + 1, "stretch tree");
    f.set(0, 0);
    f.set(1, makeTreeBottomUp(ctx, thread, maxDepth));
    for (let d = 4; d <= maxDepth; d += 2) {
      const iterations = 2 ** (maxDepth - d + 4) / 16;
      for (let k = 0; k < iterations; k++) {
        f.set(0, makeTreeBottomUp(ctx, thread, d));
        if (checkTree(ctx, f.get(0), d, "tree") !== treeSize(d)) throw new SimCheckError("tree size");
      }
      ctx.progress((d - 3) / (maxDepth - 3));
    }
    if (checkTree(ctx, f.get(1), maxDepth, "long-lived tree") !== treeSize(maxDepth)) throw new SimCheckError("long-lived tree size");
  });
}

/**
 * Deep recursion: every level keeps objects in its frame (frames of every template in turn:
 * pushed arguments, a frame pointer, a derived pointer), and the innermost level allocates
 * enough garbage to collect with the whole stack live. Each level checks its objects on the way
 * out. Depth 10,000 at scale 1.
 */
function deepRecursion(ctx: SimContext, thread: SimThread): void {
  const depth = Math.max(50, Math.round(10_000 * ctx.scale));
  const names = [...ctx.templates.keys()].sort();
  const garbage = Math.max(200, Math.round(20_000 * ctx.scale));
  // Iterative, not recursive: the simulated stack is as deep as the scale says, the JS stack stays
  // flat (a JS recursion per level overflowed Node's stack at the default depth).
  const frames: SimFrame[] = [];
  const templates: FrameTemplate[] = [];
  try {
    for (let n = 0; n < depth; n++) {
      const t = template(ctx, names[n % names.length]!);
      const f = thread.push(t);
      frames.push(f);
      templates.push(t);
      // Derived pairs first, and no plain root written into a pair's base slot (sim_derived's
      // slot 0 is both): a collection between the two stores would see a base with a null derived
      // pointer, whose relocation (base' + (0 - base)) is no address.
      for (let i = 0; i < t.derived.length; i++) {
        const o = thread.alloc(0, 64);
        setNodeData(ctx, o, n, 100 + i);
        f.setDerived(i, o, 8 + (n % 7) * 8);
      }
      for (let i = 0; i < f.size; i++) {
        if (t.derived.some(([base]) => base === t.slots[i])) continue;
        const o = thread.alloc(1, 8);
        setNodeData(ctx, o, n, i);
        f.set(i, o);
      }
      if (n % 500 === 0) ctx.progress((0.5 * n) / depth);
    }
    for (let g = 0; g < garbage; g++) {
      thread.alloc(1, 8 + (g % 5) * 8);
      if (g % 1000 === 0) ctx.progress(0.5 + (0.5 * g) / garbage);
    }
    for (let n = depth - 1; n >= 0; n--) {
      const f = frames[n]!;
      const t = templates[n]!;
      for (let i = 0; i < f.size; i++) {
        if (nodeI(ctx, f.get(i)) !== n) throw new SimCheckError(`frame ${n} slot ${i} lost its object`);
      }
      for (let i = 0; i < t.derived.length; i++) {
        if (f.derivedValue(i) - f.derivedBase(i) !== 8 + (n % 7) * 8) throw new SimCheckError(`frame ${n}: derived pointer ${i} lost its offset`);
        if (nodeI(ctx, f.derivedBase(i)) !== n) throw new SimCheckError(`frame ${n}: derived base ${i} lost its object`);
      }
      thread.pop();
      frames.pop();
    }
  } finally {
    for (let k = frames.length; k > 0; k--) thread.pop();
  }
}

/**
 * mt-gcbench: several mutator threads, interleaved in slices, each keeping a table of live
 * objects of random sizes (16 B to 2 KiB) that it keeps replacing, so the heap fills with
 * random-sized holes: the fragmentation Immix's opportunistic defragmentation is for. Each thread
 * also builds small trees. Every live object carries its owner and index, checked when replaced.
 */
function mtGcbench(ctx: SimContext): void {
  const threads = ctx.threads;
  const tableSize = 256;
  const rounds = Math.max(1, Math.round(400 * ctx.scale));
  const slice = 50;
  const tables: number[] = [];
  // Each thread's table is a heap object whose pointer slots hold its live objects, kept in the
  // thread's outermost frame.
  const outer = threads.map((t) => t.push(template(ctx, "sim_four")));
  threads.forEach((t, k) => {
    outer[k]!.set(0, t.alloc(tableSize, 0));
    tables.push(0);
  });
  for (let round = 0; round < rounds; round++) {
    threads.forEach((t, k) => {
      t.call(template(ctx, "sim_two"), (f) => {
        for (let s = 0; s < slice; s++) {
          const index = Math.floor(ctx.random() * tableSize);
          const raw = 8 + Math.floor(ctx.random() * 255) * 8;
          f.set(0, t.alloc(0, raw));
          setNodeData(ctx, f.get(0), k, index);
          const table = outer[k]!.get(0);
          const old = ctx.collector.readPointer(table, index);
          if (old !== 0) {
            const raw0 = ctx.collector.rawBytes(old);
            const view = new DataView(raw0.buffer, raw0.byteOffset, raw0.byteLength);
            if (view.getInt32(0, true) !== k || view.getInt32(4, true) !== index) throw new SimCheckError(`thread ${k}: table entry ${index} was corrupted`);
          }
          ctx.collector.writePointer(outer[k]!.get(0), index, f.get(0));
          // Short-lived garbage between live objects: the holes.
          t.alloc(0, 8 + Math.floor(ctx.random() * 64) * 8);
        }
        f.set(1, makeTreeBottomUp(ctx, t, 5));
        if (checkTree(ctx, f.get(1), 5, "small tree") !== treeSize(5)) throw new SimCheckError("small tree size");
      });
    });
    ctx.progress((round + 1) / rounds);
  }
  threads.forEach((t) => t.pop());
  void tables;
}

export function runWorkload(name: WorkloadName, ctx: SimContext): void {
  switch (name) {
    case "gcbench":
      return gcbench(ctx, ctx.threads[0]!);
    case "binary-trees":
      return binaryTrees(ctx, ctx.threads[0]!);
    case "deep-recursion":
      return deepRecursion(ctx, ctx.threads[0]!);
    case "mt-gcbench":
      return mtGcbench(ctx);
  }
}

export type { SimFrame };
