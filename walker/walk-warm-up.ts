import { TWO_32 } from "../src/bytes/word-codec.js";
import { WordMemory } from "../src/memory/memory.js";
import { scanMemory } from "../src/memory/scan-memory.js";
import { RECIPE_BYTES, RECIPE_FRAME_BYTES } from "../src/safepoints/recipe-record.js";
import type { RegistrySnapshot } from "../src/safepoints/registry.js";
import { X86_64 } from "../src/arch/x86-64.js";
import { scanStackRoots } from "./fast-scan.js";
import { RootPairs } from "./frame-roots.js";
import { RegisterContext } from "./register-context.js";
import { relocateRootPairs } from "./relocate-roots.js";
import type { ScanKernel } from "./kernel-binding.js";
import { Unwinder, type UnwinderOptions } from "./unwinder.js";

/*
 * The walker's JavaScript run once before the first collection, as the scan kernel is
 * (walker/scan-kernel/warm-up.ts): the first scan of a process otherwise ran it for the first
 * time (V8 compiling each function lazily, its inline caches empty) and took 1.7-1.8 ms for one
 * frame, ~0.1 ms once warm (bench/README.md).
 *
 * warmWalk walks a synthetic stopped stack with the steps a collection takes per thread (a
 * RootPairs presized for the stack, an Unwinder in the scanner's options, scanStackRoots with the
 * thread's kernel binding, relocateRootPairs with an identity forwarding), over the registry's
 * real snapshot: one zeroed frame of the first safepoint the kernel takes, its stack top right
 * above its SP so the walk ends cleanly ("stack-top") at its caller, in a scan memory region of
 * its own and with a register context that knows no register. Every region it allocates (the
 * stack, the pairs) is released before it returns; it reads no thread's stack or record and
 * writes only its own stack (nothing: every root in it is null). The kernel binding is rebound
 * by every scan (ScanKernel.bind, enterChunk, run set every context word a walk reads).
 */

/** Bytes of the synthetic stack beyond its one frame (the return-address slot and some room). */
const STACK_SLACK_BYTES = 64;

/** Walks one synthetic frame (see above); returns the frames walked (0: no fast safepoint to walk). */
export function warmWalk(
  snapshot: RegistrySnapshot,
  options: UnwinderOptions,
  kernel: ScanKernel,
  scratch: { bases: Float64Array; deriveds: Float64Array },
): number {
  const safepoint = firstFastSafepoint(snapshot);
  if (safepoint === undefined) return 0;
  const memory = scanMemory();
  const sizeBytes = Math.ceil((safepoint.frameBytes + STACK_SLACK_BYTES) / 8) * 8;
  const region = memory.allocate(sizeBytes, "walker warm-up stack");
  const pairs = new RootPairs();
  try {
    // The region's offset as the stack's address: 8-aligned, and read in place by the kernel.
    const stack = new WordMemory(region.offset, sizeBytes, memory.buffer, region.offset);
    const registers = new RegisterContext(snapshot.architecture ?? options.architecture ?? X86_64);
    const sp = stack.base;
    const chunks = [{ sp, ra: safepoint.address, registers, boundaryRa: undefined, stackTop: sp + 8 }];
    pairs.clear();
    pairs.reserveForStack(sizeBytes);
    const u = new Unwinder(snapshot, stack, options);
    const frames = scanStackRoots(u, chunks, pairs, kernel);
    relocateRootPairs(pairs, stack, u.contexts, (base) => base, scratch);
    return frames;
  } finally {
    pairs.release();
    region.release();
  }
}

/** The first safepoint (in table order) whose frames the scan kernel takes, and its frame's bytes. */
function firstFastSafepoint(snapshot: RegistrySnapshot): { address: number; frameBytes: number } | undefined {
  const layout = snapshot.scanLayout;
  const words = scanMemory().words;
  const keys = snapshot.table.keys;
  const cells = keys.length / 2;
  for (let c = 0; c < cells; c++) {
    const recipe = words[(layout.recipeOfCellOffset >>> 2) + c]! | 0;
    if (recipe < 0) continue; // empty, or a frame the general unwinder takes
    const address = keys[2 * c + 1]! * TWO_32 + keys[2 * c]!;
    const frameBytes = words[(layout.recipesOffset + recipe * RECIPE_BYTES + RECIPE_FRAME_BYTES) >>> 2]!;
    return { address, frameBytes };
  }
  return undefined;
}
