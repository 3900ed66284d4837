/*
 * The cost of a return through a return barrier (issue 33): ns per return into the runtime's
 * rw_return_barrier_trampoline (src/native/runtime-entry.S, which calls rw_return_barrier_hit in
 * src/native/runtime-return-barrier.c: both compiled in as they are) against a plain return, in a
 * loop of calls to one function that, when `arm` is set, arms its own return-address slot before
 * returning (the same stores either way but the last). Stands in for the rest of the runtime:
 * one thread record, `self`, `fatal`.
 *
 *   gcc -O2 -fno-omit-frame-pointer -fno-ipa-ra -Isrc/native bench/native/return-barrier-cost.c \
 *       src/native/runtime-return-barrier.c src/native/runtime-entry.S -o /tmp/return-barrier-cost
 *   /tmp/return-barrier-cost
 *
 * (the entry stubs in runtime-entry.S call rw_impl_*, which this harness never calls: empty here).
 * -fno-ipa-ra: without it gcc keeps the loop's counter in a caller-saved register across the call
 * to the static callee, whose register use it knows, and the trampoline (which, as the ABI allows,
 * does not keep caller-saved registers) breaks the loop. LLVM does no such interprocedural
 * register allocation unless asked (-enable-ipra): managed code is safe.
 */
#include "runtime.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

rw_thread rw_threads[RW_MAX_THREADS];
int thread_count = 1;
__thread rw_thread *self;

void fatal(const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  vfprintf(stderr, format, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(3);
}

#define NEVER_CALLED(name) \
  void rw_impl_##name(void) { abort(); }
NEVER_CALLED(gc_init)
NEVER_CALLED(gc_alloc)
NEVER_CALLED(gc_safepoint)
NEVER_CALLED(gc_collect)
NEVER_CALLED(gc_thread_start)
NEVER_CALLED(gc_thread_join)
NEVER_CALLED(thread_stuck_start)
NEVER_CALLED(thread_stuck_end)
NEVER_CALLED(no_gc_thread)
NEVER_CALLED(gc_add_global)

static volatile uint64_t sink;

/* Returns x + 1; with `arm`, through the trampoline: its own return-address slot armed first. */
__attribute__((noinline)) static uint64_t callee(uint64_t x, int arm) {
  uint64_t *slot = (uint64_t *)__builtin_frame_address(0) + 1; /* above the saved rbp: the return address */
  rw_thread_barriers *b = &rw_return_barriers[0];
  b->entries[0].slot = (uint64_t)(uintptr_t)slot;
  b->entries[0].return_address = *slot;
  if (arm) {
    b->armed = 1;
    *slot = (uint64_t)(uintptr_t)rw_return_barrier_trampoline;
  }
  __asm__ volatile("" ::: "memory");
  return x + 1;
}

static double ns_per_call(int arm, uint64_t calls) {
  uint64_t start = now_ns(CLOCK_MONOTONIC);
  uint64_t x = 0;
  for (uint64_t i = 0; i < calls; i++) x = callee(x, arm);
  sink = x;
  return (double)(now_ns(CLOCK_MONOTONIC) - start) / (double)calls;
}

int main(void) {
  self = &rw_threads[0];
  const uint64_t calls = 20000000;
  ns_per_call(0, calls / 10);
  ns_per_call(1, calls / 10);
  for (int round = 0; round < 5; round++) {
    double plain = ns_per_call(0, calls);
    double barrier = ns_per_call(1, calls);
    printf("round %d: plain return %.2f ns, through the barrier %.2f ns: +%.2f ns per return\n", round, plain, barrier, barrier - plain);
  }
  return 0;
}
