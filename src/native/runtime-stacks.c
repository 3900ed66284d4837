/*
 * Stacks: every thread the runtime starts (rw_main's and gc_thread_start's) runs on a stack that
 * JavaScript placed in the scan memory, the shared WebAssembly.Memory the root scan reads in place
 * (src/native/thread-stacks.ts, src/memory/scan-memory.ts): rw_stack_add hands over each region
 * before rw_run_main as a typed-array view (its address is the region's native address), whose
 * lowest RW_GUARD_BYTES this file makes PROT_NONE (an overflow faults there: the memory never
 * grows, so the protection holds). Region 0 is rw_main's; the others serve gc_thread_start, one
 * thread each from its start until it is joined. rw_stack_retire gives a region back (protection
 * restored) once no live thread uses it. glibc keeps the thread's record and TLS at the top of
 * the stack it is given: inside the region, above the frames the scan reads.
 */
#include "runtime.h"

#include <sys/mman.h>
#include <unistd.h>

/* The least stack above the guard rw_stack_add accepts. */
#define RW_MIN_STACK_BYTES (64 * 1024)

typedef struct rw_stack {
  uint8_t *base; /* the region: guard at [base, base + RW_GUARD_BYTES), then the stack */
  uint64_t bytes;
  start_args *user; /* the thread on it until it is joined, or NULL */
} rw_stack;

static rw_stack stacks[RW_MAX_THREADS + 1];
static int stack_count;

/* Takes a region for a thread: the one of rw_main (index 0), else a free one of the others. Lock held. */
int take_stack_locked(start_args *user) {
  if (stack_count == 0) fatal("a thread was started before any stack was placed in the scan memory (rw_stack_add)");
  int first = user->is_main ? 0 : 1, end = user->is_main ? 1 : stack_count;
  for (int k = first; k < end; k++) {
    if (stacks[k].user != NULL) continue;
    stacks[k].user = user;
    return k;
  }
  if (user->is_main) fatal("rw_main's stack is in use already");
  fatal("gc_thread_start: all %d thread stacks are in use (--threads=%d: threads started and not yet joined; join some, or give a larger --threads)",
        stack_count - 1, stack_count - 1);
}

/* A joined (or never started) thread's region is free again. Lock held. */
void free_stack_locked(start_args *user) {
  if (stacks[user->stack].user == user) stacks[user->stack].user = NULL;
}

/* The region whose guard holds `address`, or -1 (the fault handler: no lock, read only). */
int guard_holding(uint64_t address) {
  for (int k = 0; k < stack_count; k++) {
    uint64_t base = (uint64_t)(uintptr_t)stacks[k].base;
    if (address >= base && address < base + RW_GUARD_BYTES) return k;
  }
  return -1;
}

/*
 * Places one stack region (a typed-array view on the scan memory: koffi passes its address), the
 * first call rw_main's. NULL when done, else a one-line reason. Before rw_run_main only.
 */
RW_EXPORT const char *rw_stack_add(void *region, uint64_t bytes) {
  if (region == NULL) return "the stack region's address is NULL (pass a typed-array view on the scan memory, not its buffer)";
  /* The kernel's page size (x86-64 4 KiB; AArch64 4, 16 or 64 KiB): mprotect needs it. */
  uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
  if (((uintptr_t)region & (page - 1)) != 0 || (bytes & (page - 1)) != 0) return "the stack region is not aligned to the page size (sysconf(_SC_PAGESIZE))";
  if (bytes <= RW_GUARD_BYTES + RW_MIN_STACK_BYTES) return "the stack region is too small for a guard and a stack";
  if (stack_count >= RW_MAX_THREADS + 1) return "more stack regions than threads";
  if (mprotect(region, RW_GUARD_BYTES, PROT_NONE) != 0) return "mprotect of the stack's guard failed";
  stacks[stack_count++] = (rw_stack){.base = region, .bytes = bytes, .user = NULL};
  return NULL;
}

/*
 * Gives back the region at `region` once no live thread runs on it (a thread that finished but
 * was never joined is joined here): its guard readable again. 0 done, 1 still in use by a live
 * thread (keep it), -1 not a region, -2 mprotect failed.
 */
RW_EXPORT int rw_stack_retire(void *region) {
  pthread_mutex_lock(&lock);
  int k = 0;
  while (k < stack_count && stacks[k].base != region) k++;
  int result = 0;
  if (k == stack_count) result = -1;
  else if (stacks[k].user != NULL) {
    start_args *user = stacks[k].user;
    if (user->record == NULL || user->record->state != ST_DEAD) result = 1;
    else {
      join_finished_locked(user);
      stacks[k].user = NULL;
    }
  }
  if (result == 0 && mprotect(region, RW_GUARD_BYTES, PROT_READ | PROT_WRITE) != 0) result = -2;
  if (result == 0) stacks[k] = stacks[--stack_count]; /* order no longer matters: the run is over */
  pthread_mutex_unlock(&lock);
  return result;
}

/* The address koffi passes for a pointer argument (a typed-array view: where its bytes are). */
RW_EXPORT uint64_t rw_address_of(void *p) { return (uint64_t)(uintptr_t)p; }

/* Where the stack of region `region` starts, above its guard, and how many bytes it has. */
void *usable_stack_base(int region) { return stacks[region].base + RW_GUARD_BYTES; }
uint64_t guarded_stack_bytes(int region) { return stacks[region].bytes - RW_GUARD_BYTES; }
