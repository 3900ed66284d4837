/*
 * The world: the thread records and the one lock that stops every thread for a collection or a
 * JavaScript call.
 *
 * Stop the world: one mutex + condvar. The initiator sets gc_requested, parks itself and waits
 * until no thread is RUNNING, calls JavaScript, clears gc_requested and wakes everyone. A
 * RUNNING thread parks at its next runtime entry (gc_safepoint, gc_alloc, ...).
 *
 * Safepoint watchdog: the initiator waits at most `safepoint_timeout_ms` (rw_setup; 0 = forever)
 * for the RUNNING threads to park. When the time is up it ends the process (exit 3) naming each
 * thread still running, the return address of its last runtime entry (its last safepoint, with
 * the symbol dladdr finds) and how long it has run since it left the runtime: a thread in a
 * loop without safepoints would otherwise hang the run silently.
 */
#include "runtime.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

RW_EXPORT rw_thread rw_threads[RW_MAX_THREADS];
int thread_count;

pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
volatile int gc_requested;
int running;
__thread rw_thread *self;
rw_js_callback js_callback;
volatile int initialized;
uint64_t stress_every;
int no_gc;
uint64_t safepoint_timeout_ms = 10000;

/* Lock held, self RUNNING: park until no collection is requested. */
void park_locked(void) {
  self->state = ST_PARKED;
  running--;
  pthread_cond_broadcast(&cond);
  while (gc_requested) pthread_cond_wait(&cond, &lock);
  self->state = ST_RUNNING;
  running++;
}
/* Lock held, the timeout passed with threads still RUNNING: name them and end the process. */
static void safepoint_timeout(uint64_t waited_ns) __attribute__((noreturn));
static void safepoint_timeout(uint64_t waited_ns) {
  uint64_t now = now_ns(CLOCK_MONOTONIC);
  fprintf(stderr, "rootwalk run: safepoint timeout: thread #%d requested a collection and waited %.1f s (--safepoint-timeout=%llu ms) for",
          (int)(self - rw_threads), (double)waited_ns / 1e9, (unsigned long long)safepoint_timeout_ms);
  for (int t = 0; t < thread_count; t++) {
    const rw_thread *r = &rw_threads[t];
    if (r->state != ST_RUNNING) continue;
    double ran_s = (double)(now - r->left_ns) / 1e9;
    if (r->ra == 0) {
      fprintf(stderr, "\n  thread #%d, which has run %.1f s since it started and has reached no safepoint", t, ran_s);
      continue;
    }
    Dl_info info;
    memset(&info, 0, sizeof info);
    const char *where = "?";
    long long offset = 0;
    if (dladdr((void *)(uintptr_t)r->ra, &info) != 0 && info.dli_sname != NULL) {
      where = info.dli_sname;
      offset = (long long)(r->ra - (uint64_t)(uintptr_t)info.dli_saddr);
    }
    fprintf(stderr, "\n  thread #%d, which has run %.1f s since its last safepoint, %s+0x%llx (return address 0x%llx), without reaching another",
            t, ran_s, where, offset, (unsigned long long)r->ra);
  }
  fprintf(stderr, "\n  (a loop without calls or gc_safepoint polls never stops for a collection; poll in it, or mark the thread stuck with thread_stuck_start)\n");
  fflush(stderr);
  json_failure("safepoint timeout: a collection waited for a thread that reaches no safepoint (the threads are named on stderr)");
  _exit(3);
}

/* Lock held: waits until no thread is RUNNING, at most safepoint_timeout_ms (0: forever). */
static void wait_for_running_threads_locked(void) {
  if (safepoint_timeout_ms == 0) {
    while (running > 0) pthread_cond_wait(&cond, &lock);
    return;
  }
  uint64_t start = now_ns(CLOCK_MONOTONIC);
  uint64_t timeout_ns = safepoint_timeout_ms * 1000000ull;
  while (running > 0) {
    uint64_t waited = now_ns(CLOCK_MONOTONIC) - start;
    if (waited >= timeout_ns) safepoint_timeout(waited);
    /* The condvar runs on CLOCK_REALTIME: a deadline from the remaining monotonic time. */
    uint64_t deadline = now_ns(CLOCK_REALTIME) + (timeout_ns - waited);
    struct timespec at = {(time_t)(deadline / 1000000000ull), (long)(deadline % 1000000000ull)};
    int e = pthread_cond_timedwait(&cond, &lock, &at);
    if (e != 0 && e != ETIMEDOUT) fatal("pthread_cond_timedwait failed: %s", strerror(e));
  }
}

/* Lock held, self RUNNING with its frames recorded: stop every other thread. */
void stw_begin(void) {
  while (gc_requested) park_locked();
  gc_requested = 1;
  self->state = ST_PARKED;
  running--;
  wait_for_running_threads_locked();
  return_barriers_disarm_locked(); /* every reader of a stack during the stop sees it pristine */
}

void stw_end(uint64_t new_state) {
  return_barriers_reinstall_locked(new_state);
  self->state = new_state;
  if (new_state == ST_RUNNING) running++;
  __atomic_store_n(&gc_requested, 0, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&cond);
}

int64_t js_call(int32_t kind, uint64_t a, uint64_t b) {
  int64_t r = js_callback(kind, (int32_t)(self - rw_threads), a, b);
  if (r == -2) {
    fflush(stdout);
    fflush(stderr);
    json_failure(failure_message);
    _exit(3); /* the callback's message says everything */
  }
  if (r < 0) fatal("the collector failed (see the message above); stopping rather than running on with stale roots");
  return r;
}

void collect_now(void) {
  pthread_mutex_lock(&lock);
  stw_begin();
  if (!no_gc) js_call(JS_COLLECT, 0, 0);
  stw_end(ST_RUNNING);
  pthread_mutex_unlock(&lock);
}

/* Lock held. A new record for the calling thread, RUNNING. */
void register_self_locked(uint64_t stack_top) {
  while (gc_requested) pthread_cond_wait(&cond, &lock);
  if (thread_count >= RW_MAX_THREADS) fatal("more than %d threads", RW_MAX_THREADS);
  rw_thread *t = &rw_threads[thread_count];
  memset(t, 0, sizeof *t);
  memset(&rw_return_barriers[thread_count], 0, sizeof rw_return_barriers[0]);
  thread_count++;
  t->stack_top = stack_top;
  t->boundary_ra = (uint64_t)(uintptr_t)rw_managed_return;
  t->state = ST_RUNNING;
  t->left_ns = now_ns(CLOCK_MONOTONIC);
  running++;
  self = t;
}

void unregister_self(void) {
  pthread_mutex_lock(&lock);
  if (self->state == ST_RUNNING) running--;
  return_barriers_drop_own(0); /* every managed frame has returned; the stack goes away */
  self->state = ST_DEAD;
  pthread_cond_broadcast(&cond);
  pthread_mutex_unlock(&lock);
}
