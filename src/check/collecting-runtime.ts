/**
 * The runtime's entry points (src/native/runtime.c, docs/writing-programs.md "The runtime ABI") during which the
 * calling thread can stop for a collection: each polls, parks or collects. Not listed: gc_init
 * (nothing can be collected before it), thread_stuck_end (the thread's objects stay pinned until
 * it returns), no_gc_thread. The check plugin (src/check-plugin/gc-check.cpp COLLECTING_RUNTIME)
 * holds the same list; test/check/check.test.ts fails when the two differ.
 */
export const COLLECTING_RUNTIME_ENTRY_POINTS = [
  "gc_alloc",
  "gc_safepoint",
  "gc_collect",
  "gc_thread_start",
  "gc_thread_join",
  "thread_stuck_start",
  "gc_add_global",
] as const;
