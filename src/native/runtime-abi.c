/*
 * The ABI entries but gc_alloc (runtime-alloc.c) and the thread ones (runtime-threads.c): each
 * records the managed caller's frame (capture), may stop the world to call JavaScript, and hands
 * the relocated registers back (restore).
 */
#include "runtime.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static char init_path[4096];
static uint64_t init_base;
static uint64_t safepoint_counter;

void rw_impl_gc_init(void *map, uint64_t unused, uint64_t *frame) {
  (void)unused;
  require_running("gc_init");
  capture(frame);
  if (map == NULL) fatal("gc_init(NULL): the stack map pointer is null (is @__LLVM_StackMaps defined? the program needs at least one statepoint)");
  pthread_mutex_lock(&lock);
  stw_begin();
  Dl_info info;
  memset(&info, 0, sizeof info);
  if (dladdr(map, &info) != 0 && info.dli_fname != NULL) {
    snprintf(init_path, sizeof init_path, "%s", info.dli_fname);
    init_base = (uint64_t)(uintptr_t)info.dli_fbase;
  } else {
    init_path[0] = 0;
    init_base = 0;
  }
  js_call(JS_INIT, (uint64_t)(uintptr_t)map, 0);
  __atomic_store_n(&initialized, 1, __ATOMIC_RELEASE);
  stw_end(ST_RUNNING);
  pthread_mutex_unlock(&lock);
  restore(frame);
}

void rw_impl_gc_safepoint(uint64_t a, uint64_t b, uint64_t *frame) {
  (void)a;
  (void)b;
  if (self != NULL && self->state == ST_NOGC) return;
  require_running("gc_safepoint");
  require_initialized("gc_safepoint");
  capture(frame);
  if (stress_hit(&safepoint_counter)) collect_now();
  else park_if_requested();
  restore(frame);
}

void rw_impl_gc_collect(uint64_t a, uint64_t b, uint64_t *frame) {
  (void)a;
  (void)b;
  require_running("gc_collect");
  require_initialized("gc_collect");
  capture(frame);
  collect_now();
  restore(frame);
}

void rw_impl_thread_stuck_start(uint64_t a, uint64_t b, uint64_t *frame) {
  (void)a;
  (void)b;
  require_running("thread_stuck_start");
  require_initialized("thread_stuck_start");
  capture(frame);
  pthread_mutex_lock(&lock);
  stw_begin();
  js_call(JS_STUCK_START, 0, 0); /* pins what the recorded frames reference */
  self->stuck_sp = self->sp;
  stw_end(ST_STUCK); /* stays out of the running count */
  pthread_mutex_unlock(&lock);
  restore(frame);
}

void rw_impl_thread_stuck_end(uint64_t a, uint64_t b, uint64_t *frame) {
  (void)a;
  (void)b;
  if (self == NULL || self->state != ST_STUCK) fatal("thread_stuck_end without thread_stuck_start");
  pthread_mutex_lock(&lock);
  while (gc_requested) pthread_cond_wait(&cond, &lock);
  capture(frame);
  self->state = ST_RUNNING;
  running++;
  stw_begin();
  js_call(JS_STUCK_END, 0, 0); /* unpins */
  stw_end(ST_RUNNING);
  pthread_mutex_unlock(&lock);
  restore(frame);
}

void rw_impl_no_gc_thread(uint64_t a, uint64_t b, uint64_t *frame) {
  (void)a;
  (void)b;
  (void)frame;
  require_running("no_gc_thread");
  pthread_mutex_lock(&lock);
  return_barriers_drop_own(1); /* never scanned again: its frames need no barrier */
  self->state = ST_NOGC;
  running--;
  pthread_cond_broadcast(&cond);
  pthread_mutex_unlock(&lock);
}

void rw_impl_gc_add_global(void *slot, uint64_t b, uint64_t *frame) {
  (void)b;
  require_running("gc_add_global");
  require_initialized("gc_add_global");
  if (slot == NULL || ((uintptr_t)slot & 7) != 0) fatal("gc_add_global(%p): not an 8-aligned slot", slot);
  capture(frame);
  pthread_mutex_lock(&lock);
  stw_begin();
  js_call(JS_ADD_GLOBAL, (uint64_t)(uintptr_t)slot, 0);
  stw_end(ST_RUNNING);
  pthread_mutex_unlock(&lock);
  restore(frame);
}

/* The library gc_init's stack map is in (dladdr), for map-registration.ts: its path and base. */
RW_EXPORT const char *rw_init_path(void) { return init_path; }
RW_EXPORT uint64_t rw_init_base(void) { return init_base; }
