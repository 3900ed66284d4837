/*
 * rootwalk native runtime (librwruntime): the C side of `rootwalk run`.
 *
 * Managed code (LLVM IR compiled by rootwalk) calls the ABI functions gc_init, gc_alloc,
 * gc_safepoint, gc_collect, gc_thread_start, gc_thread_join, thread_stuck_start,
 * thread_stuck_end, no_gc_thread and gc_add_global. Each enters through an assembly stub
 * (runtime-entry.S) that hands the C implementation rw_impl_<name> the managed caller's
 * callee-saved registers and return address (`frame`). The collector itself is TypeScript
 * (gc/, walker/): the runtime calls ONE JavaScript callback (registered with koffi) with the
 * world stopped, and the callback reads and rewrites the thread records below.
 *
 * Threads. Each thread that runs managed code has a record (rw_thread, 256 bytes, in the
 * global array rw_threads). States:
 *   RUNNING  running managed code; a collection waits until it parks.
 *   PARKED   stopped inside a runtime entry (its frames are recorded), or initiating a
 *            collection / a JavaScript call.
 *   SAFE     blocked in gc_thread_join: frames recorded on entry; scanned and relocated while
 *            it waits; never waited for.
 *   STUCK    between thread_stuck_start and thread_stuck_end: frames recorded at
 *            thread_stuck_start, their referents pinned (by JavaScript); never waited for; may
 *            not allocate.
 *   NOGC     no_gc_thread was called: not scanned, may not allocate.
 *   DEAD     finished.
 * A record's sp/ra/regs are written only by its own thread while it is RUNNING (no collection
 * can run then), or under the lock once no collection is requested.
 *
 * Stop the world: one mutex + condvar. The initiator sets gc_requested, parks itself and waits
 * until no thread is RUNNING, calls JavaScript, clears gc_requested and wakes everyone. A
 * RUNNING thread parks at its next runtime entry (gc_safepoint, gc_alloc, ...).
 *
 * Allocation: the fast path bumps the thread's hole [cursor, limit) (zeroed by the collector)
 * for objects up to 128 bytes and writes the header (gc/object-model.ts); anything else calls
 * JavaScript (stop the world, mutator.alloc), which may collect.
 *
 * Safepoint watchdog: the initiator waits at most `safepoint_timeout_ms` (rw_setup; 0 = forever)
 * for the RUNNING threads to park. When the time is up it ends the process (exit 3) naming each
 * thread still running, the return address of its last runtime entry (its last safepoint, with
 * the symbol dladdr finds) and how long it has run since it left the runtime: a thread in a
 * loop without safepoints would otherwise hang the run silently.
 *
 * Faults: a SIGSEGV or SIGBUS on a thread the runtime started (managed code, or the runtime on
 * its behalf) ends the process with exit 3 and one message naming the thread and the faulting
 * instruction (with poisoning on, say why a stale pointer is the likely cause), instead of a
 * bare crash. Each such thread has an alternate signal stack, so a stack overflow is reported
 * too. Faults on other threads (Node's own) go to the handler that was there before.
 *
 * Stacks: every thread the runtime starts (rw_main's and gc_thread_start's) runs on a stack that
 * JavaScript placed in the scan memory, the shared WebAssembly.Memory the root scan reads in place
 * (src/native/thread-stacks.ts, src/memory/scan-memory.ts): rw_stack_add hands over each region
 * before rw_run_main as a typed-array view (its address is the region's native address), whose
 * lowest RW_GUARD_BYTES this file makes PROT_NONE (an overflow faults there: the memory never
 * grows, so the protection holds). Region 0 is rw_main's; the others serve gc_thread_start, one
 * thread each from its start until it is joined. rw_stack_retire gives a region back (protection
 * restored) once no live thread uses it. glibc keeps the thread's record and TLS at the top of
 * the stack it is given: inside the region, above the frames the scan reads.
 *
 * Any failure (a JavaScript callback that threw, an allocation by a stuck thread, a runtime call
 * before gc_init) ends the process with a message on stderr and exit code 3: never continue with
 * stale roots.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define RW_EXPORT __attribute__((visibility("default")))
#define RW_MAX_THREADS 1024
#define RW_LINE_BYTES 128
#define RW_MAX_POINTER_SLOTS ((1ull << 28) - 1)
#define RW_MAX_RAW_BYTES ((1ull << 29) - 1)

enum {
  ST_FREE = 0,
  ST_RUNNING = 1,
  ST_PARKED = 2,
  ST_SAFE = 3,
  ST_STUCK = 4,
  ST_NOGC = 5,
  ST_DEAD = 6,
};

/* JavaScript call kinds (thread-record.ts has the same numbers; callback-dispatch.ts answers them). */
enum {
  JS_INIT = 1,
  JS_COLLECT = 2,
  JS_ALLOC = 3,
  JS_STUCK_START = 4,
  JS_STUCK_END = 5,
  JS_ADD_GLOBAL = 6,
};

/*
 * The callee-saved registers the safepoint stubs save (runtime-entry.S frame[0..RW_CALLEE_SAVED-1])
 * and a record keeps, in the architecture description's order: src/arch/x86-64.ts rbx, rbp,
 * r12-r15; src/arch/aarch64.ts x19-x28, x29, x30. The stub's frame holds them, then the return
 * address, and ends where the caller's SP was. RW_FAULT_PC_FIELD: where the signal context (a
 * ucontext_t) holds the interrupted PC of a fault, which the fault handler reports: x86-64
 * gregs[REG_RIP]; AArch64 mcontext: fault_address, regs[31], sp, pc, pstate. It is the word the
 * description's signalContext names (registersOffsetBytes + 8 * pcIndex; runtime-layout.test.ts).
 */
#if defined(__x86_64__)
#define RW_CALLEE_SAVED 6
#define RW_FAULT_PC_FIELD uc_mcontext.gregs[REG_RIP]
#elif defined(__aarch64__)
#define RW_CALLEE_SAVED 12
#define RW_FAULT_PC_FIELD uc_mcontext.pc
#else
#error "the rootwalk runtime is built for x86-64 or AArch64 Linux only"
#endif
#define RW_FRAME_RA_WORD RW_CALLEE_SAVED
#define RW_FRAME_SP_BYTES ((RW_CALLEE_SAVED + 1) * 8)
#define RW_RECORD_WORDS 32
#define RW_FIXED_WORDS 9 /* every field of rw_thread but regs and pad */

/*
 * Word indexes of a record, as JavaScript reads them (src/native/thread-record.ts, which
 * test/native-runtime/runtime-layout.test.ts checks against this struct and the enums above).
 */
typedef struct rw_thread {
  uint64_t state;       /* 0 */
  uint64_t sp;          /* 1: managed caller's SP after the call returns */
  uint64_t ra;          /* 2: return address into the managed caller */
  uint64_t regs[RW_CALLEE_SAVED]; /* 3..: the callee-saved registers, in the order above */
  uint64_t stack_top;   /* 3 + RW_CALLEE_SAVED: exclusive upper end of the thread's scanned stack */
  uint64_t boundary_ra; /* rw_managed_return */
  uint64_t cursor;      /* allocation hole */
  uint64_t limit;
  uint64_t stuck_sp;    /* unused by C; kept for JavaScript diagnostics */
  uint64_t left_ns;     /* CLOCK_MONOTONIC when it last left the runtime (or started) */
  uint64_t pad[RW_RECORD_WORDS - RW_FIXED_WORDS - RW_CALLEE_SAVED];
} rw_thread;

_Static_assert(sizeof(rw_thread) == RW_RECORD_WORDS * 8, "thread record is 32 words");

typedef int64_t (*rw_js_callback)(int32_t kind, int32_t thread, uint64_t a, uint64_t b);

RW_EXPORT rw_thread rw_threads[RW_MAX_THREADS];
static int thread_count;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static volatile int gc_requested;
static int running;
static rw_js_callback js_callback;
static volatile int initialized;
static uint64_t stress_every;
static int no_gc;
static uint64_t safepoint_counter;
static uint64_t alloc_counter;
static uint64_t safepoint_timeout_ms = 10000;
static int poison_on;
static uint64_t heap_start, heap_end; /* the reservation (rw_heap_reserve), for fault messages */
/* The allocation bitmap (gc/allocation-bits.ts), shared with the collector: bit (g & 7) of byte
 * g >> 3 is set when an object's address is at heap granule g = (address - heap_start) >> 3.
 * The fast path below sets it for each object it makes; holes are whole 128-byte lines and a byte
 * covers 64 bytes, so two threads never write the same byte (no atomics needed). */
static uint8_t *allocation_bits;
static struct sigaction previous_segv, previous_bus;

static char init_path[4096];
static uint64_t init_base;
static char result_text[64];

static __thread rw_thread *self;

extern char rw_managed_return[];
extern uint64_t rw_call_managed(void *fn, uint64_t arg);

/* ---- `rootwalk run --json`: stdout carries the JSON alone ------------------------------------
 * While the program runs, fd 1 is a copy of fd 2 (rw_stdout_to_stderr): whatever the program
 * prints (printf, puts, write(1, ...)) goes to stderr. A failure that ends the process here
 * writes one JSON object on the real stdout (json_fd) first, with the same fields as the
 * failures run-command.ts reports itself: {"error","exitCode","message","collections"}. */
static int json_fd = -1;
static uint64_t collections_so_far; /* told by JavaScript after each collection */
static char failure_message[1024];  /* a JavaScript failure's line (rw_set_failure) */

/* The failure object on json_fd: `message` up to its first newline, JSON-escaped. No allocation,
 * no stdio: the fault handler calls it. */
static void json_failure(const char *message) {
  if (json_fd < 0) return;
  char out[2048];
  static const char head[] = "{\"error\":\"runtime-failure\",\"exitCode\":3,\"message\":\"";
  size_t n = 0;
  for (const char *c = head; *c != 0; c++) out[n++] = *c;
  for (const char *c = message; *c != 0 && *c != '\n' && n < sizeof out - 64; c++) {
    unsigned char b = (unsigned char)*c;
    if (b == '"' || b == '\\') {
      out[n++] = '\\';
      out[n++] = (char)b;
    } else if (b < 0x20) {
      static const char hexdigits[] = "0123456789abcdef";
      const char esc[6] = {'\\', 'u', '0', '0', hexdigits[b >> 4], hexdigits[b & 15]};
      for (int k = 0; k < 6; k++) out[n++] = esc[k];
    } else {
      out[n++] = (char)b;
    }
  }
  static const char tail[] = "\",\"collections\":";
  for (const char *c = tail; *c != 0; c++) out[n++] = *c;
  char digits[24];
  int d = 0;
  uint64_t v = collections_so_far;
  do digits[d++] = (char)('0' + v % 10); while ((v /= 10) != 0 && d < 24);
  while (d > 0) out[n++] = digits[--d];
  out[n++] = '}';
  out[n++] = '\n';
  ssize_t ignored = write(json_fd, out, n);
  (void)ignored;
}

/* Points fd 1 at stderr and keeps the real stdout for the JSON; returns it (-1: failed). */
RW_EXPORT int rw_stdout_to_stderr(void) {
  fflush(stdout);
  int saved = dup(1);
  if (saved < 0) return -1;
  if (dup2(2, 1) < 0) {
    close(saved);
    return -1;
  }
  json_fd = saved;
  return saved;
}

/* Flushes what the program printf'd (to stderr, where fd 1 points) and gives fd 1 back. */
RW_EXPORT void rw_stdout_restore(void) {
  fflush(stdout);
  if (json_fd < 0) return;
  dup2(json_fd, 1);
  close(json_fd);
  json_fd = -1;
}

RW_EXPORT void rw_set_collections(uint64_t n) { collections_so_far = n; }
RW_EXPORT void rw_set_failure(const char *line) { snprintf(failure_message, sizeof failure_message, "%s", line); }

static void fatal(const char *format, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void fatal(const char *format, ...) {
  char message[1024];
  va_list ap;
  va_start(ap, format);
  vsnprintf(message, sizeof message, format, ap);
  va_end(ap);
  fflush(stdout);
  fprintf(stderr, "rootwalk run: %s\n", message);
  fflush(stderr);
  json_failure(message);
  _exit(3);
}

/* ---- records and the world ------------------------------------------------------------------ */

static void capture(const uint64_t *frame) {
  self->sp = (uint64_t)(uintptr_t)frame + RW_FRAME_SP_BYTES;
  self->ra = frame[RW_FRAME_RA_WORD];
  for (int k = 0; k < RW_CALLEE_SAVED; k++) self->regs[k] = frame[k];
}

static uint64_t now_ns(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void restore(uint64_t *frame) {
  for (int k = 0; k < RW_CALLEE_SAVED; k++) frame[k] = self->regs[k];
  self->left_ns = now_ns(CLOCK_MONOTONIC);
}

static void require_running(const char *what) {
  if (self == NULL) fatal("%s called from a thread the runtime did not start", what);
  switch (self->state) {
    case ST_RUNNING:
      return;
    case ST_STUCK:
      fatal("%s called by a stuck thread (between thread_stuck_start and thread_stuck_end)", what);
    case ST_NOGC:
      fatal("%s called by a thread that called no_gc_thread", what);
    default:
      fatal("%s called by a thread in state %llu", what, (unsigned long long)self->state);
  }
}

static void require_initialized(const char *what) {
  if (!initialized) fatal("%s called before gc_init: the program never registered its stack map (call gc_init first)", what);
}

/* Lock held, self RUNNING: park until no collection is requested. */
static void park_locked(void) {
  self->state = ST_PARKED;
  running--;
  pthread_cond_broadcast(&cond);
  while (gc_requested) pthread_cond_wait(&cond, &lock);
  self->state = ST_RUNNING;
  running++;
}

static void poll(void) {
  if (__atomic_load_n(&gc_requested, __ATOMIC_ACQUIRE)) {
    pthread_mutex_lock(&lock);
    if (gc_requested) park_locked();
    pthread_mutex_unlock(&lock);
  }
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
static void stw_begin(void) {
  while (gc_requested) park_locked();
  gc_requested = 1;
  self->state = ST_PARKED;
  running--;
  wait_for_running_threads_locked();
}

static void stw_end(uint64_t new_state) {
  self->state = new_state;
  if (new_state == ST_RUNNING) running++;
  __atomic_store_n(&gc_requested, 0, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&cond);
}

static int64_t js_call(int32_t kind, uint64_t a, uint64_t b) {
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

static void collect_now(void) {
  pthread_mutex_lock(&lock);
  stw_begin();
  if (!no_gc) js_call(JS_COLLECT, 0, 0);
  stw_end(ST_RUNNING);
  pthread_mutex_unlock(&lock);
}

static int stress_hit(uint64_t *counter) {
  if (stress_every == 0) return 0;
  return __atomic_add_fetch(counter, 1, __ATOMIC_RELAXED) % stress_every == 0;
}

/* Lock held. A new record for the calling thread, RUNNING. */
static void register_self_locked(uint64_t stack_top) {
  while (gc_requested) pthread_cond_wait(&cond, &lock);
  if (thread_count >= RW_MAX_THREADS) fatal("more than %d threads", RW_MAX_THREADS);
  rw_thread *t = &rw_threads[thread_count++];
  memset(t, 0, sizeof *t);
  t->stack_top = stack_top;
  t->boundary_ra = (uint64_t)(uintptr_t)rw_managed_return;
  t->state = ST_RUNNING;
  t->left_ns = now_ns(CLOCK_MONOTONIC);
  running++;
  self = t;
}

static void unregister_self(void) {
  pthread_mutex_lock(&lock);
  if (self->state == ST_RUNNING) running--;
  self->state = ST_DEAD;
  pthread_cond_broadcast(&cond);
  pthread_mutex_unlock(&lock);
}

/* ---- the ABI -------------------------------------------------------------------------------- */

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

void *rw_impl_gc_alloc(uint64_t pointer_slots, uint64_t raw_bytes, uint64_t *frame) {
  require_running("gc_alloc");
  require_initialized("gc_alloc");
  if (pointer_slots > RW_MAX_POINTER_SLOTS || raw_bytes > RW_MAX_RAW_BYTES) {
    fatal("gc_alloc(%lld, %lld): sizes out of range (pointer slots < 2^28, raw bytes < 2^29)", (long long)pointer_slots, (long long)raw_bytes);
  }
  capture(frame);
  poll();
  if (stress_hit(&alloc_counter)) collect_now();
  uint64_t body = pointer_slots * 8 + ((raw_bytes + 7) & ~7ull);
  uint64_t size = 8 + (body < 8 ? 8 : body);
  void *result;
  uint64_t c = self->cursor;
  if (size <= RW_LINE_BYTES && c + size <= self->limit && c != 0) {
    uint64_t *header = (uint64_t *)(uintptr_t)c;
    *header = (pointer_slots << 32) | (raw_bytes << 3);
    self->cursor = c + size;
    result = (void *)(uintptr_t)(c + 8);
    uint64_t granule = (c + 8 - heap_start) >> 3;
    allocation_bits[granule >> 3] |= (uint8_t)(1u << (granule & 7));
  } else {
    pthread_mutex_lock(&lock);
    stw_begin();
    result = (void *)(uintptr_t)js_call(JS_ALLOC, pointer_slots, raw_bytes);
    stw_end(ST_RUNNING);
    pthread_mutex_unlock(&lock);
  }
  restore(frame);
  return result;
}

void rw_impl_gc_safepoint(uint64_t a, uint64_t b, uint64_t *frame) {
  (void)a;
  (void)b;
  if (self != NULL && self->state == ST_NOGC) return;
  require_running("gc_safepoint");
  require_initialized("gc_safepoint");
  capture(frame);
  if (stress_hit(&safepoint_counter)) collect_now();
  else poll();
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

typedef struct start_args {
  void *fn;
  uint64_t arg;
  uint64_t result;
  int is_main;
  int stack;          /* its region in stacks[] */
  rw_thread *record;  /* set by the thread under the lock once it registered */
} start_args;

typedef struct join_slot {
  pthread_t thread;
  start_args *args;
  int used;
  int joined;
} join_slot;

static join_slot joins[RW_MAX_THREADS];
static int join_count;

/* ---- stacks in the scan memory (see the top of the file) -------------------------------------- */

/* Must match GUARD_BYTES in src/native/stack-limits.ts (runtime-layout.test.ts checks both). */
#define RW_GUARD_BYTES (64 * 1024)
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
static int take_stack_locked(start_args *user) {
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
static void free_stack_locked(start_args *user) {
  if (stacks[user->stack].user == user) stacks[user->stack].user = NULL;
}

/* The region whose guard holds `address`, or -1 (the fault handler: no lock, read only). */
static int guard_holding(uint64_t address) {
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
      for (int j = 0; j < join_count; j++) {
        if (joins[j].args == user && !joins[j].joined) {
          pthread_join(joins[j].thread, NULL); /* it has unregistered: it returns without the lock */
          joins[j].joined = 1;
        }
      }
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

/* ---- faults ------------------------------------------------------------------------------- */

#define RW_ALT_STACK_BYTES (64 * 1024)

static void fault_handler(int sig, siginfo_t *info, void *context) {
  rw_thread *t = self;
  if (t == NULL) {
    /* Not a runtime thread: hand the fault to whoever handled it before us. */
    const struct sigaction *old = sig == SIGBUS ? &previous_bus : &previous_segv;
    if ((old->sa_flags & SA_SIGINFO) != 0 && old->sa_sigaction != NULL) {
      old->sa_sigaction(sig, info, context);
      return;
    }
    if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
      old->sa_handler(sig);
      return;
    }
    signal(sig, SIG_DFL); /* returning re-executes the faulting instruction: the default action */
    return;
  }
  const ucontext_t *uc = context;
  uint64_t pc = (uint64_t)uc->RW_FAULT_PC_FIELD;
  Dl_info where;
  memset(&where, 0, sizeof where);
  char at[256];
  if (dladdr((void *)(uintptr_t)pc, &where) != 0 && where.dli_sname != NULL) {
    snprintf(at, sizeof at, "%s+0x%llx", where.dli_sname, (unsigned long long)(pc - (uint64_t)(uintptr_t)where.dli_saddr));
  } else {
    snprintf(at, sizeof at, "0x%llx", (unsigned long long)pc);
  }
  char message[1024];
  uint64_t fault = (uint64_t)(uintptr_t)info->si_addr;
  /* Under --stress the blocks a collection freed are protected while quarantined (gc/quarantine.ts). */
  int guard = guard_holding(fault);
  char overflow[256];
  if (guard >= 0) {
    snprintf(overflow, sizeof overflow, "  the fault address is in the guard below %s stack (%llu bytes, --%s): a stack overflow\n",
             guard == 0 ? "rw_main's" : "a gc_thread_start thread's", (unsigned long long)(stacks[guard].bytes - RW_GUARD_BYTES),
             guard == 0 ? "stack" : "thread-stack");
  }
  const char *why = guard >= 0 ? overflow
                    : !poison_on ? ""
                    : fault >= heap_start && fault < heap_end
                        ? "  poisoning is on (--poison, implied by --stress): the fault address is in the heap, in memory a collection evacuated or freed,\n"
                          "  quarantined and protected under --stress: a read or write through a stale pointer, one the program kept across a collection without a root\n"
                        : "  poisoning is on (--poison, implied by --stress): a read through a stale pointer, one the program kept across a collection\n"
                          "  without a root, finds the pattern 0xdeadbeecdeadbeec, which faults when used as an address\n";
  int n = snprintf(message, sizeof message, "rootwalk run: %s in thread #%d at %s (fault address 0x%llx)\n%s",
                   sig == SIGBUS ? "bus error" : "segmentation fault", (int)(t - rw_threads), at, (unsigned long long)fault, why);
  if (n > 0) {
    ssize_t ignored = write(2, message, (size_t)n < sizeof message ? (size_t)n : sizeof message - 1);
    (void)ignored;
  }
  json_failure(message + strlen("rootwalk run: "));
  _exit(3);
}

static void install_fault_handlers(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = fault_handler;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, &previous_segv);
  sigaction(SIGBUS, &action, &previous_bus);
}

/* An alternate signal stack for the calling thread (kept until the process ends). */
static void give_alternate_signal_stack(void) {
  void *stack = mmap(NULL, RW_ALT_STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (stack == MAP_FAILED) return; /* faults are still reported, unless the stack overflowed */
  stack_t alt = {.ss_sp = stack, .ss_size = RW_ALT_STACK_BYTES, .ss_flags = 0};
  sigaltstack(&alt, NULL);
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
static pthread_t spawn(start_args *args) {
  pthread_mutex_lock(&lock);
  args->stack = take_stack_locked(args);
  pthread_mutex_unlock(&lock);
  const rw_stack *stack = &stacks[args->stack];
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  uint64_t usable = stack->bytes - RW_GUARD_BYTES;
  if (pthread_attr_setstack(&attr, stack->base + RW_GUARD_BYTES, usable) != 0) fatal("cannot place a thread stack of %llu bytes", (unsigned long long)usable);
  pthread_t thread;
  int e = pthread_create(&thread, &attr, thread_main, args);
  pthread_attr_destroy(&attr);
  if (e != 0) fatal("pthread_create failed: %s", strerror(e));
  return thread;
}

int64_t rw_impl_gc_thread_start(void *fn, uint64_t arg, uint64_t *frame) {
  require_running("gc_thread_start");
  capture(frame);
  poll();
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

/* ---- what JavaScript calls ------------------------------------------------------------------ */

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

/* The heap reservation: `bytes` rounded up to 32 KiB blocks, aligned to 32 KiB; its allocation
 * bitmap (bytes / 64, zero) is mapped too, for rw_allocation_bits. */
RW_EXPORT void *rw_heap_reserve(uint64_t bytes) {
  const uint64_t block = 32 * 1024;
  bytes = (bytes + block - 1) & ~(block - 1);
  void *p = mmap(NULL, bytes + block, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return NULL;
  void *bits = mmap(NULL, bytes / 64, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (bits == MAP_FAILED) {
    munmap(p, bytes + block);
    return NULL;
  }
  allocation_bits = bits;
  uintptr_t aligned = ((uintptr_t)p + block - 1) & ~(uintptr_t)(block - 1);
  heap_start = aligned;
  heap_end = aligned + bytes;
  return (void *)aligned;
}

/* The last reservation's allocation bitmap (heap bytes / 64), or NULL before one. */
RW_EXPORT void *rw_allocation_bits(void) { return allocation_bits; }

/* The stress quarantine's page protection (gc/quarantine.ts): 0, or the errno of mprotect. */
RW_EXPORT int rw_heap_protect(uint64_t address, uint64_t bytes, int accessible) {
  if (address < heap_start || address + bytes > heap_end) return EINVAL;
  return mprotect((void *)(uintptr_t)address, bytes, accessible ? PROT_READ | PROT_WRITE : PROT_NONE) == 0 ? 0 : errno;
}

RW_EXPORT const char *rw_init_path(void) { return init_path; }
RW_EXPORT uint64_t rw_init_base(void) { return init_base; }
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
