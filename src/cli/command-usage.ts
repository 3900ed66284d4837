/*
 * Every command's usage line, summary and option table: what `rootwalk help` and `COMMAND --help`
 * print, and what each command parses (src/cli/options.ts reads the option spellings: an option is
 * parsed exactly when its help lists it). A leaf: it imports nothing, so every command may read it.
 */

/** `rootwalk run` (docs/cli.md "rootwalk run"; src/cli/run-command.ts). */
export const RUN_USAGE =
  "rootwalk run PROGRAM.ll|.o|.so... [--plimmix] [--target x86-64|aarch64] [--llc-flag=FLAG]... [--opt-flag=FLAG]... [--stress[=N]] [--no-gc] [--verify] [--poison] [--generational] [--nursery SIZE] [--no-return-barriers] [--walk chunks|unwind] [--heap SIZE] [--stack SIZE] [--thread-stack SIZE] [--threads N] [--svg FILE] [--report FILE.html] [--gc-trace] [--safepoint-timeout SECONDS] [--progress SECONDS] [--json] [--llvm VERSION] [--no-check | --strict-check]";

/** Every option of `rootwalk run`, with its meaning and units (`rootwalk run --help`). */
export const RUN_OPTIONS: Readonly<Record<string, string>> = {
  "--plimmix": 'compile .ll sources as gc "plimmix" gcroot code (default: gc "statepoint-example" through RewriteStatepointsForGC)',
  "--target x86-64|aarch64":
    "the machine to build for: only the one rootwalk runs on (run executes natively; AArch64 programs run in the arm64 Node under qemu-user, docs/aarch64.md)",
  "--llc-flag=FLAG": "one more llc flag, after the defaults (repeatable)",
  "--opt-flag=FLAG": "one more opt flag for statepoint code (repeatable)",
  "--stress[=N]": "collect at every N-th gc_safepoint and allocation (N = 1 when omitted; only after '='), evacuating every movable object; implies --poison",
  "--no-gc": "never collect (the heap must hold everything)",
  "--verify": "check the heap and every root after each collection (exit 4 on failures)",
  "--poison": "fill what each collection frees with 0xdeadbeec, so a stale pointer faults",
  "--generational":
    "nursery (minor) collections with sticky mark bits; the program calls gc_write_barrier(obj) after every store of a GC pointer into an object; with --stress, every 4th collection is full; with --verify, a missing barrier is named (exit 4)",
  "--nursery SIZE":
    "a nursery collection after the mutators allocated this much since the last collection, with K/M/G suffixes, 32K..4G (default 4M, at most a quarter of --heap); implies --generational",
  "--no-return-barriers":
    "under --generational, walk whole stacks at every collection: no return barriers (by default a nursery collection walks only the frames that ran since the last collection; docs/writing-programs.md)",
  "--walk chunks|unwind": "how stopped threads are walked: to where they entered managed code (chunks, default) or to their outermost frame",
  "--heap SIZE": "heap size in bytes, with K/M/G suffixes, 1M..4G (default 256M)",
  "--stack SIZE": "rw_main's stack, with K/M/G suffixes (default 1G); every stack lives in the 4 GiB scan memory, 3.5G of it for stacks",
  "--thread-stack SIZE": "the stack of each gc_thread_start thread (default 64M)",
  "--threads N":
    "gc_thread_start threads alive at once, their stacks reserved up front (default 32); --stack + N x --thread-stack, a 64K guard each, must fit 3.5G",
  "--svg FILE": "write a heap map (SVG) after the run; its path is printed on stderr",
  "--report FILE.html":
    "write the run report after the run: one self-contained HTML page (pauses and their phases, heap, bytes moved, frames scanned and skipped and roots per thread, the heap map); its path is printed on stderr",
  "--gc-trace":
    'one line per collection on stderr as it happens: number, kind, pause and phases (ms), heap before->after, frames scanned and skipped, roots (docs/cli.md "--gc-trace")',
  "--safepoint-timeout SECONDS": "stop (exit 3) when a collection waits this long for a thread to reach a safepoint (default 10; 0 = never)",
  "--progress SECONDS": "progress on stderr every this many seconds (default 1 on a terminal, 5 otherwise; 0 = off; none with --json)",
  "--json": "stdout carries one JSON object alone (the program's own stdout goes to stderr), on failure too: {error, exitCode, message, ...}",
  "--llvm VERSION": "the LLVM major version to compile with, 14..19 (wins over ROOTWALK_LLVM)",
  "--no-check": "do not run rootwalk check on the IR first",
  "--strict-check": "a finding of rootwalk check is an error (exit 1, nothing run)",
};

/**
 * Each command's usage: every option it takes, with its meaning and units. `rootwalk help CMD`
 * and `rootwalk CMD --help` print it; `rootwalk help` prints the usage lines. Values: `--opt
 * value` and `--opt=value` both work; `--stress[=N]` takes its value only after `=`. Each option
 * key is also the command's parser's input: its spelling says its syntax (`--json` a flag, `--heap
 * SIZE` a value, `--stress[=N]` a value after '='; the grammar: src/cli/options.ts).
 */
export const COMMAND_USAGE: Readonly<Record<string, { usage: string; summary: string; options: Readonly<Record<string, string>> }>> = {
  dump: {
    usage: "rootwalk dump FILE...|- [--format readobj|text|json] [--readobj-version 14..19]",
    summary:
      "print the stack maps of x86-64 and AArch64 ELF objects, libraries, executables (- reads stdin); a bad file is reported and the others still printed (exit 1 at the end)",
    options: {
      "--format readobj|text|json":
        "readobj: what llvm-readobj --stackmap prints; text (default): addresses, frame sizes, CFA rules, roots; json: the same as one object",
      "--readobj-version 14..19": "whose llvm-readobj text --format readobj imitates (default: the selected LLVM's)",
    },
  },
  walk: {
    usage: "rootwalk walk SNAPSHOT.json [--json] [--method segments|find-ranges|geometry|naive]",
    summary: "walk a recorded stack (the snapshot format: docs/snapshot-format.md, schemas/stack-snapshot.schema.json) and print every frame and root",
    options: {
      "--json": "print {roots, transitions, frames, stoppedAt} as one JSON object",
      "--method segments|find-ranges|geometry|naive":
        "how split stacks are crossed: libgcc's stacklet list (default), __splitstack_find ranges, geometry alone, or not at all",
    },
  },
  roots: {
    usage: "rootwalk roots CORE [EXECUTABLE] [--json] [--max-depth N] [--sysroot DIR]",
    summary:
      "every thread of a core file (gcore's, the kernel's or qemu-user's; x86-64 or AArch64): each frame, managed and native, and the roots of managed frames at safepoints " +
      "(a root in a register is named by it: rbx, r12, x20, ...)",
    options: {
      "--json": "print {threads: [{tid, frames: [...]}]} as one JSON object",
      "--max-depth N": "walk at most N frames per thread (default 2000000, 1..1000000000; a deeper stack ends with depth-limit)",
      "--sysroot DIR": "look for the files the core names (NT_FILE) or its program loaded (a qemu-user core) under DIR first (gdb's set sysroot, qemu's -L)",
      EXECUTABLE:
        "the program's file, when it moved since the core was written (an ELF for the core's machine whose build id matches, else refused: exit 1); required for a qemu-user core, which names no files",
    },
  },
  compile: {
    usage:
      "rootwalk compile [--statepoint | --plimmix] [--target x86-64|aarch64] [--llc-flag FLAG]... [--opt-flag FLAG]... [--llvm VERSION] [--no-check | --strict-check] FILE.ll -o OUT.o",
    summary: "compile a program for rootwalk (llc -O2, default options); rootwalk check runs first and its findings are warnings",
    options: {
      "--statepoint": 'gc "statepoint-example" code: opt -passes=rewrite-statepoints-for-gc first (without it such code gets no stack maps: a warning)',
      "--plimmix": 'gc "plimmix" gcroot code: llc with rootwalk\'s plugin (built on first use)',
      "--target x86-64|aarch64":
        "the machine to compile for: llc and opt get -mtriple=x86_64-linux-gnu or aarch64-linux-gnu (default: llc's default target; --plimmix: x86-64 only)",
      "--llc-flag FLAG": "one more llc flag, after the defaults (repeatable)",
      "--opt-flag FLAG": "one more opt flag for --statepoint (repeatable)",
      "--llvm VERSION": "the LLVM major version to use, 14..19 (wins over ROOTWALK_LLVM)",
      "--no-check": "do not run rootwalk check on the IR first",
      "--strict-check": "a finding of rootwalk check is an error (exit 1, nothing built)",
      "-o OUT.o": "the object file to write",
    },
  },
  check: {
    usage: "rootwalk check PROGRAM.ll|.bc...|PROGRAM.o|.so [--collects NAME,...]... [--generational] [--target x86-64|aarch64] [--json] [--llvm VERSION]",
    summary:
      "find GC-safety mistakes before the program runs: a function without a GC strategy holding a GC pointer, an integer made from one, a stale gcroot copy, an interior pointer argument, a GC pointer in a stack slot (each across a call that can collect), no gc_init; a .o/.so: calls that can collect without a safepoint record. Exit 0 clean, 1 findings",
    options: {
      "--collects NAME,...": "more functions that can collect (external functions the check cannot see into; repeatable)",
      "--generational":
        "the program is meant to run under --generational: also report missing-write-barrier (a store of a GC pointer into a GC object with no gc_write_barrier of that object before the next call that can collect or the return)",
      "--target x86-64|aarch64": "the machine the IR is checked for (opt -mtriple; default: the IR's own triple), as compile --target builds it",
      "--json": "print {programs, findings: [...], counts} as one JSON object",
      "--llvm VERSION": "the LLVM major version to use, 14..19 (wins over ROOTWALK_LLVM)",
    },
  },
  sim: {
    usage:
      "rootwalk sim [--workload gcbench|mt-gcbench|deep-recursion|binary-trees] [--heap SIZE] [--stress[=N]] [--verify] [--poison] [--generational] [--nursery SIZE]\n" +
      "             [--svg FILE] [--report FILE.html] [--gc-trace] [--json] [--sweep] [--scale X] [--threads N] [--seed N]",
    summary: "the collector and walker on simulated stacks (--stress=N: collect at every N-th allocation; --threads 1..32, --scale 0.0001..10, --heap 1M..4G)",
    options: {
      "--workload NAME": "gcbench (default), mt-gcbench, deep-recursion or binary-trees",
      "--heap SIZE": "heap size in bytes, with K/M/G suffixes, 1M..4G (default 16M)",
      "--stress[=N]": "collect at every N-th allocation (N = 1 when omitted; only after '='), evacuating every movable object",
      "--verify": "check the heap and the roots after every collection",
      "--poison": "fill what each collection frees with a poison pattern (implied by --stress)",
      "--generational":
        "nursery (minor) collections with sticky mark bits (the workloads store through the write barrier); with --stress, every 4th collection is full",
      "--nursery SIZE": "the nursery budget, with K/M/G suffixes, 32K..4G (default 4M, at most a quarter of --heap); implies --generational",
      "--svg FILE": "write a heap map (SVG) after the run",
      "--report FILE.html":
        "write the run report after the run: one self-contained HTML page (pauses and their phases, heap, bytes moved, frames scanned and skipped and roots per thread, the heap map)",
      "--gc-trace":
        'one line per collection on stderr as it happens: number, kind, pause and phases (ms), heap before->after, frames scanned and skipped, roots (docs/cli.md "--gc-trace")',
      "--json":
        "print {collections, minorCollections, majorCollections, bytesPromoted, objectsMoved, maxPauseMs, verifyFailures, fragmentation, ...} as one JSON object",
      "--sweep": "find the minimum heap, then run at 1x..6x of it",
      "--scale X": "multiply the workload's work and memory, 0.0001..10 (default 1; 0.02 with --stress)",
      "--threads N": "mutator threads for mt-gcbench, 1..32 (default 4; each has a 32 MiB simulated stack)",
      "--seed N": "random seed, 0..2^32-1 (default 42)",
    },
  },
  run: {
    usage: RUN_USAGE,
    summary:
      "compile, link with the native runtime and run rw_main with the collector (--stress=N: collect at every N-th safepoint); builds for the machine Node runs on (x86-64, or AArch64 with gcc or aarch64-linux-gnu-gcc)",
    options: RUN_OPTIONS,
  },
  demo: {
    usage: "rootwalk demo [--llvm VERSION] [--out-dir DIR]",
    summary: "compile and run the bundled example programs with and without the collector; heap maps go to DIR (default: the current folder)",
    options: {
      "--llvm VERSION": "the LLVM major version to use, 14..19 (wins over ROOTWALK_LLVM)",
      "--out-dir DIR": "where the heap maps (SVG) go (default: the current folder)",
    },
  },
  reduce: {
    usage: "rootwalk reduce PROGRAM.ll -o SMALL.ll [--timeout SECONDS] -- check|run OPTION...",
    summary:
      "shrink a program that fails (a check finding, a verify failure or a fault under run) to a small one that fails the same way, with llvm-reduce and rootwalk as its test",
    options: {
      "-o SMALL.ll": "the reduced program to write (textual IR)",
      "--timeout SECONDS":
        "bound on the whole reduction (default 600; 0 = none): when it passes, the smallest candidate that still fails is written and the bound is named",
      "-- check|run OPTION...":
        "how the program fails: rootwalk check or rootwalk run and the options that make it fail, as that command takes them (e.g. -- run --stress --verify; --llvm here also picks llvm-reduce)",
    },
  },
  help: { usage: "rootwalk help [COMMAND]", summary: "print the usage of one command, or of all", options: {} },
};

export const USAGE = `usage: rootwalk <command> [options]      (rootwalk help COMMAND, rootwalk COMMAND --help)

commands:
${Object.values(COMMAND_USAGE)
  .map((c) => `  ${c.usage.replace(/^rootwalk /, "").replace(/\n {13}/g, "\n      ")}\n        ${c.summary}`)
  .join("\n")}
  --version
        print rootwalk's version and the LLVM it found

LLVM: --llvm VERSION, else ROOTWALK_LLVM (a version 14..19 or a folder holding llc), else the newest installed.
Exit codes: 0 ok, 1 bad input or usage, 3 runtime or collector failure (or an internal error), 4 verification failure.
Output is written whole before the exit, into a pipe too; a reader that stops early (| head) ends the command quietly, exit 0.
`;

/** `rootwalk help COMMAND`, `rootwalk COMMAND --help`: the usage, the summary and every option with its meaning. */
export function commandHelp(command: string): string {
  const c = COMMAND_USAGE[command]!;
  const options = Object.entries(c.options);
  const width = Math.max(0, ...options.map(([o]) => o.length));
  const table = options.length === 0 ? "" : `\noptions:\n${options.map(([o, meaning]) => `  ${o.padEnd(width)}  ${meaning}`).join("\n")}\n`;
  return `usage: ${c.usage}\n\n${c.summary}\n${table}`;
}
