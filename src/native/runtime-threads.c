/*
 * Threads the runtime starts: rw_main's (rw_run_main, runtime.c) and gc_thread_start's, each on a
 * stack region of its own (runtime-stacks.c) with an alternate signal stack (runtime-faults.c),
 * registered in the world (a record, RUNNING) before it runs managed code and DEAD once it
 * returned. A gc_thread_start handle is its join slot's index + 1; a thread is joined once
 * (gc_thread_join, or rw_stack_retire for one the program never joined).
 */
#include "runtime.h"

#include <stdlib.h>
#include <string.h>

typedef struct join_slot {
  pthread_t thread;
  start_args *args;
  int used;
  int joined;
} join_slot;

static join_slot joins[RW_MAX_THREADS];
static int join_count;

/* Joins the finished (DEAD: it has unregistered and returns without the lock) thread `user`
 * unless it was joined already. Lock held. */
void join_finished_locked(start_args *user) {
  for (int j = 0; j < join_count; j++) {
    if (joins[j].args == user && !joins[j].joined) {
      pthread_join(joins[j].thread, NULL);
      joins[j].joined = 1;
    }
  }
}

static void *thread_main(void *p) {
  start_args *args = p;
  /* Above every frame the walk reads (rw_call_managed's and the managed frames below it): on
   * x86-64 the CFA of this frame; on AArch64 just above this frame's (x29, x30) record, which
   * gcc keeps at the bottom of the frame, above its callees' frames. */
  uint64_t top = (uint64_t)(uintptr_t)__builtin_frame_address(0) + 16;
  give_alternate_signal_stack();
  pthread_mutex_lock(&lock);
  register_self_locked(top);
  args->record = self;
  pthread_mutex_unlock(&lock);
  args->result = rw_call_managed(args->fn, args->arg);
  unregister_self();
  return NULL;
}

/* Starts a thread on a free stack region (rw_main's for the main thread). */
pthread_t spawn(start_args *args) {
  pthread_mutex_lock(&lock);
  args->stack = take_stack_locked(args);
  pthread_mutex_unlock(&lock);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  uint64_t usable = guarded_stack_bytes(args->stack);
  if (pthread_attr_setstack(&attr, usable_stack_base(args->stack), usable) != 0) fatal("cannot place a thread stack of %llu bytes", (unsigned long long)usable);
  pthread_t thread;
  int e = pthread_create(&thread, &attr, thread_main, args);
  pthread_attr_destroy(&attr);
  if (e != 0) fatal("pthread_create failed: %s", strerror(e));
  return thread;
}

int64_t rw_impl_gc_thread_start(void *fn, uint64_t arg, uint64_t *frame) {
  require_running("gc_thread_start");
  capture(frame);
  park_if_requested();
  if (fn == NULL) fatal("gc_thread_start: null function");
  start_args *args = calloc(1, sizeof *args);
  if (args == NULL) fatal("out of memory");
  args->fn = fn;
  args->arg = arg;
  pthread_mutex_lock(&lock);
  if (join_count >= RW_MAX_THREADS) fatal("more than %d threads", RW_MAX_THREADS);
  int index = join_count++;
  joins[index].args = args;
  joins[index].used = 1;
  pthread_mutex_unlock(&lock);
  joins[index].thread = spawn(args);
  restore(frame);
  return index + 1;
}

void rw_impl_gc_thread_join(int64_t handle, uint64_t b, uint64_t *frame) {
  (void)b;
  require_running("gc_thread_join");
  capture(frame);
  if (handle < 1 || handle > join_count || !joins[handle - 1].used || joins[handle - 1].joined) {
    fatal("gc_thread_join(%lld): not a handle from gc_thread_start, or joined already", (long long)handle);
  }
  join_slot *slot = &joins[handle - 1];
  pthread_mutex_lock(&lock);
  while (gc_requested) park_locked();
  self->state = ST_SAFE; /* frames recorded above: scanned and relocated while we wait */
  running--;
  pthread_cond_broadcast(&cond);
  pthread_mutex_unlock(&lock);
  pthread_join(slot->thread, NULL);
  slot->joined = 1;
  pthread_mutex_lock(&lock);
  free_stack_locked(slot->args);
  while (gc_requested) pthread_cond_wait(&cond, &lock);
  self->state = ST_RUNNING;
  running++;
  pthread_mutex_unlock(&lock);
  restore(frame);
}

