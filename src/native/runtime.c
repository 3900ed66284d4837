/*
 * What JavaScript calls to set the runtime up, load the program and run it (src/native/
 * runtime-library.ts binds these with koffi), and the addresses it reads the records at. The
 * runtime's overview and its parts: runtime.h.
 */
#include "runtime.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static char result_text[64];

/* Called by the JavaScript side after it appended collection `collection`'s walks to the walk log
 * (ROOTWALK_WALK_LOG): does nothing, so that a debugger can stop the process there, with every
 * thread still stopped where the log says, and compare (test/native-runtime/walk-vs-gdb). */
RW_EXPORT __attribute__((noinline)) void rw_walk_logged(uint64_t collection) {
  __asm__ volatile("" : : "r"(collection) : "memory");
}

RW_EXPORT int rw_setup(void *callback, uint64_t stress, int disable_gc, uint64_t timeout_ms, int poison) {
  js_callback = (rw_js_callback)callback;
  safepoint_timeout_ms = timeout_ms;
  poison_on = poison;
  install_fault_handlers();
  stress_every = stress;
  no_gc = disable_gc;
  return 0;
}

RW_EXPORT int rw_thread_count(void) { return thread_count; }
RW_EXPORT void *rw_threads_address(void) { return rw_threads; }
RW_EXPORT void *rw_managed_return_address(void) { return rw_managed_return; }
RW_EXPORT const char *rw_result_text(void) { return result_text; }

/* Runs the program's i64 rw_main() on a new thread on stack region 0 and waits for it. Call with .async(). */
RW_EXPORT int rw_run_main(const char *program) {
  if (js_callback == NULL) fatal("rw_run_main before rw_setup");
  void *handle = dlopen(program, RTLD_NOW | RTLD_NOLOAD);
  if (handle == NULL) handle = dlopen(program, RTLD_NOW);
  if (handle == NULL) return -2;
  void *fn = dlsym(handle, "rw_main");
  if (fn == NULL) return -1;
  start_args args;
  memset(&args, 0, sizeof args);
  args.fn = fn;
  args.is_main = 1;
  pthread_t thread = spawn(&args);
  pthread_join(thread, NULL);
  pthread_mutex_lock(&lock);
  free_stack_locked(&args);
  pthread_mutex_unlock(&lock);
  snprintf(result_text, sizeof result_text, "%lld", (long long)args.result);
  return 0;
}
