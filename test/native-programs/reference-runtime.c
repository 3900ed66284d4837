/*
 * rootwalk native test programs: the malloc-only REFERENCE runtime.
 *
 * Implements the program ABI (see programs.ts) without any garbage collection, so that every
 * program in this folder can be run, and its result known, independently of the real runtime:
 *
 *   void  gc_init(void *map)                 map must be non-null and look like an LLVM stack map
 *                                            v3 (byte 0 == 3) or a plimmix _GC_MAP_ v1 (i32 1)
 *   void *gc_alloc(i64 slots, i64 raw)       calloc(8 + 8*slots + raw); returns header + 8
 *   void  gc_safepoint(void), gc_collect(void)   count calls
 *   i64   gc_thread_start(void (*fn)(i64), i64 arg), void gc_thread_join(i64 handle)
 *                                            pthreads with 64 MiB stacks
 *   void  thread_stuck_start(void), thread_stuck_end(void), no_gc_thread(void)
 *                                            per-thread state checks (allocating, polling or
 *                                            collecting while stuck aborts; so does allocating
 *                                            on a no-gc thread; stuck_end without start aborts)
 *   void  gc_add_global(void **slot)         recorded (slot must be non-null, 8-aligned)
 *   void  gc_write_barrier(void *obj)        nothing (no collector: nothing to remember)
 *   i64   rw_main(void)                      the program (run on a pthread with a 1 GiB stack)
 *
 * main prints exactly one line:
 *   result=<signed decimal> gc_init_calls=<n> safepoints=<n> allocs=<n> collects=<n> threads=<n> globals=<n>
 * and exits 0, or prints "reference-runtime: <message>" on stderr and aborts on an ABI misuse.
 *
 * Build: gcc -no-pie -pthread -O1 reference-runtime.c program.o -o program
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREAD_STACK_BYTES ((size_t)64 << 20)
#define MAIN_STACK_BYTES ((size_t)1 << 30)
#define HEADER_BYTES 8
#define MAX_GLOBALS 4096
#define MAX_SLOTS (1LL << 24)
#define MAX_RAW (1LL << 30)

extern int64_t rw_main(void);

static int64_t gc_init_calls, safepoints, allocs, collects, threads_started, threads_joined;
static int64_t global_count;
static void **globals[MAX_GLOBALS];
static pthread_mutex_t globals_lock = PTHREAD_MUTEX_INITIALIZER;

/* Per-thread state: 0 normal, 1 stuck (between thread_stuck_start and _end). */
static __thread int thread_stuck;
static __thread int thread_no_gc;

static void die(const char *format, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fputs("reference-runtime: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
  fflush(stderr);
  abort();
}

static void count(int64_t *counter) { __atomic_fetch_add(counter, 1, __ATOMIC_SEQ_CST); }
static int64_t read_counter(int64_t *counter) { return __atomic_load_n(counter, __ATOMIC_SEQ_CST); }

void gc_init(const void *map) {
  if (map == NULL) die("gc_init: null map (extern_weak @__LLVM_StackMaps or _GC_MAP_ label unresolved)");
  const uint8_t *bytes = map;
  int32_t v1;
  memcpy(&v1, bytes, 4);
  /* LLVM stack map v3: u8 version = 3, u8 reserved = 0, u16 reserved = 0. plimmix v1: i32 1. */
  int llvm_v3 = bytes[0] == 3 && bytes[1] == 0 && bytes[2] == 0 && bytes[3] == 0;
  if (!llvm_v3 && v1 != 1) {
    die("gc_init: map at %p starts with %02x %02x %02x %02x: neither an LLVM v3 stack map nor a plimmix v1 map",
        map, bytes[0], bytes[1], bytes[2], bytes[3]);
  }
  count(&gc_init_calls);
}

void *gc_alloc(int64_t pointer_slots, int64_t raw_bytes) {
  if (thread_stuck) die("gc_alloc(%" PRId64 ", %" PRId64 ") on a stuck thread", pointer_slots, raw_bytes);
  if (thread_no_gc) die("gc_alloc(%" PRId64 ", %" PRId64 ") on a no_gc_thread", pointer_slots, raw_bytes);
  if (read_counter(&gc_init_calls) == 0) die("gc_alloc before gc_init");
  if (pointer_slots < 0 || pointer_slots > MAX_SLOTS || raw_bytes < 0 || raw_bytes > MAX_RAW) {
    die("gc_alloc(%" PRId64 ", %" PRId64 "): bad size", pointer_slots, raw_bytes);
  }
  size_t size = HEADER_BYTES + 8 * (size_t)pointer_slots + (size_t)raw_bytes;
  uint8_t *block = calloc(1, size);
  if (block == NULL) die("gc_alloc: out of memory (%zu bytes)", size);
  /* The header records the shape (as a real runtime would); the program never reads it. */
  uint32_t shape[2] = {(uint32_t)pointer_slots, (uint32_t)raw_bytes};
  memcpy(block, shape, sizeof shape);
  count(&allocs);
  return block + HEADER_BYTES;
}

void gc_safepoint(void) {
  if (thread_stuck) die("gc_safepoint on a stuck thread");
  count(&safepoints);
}

void gc_collect(void) {
  if (thread_stuck) die("gc_collect on a stuck thread");
  if (thread_no_gc) die("gc_collect on a no_gc_thread");
  count(&collects);
}

/* The write barrier: nothing to remember without a collector (runtime-barrier.c has the real one). */
void gc_write_barrier(void *obj) { (void)obj; }

void thread_stuck_start(void) {
  if (thread_stuck) die("thread_stuck_start: thread already stuck");
  if (thread_no_gc) die("thread_stuck_start on a no_gc_thread");
  thread_stuck = 1;
}

void thread_stuck_end(void) {
  if (!thread_stuck) die("thread_stuck_end without thread_stuck_start");
  thread_stuck = 0;
}

void no_gc_thread(void) {
  if (thread_stuck) die("no_gc_thread on a stuck thread");
  thread_no_gc = 1;
}

void gc_add_global(void **slot) {
  if (slot == NULL || ((uintptr_t)slot & 7) != 0) die("gc_add_global: bad slot %p", (void *)slot);
  pthread_mutex_lock(&globals_lock);
  if (global_count == MAX_GLOBALS) die("gc_add_global: more than %d globals", MAX_GLOBALS);
  globals[global_count++] = slot;
  pthread_mutex_unlock(&globals_lock);
}

struct thread_start {
  pthread_t thread;
  void (*fn)(int64_t);
  int64_t arg;
  int joined;
};

static void *thread_body(void *p) {
  struct thread_start *start = p;
  start->fn(start->arg);
  if (thread_stuck) die("thread ended while stuck");
  return NULL;
}

static void create_thread(pthread_t *thread, size_t stack_bytes, void *(*body)(void *), void *arg) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) die("pthread_attr_init failed");
  if (pthread_attr_setstacksize(&attr, stack_bytes) != 0) die("pthread_attr_setstacksize(%zu) failed", stack_bytes);
  int error = pthread_create(thread, &attr, body, arg);
  if (error != 0) die("pthread_create failed: %s", strerror(error));
  pthread_attr_destroy(&attr);
}

int64_t gc_thread_start(void (*fn)(int64_t), int64_t arg) {
  if (fn == NULL) die("gc_thread_start: null function");
  if (thread_stuck) die("gc_thread_start on a stuck thread");
  struct thread_start *start = calloc(1, sizeof *start);
  if (start == NULL) die("gc_thread_start: out of memory");
  start->fn = fn;
  start->arg = arg;
  create_thread(&start->thread, THREAD_STACK_BYTES, thread_body, start);
  count(&threads_started);
  return (int64_t)(intptr_t)start;
}

void gc_thread_join(int64_t handle) {
  struct thread_start *start = (struct thread_start *)(intptr_t)handle;
  if (start == NULL) die("gc_thread_join: null handle");
  if (thread_stuck) die("gc_thread_join on a stuck thread");
  if (start->joined) die("gc_thread_join: joined twice");
  start->joined = 1;
  int error = pthread_join(start->thread, NULL);
  if (error != 0) die("pthread_join failed: %s", strerror(error));
  count(&threads_joined);
  free(start);
}

static int64_t main_result;

static void *main_body(void *unused) {
  (void)unused;
  main_result = rw_main();
  if (thread_stuck) die("rw_main returned while stuck");
  return NULL;
}

int main(void) {
  pthread_t thread;
  create_thread(&thread, MAIN_STACK_BYTES, main_body, NULL);
  int error = pthread_join(thread, NULL);
  if (error != 0) die("pthread_join(main) failed: %s", strerror(error));
  if (read_counter(&threads_started) != read_counter(&threads_joined)) {
    die("%" PRId64 " threads started but %" PRId64 " joined", threads_started, threads_joined);
  }
  printf("result=%" PRId64 " gc_init_calls=%" PRId64 " safepoints=%" PRId64 " allocs=%" PRId64
         " collects=%" PRId64 " threads=%" PRId64 " globals=%" PRId64 "\n",
         main_result, gc_init_calls, safepoints, allocs, collects, threads_started, global_count);
  fflush(stdout);
  return 0;
}
