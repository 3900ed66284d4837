import { mkdirSync, mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CoreFrame, type CoreWalk, rootsCommand, walkCore } from "../../../src/cli/roots-command.js";
import { RETURN_BARRIER_THREADS } from "../../../src/core/return-barrier-table.js";
import { hex } from "../../../src/errors.js";
import { MAX_THREADS } from "../../../src/native/stack-limits.js";
import { cacheSubdir } from "../../../src/toolchain/cache-dir.js";
import { cacheKey } from "../../../src/toolchain/llvm-toolchain.js";
import { run } from "../../support/gdb-compare.js";

/*
 * The core reader's return-barrier overlay on its own, against a stand-in written by hand
 * (barrier-table.c: the runtime's table layout and symbol names, three return addresses of a
 * 40-deep C recursion replaced by the trampoline's address). gdb stops the program four times
 * and writes a core each time: pristine, armed (3 entries), the table corrupt (armed 65), and the
 * innermost replaced slot without its entry. The armed core must walk exactly as the pristine
 * one, its three restored frames marked; the other two must end at the slot left holding the
 * trampoline, named, never walk on from a guess. The real runtime's barriers are tested by
 * test/native-runtime/return-barrier-core.test.ts.
 */

const HERE = dirname(fileURLToPath(import.meta.url));
let scratch = "";
let program = "";
const walks: CoreWalk[] = [];

beforeAll(() => {
  const source = join(HERE, "barrier-table.c");
  const dir = join(cacheSubdir("walker-core"), `barrier-${cacheKey([readFileSync(source)]).slice(0, 16)}`);
  mkdirSync(dir, { recursive: true });
  program = join(dir, "prog");
  if (!existsSync(program)) run("gcc", ["-O1", "-fno-omit-frame-pointer", source, "-o", program]);
  scratch = mkdtempSync(join(tmpdir(), "rw-barrier-core-"));
  const stops = [0, 1, 2, 3].flatMap((i) => [...(i > 0 ? ["-ex", "continue"] : []), "-ex", `gcore ${join(scratch, `core${i}`)}`]);
  run("gdb", ["-nx", "-batch", "-ex", "set debuginfod enabled off", "-ex", "break rw_barrier_stop", "-ex", "run", ...stops, program]);
  for (let i = 0; i < 4; i++) walks.push(walkCore(join(scratch, `core${i}`)));
}, 120_000);

afterAll(() => {
  if (scratch !== "") rmSync(scratch, { recursive: true, force: true });
});

const frames = (i: number): CoreFrame[] => walks[i]!.threads[0]!.frames;
/** What two walks of one stack share: frame #1's pc (and its offset in c_descend) is the stop's own call site, different at each stop. */
const shape = (f: CoreFrame): unknown =>
  f.index === 1 ? { sp: f.sp, cfa: f.cfa, function: f.function?.replace(/\+0x[0-9a-f]+$/, "") } : { sp: f.sp, cfa: f.cfa, function: f.function, pc: f.pc };

describe("roots on a core whose return addresses the runtime's table replaced (a stand-in program)", () => {
  it("the table has one part per thread record", () => {
    expect(RETURN_BARRIER_THREADS).toBe(MAX_THREADS);
  });

  it("armed: the same frames as the pristine core, the three restored ones marked", () => {
    expect(walks[0]!.threads[0]!.stopReason).toBe("stack-end");
    expect(walks[1]!.threads[0]!.stopReason).toBe("stack-end");
    expect(frames(1).map(shape)).toEqual(frames(0).map(shape));
    expect(frames(0).length).toBeGreaterThan(40);
    expect(frames(0).filter((f) => f.returnBarrier)).toEqual([]);
    const marked = frames(1).filter((f) => f.returnBarrier);
    // c_descend(n) is frame 41 - n + 1 (#0 the stop, #1 c_descend(0)): 10, 20 and 30 are #12, #22, #32.
    expect(marked.map((f) => f.index)).toEqual([12, 22, 32]);
    expect(walks[1]!.note).toBeUndefined();
  });

  it("a corrupt table (armed 65) is one line, not used: the walk ends at the innermost trampoline, naming its slot", () => {
    const innermost = frames(1).find((f) => f.returnBarrier)!;
    expect(walks[2]!.note).toMatch(/^return barriers: rw_return_barriers\[0\]\.armed is 65, expected at most 64 \(a corrupt table\); walked without the table/);
    const t = walks[2]!.threads[0]!;
    expect(t.stopReason).toBe("return-barrier");
    expect(t.stopDetail).toContain(`return-address slot ${hex(innermost.pcSlot)} holds the return-barrier trampoline`);
    expect(t.frames.length).toBe(innermost.index);
    expect(t.frames.map(shape)).toEqual(frames(0).slice(0, innermost.index).map(shape));
  });

  it("a slot holding the trampoline without a table entry ends that thread's walk there, naming the slot", () => {
    const innermost = frames(1).find((f) => f.returnBarrier)!;
    const t = walks[3]!.threads[0]!;
    expect(walks[3]!.note).toBeUndefined();
    expect(t.stopReason).toBe("return-barrier");
    expect(t.stopDetail).toContain(hex(innermost.pcSlot));
    expect(t.frames.length).toBe(innermost.index);
  });

  it("the command marks restored frames (text and --json) and prints a corrupt table's line on stderr", () => {
    let text = "";
    rootsCommand(join(scratch, "core1"), undefined, { json: false, maxDepth: 1000 }, (s) => (text += s));
    expect(text.match(/\[native, return barrier: pc from the runtime's table\]/g)?.length).toBe(3);
    let json = "";
    rootsCommand(join(scratch, "core1"), undefined, { json: true, maxDepth: 1000 }, (s) => (json += s));
    const parsed = JSON.parse(json) as { threads: { frames: { returnBarrier?: boolean }[] }[] };
    expect(parsed.threads[0]!.frames.flatMap((f, i) => (f.returnBarrier === true ? [i] : []))).toEqual([12, 22, 32]);
    let warned = "";
    rootsCommand(
      join(scratch, "core2"),
      undefined,
      { json: true, maxDepth: 1000 },
      () => {},
      (s) => (warned += s),
    );
    expect(warned).toMatch(/^rootwalk roots: return barriers: rw_return_barriers\[0\]\.armed is 65, expected at most 64 \(a corrupt table\)[^\n]*\n$/);
  });
});
