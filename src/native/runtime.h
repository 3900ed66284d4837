/*
 * rootwalk native runtime (librwruntime): the C side of `rootwalk run`, in parts behind this header.
 *
 * Managed code (LLVM IR compiled by rootwalk) calls the ABI functions gc_init, gc_alloc,
 * gc_safepoint, gc_collect, gc_thread_start, gc_thread_join, thread_stuck_start,
 * thread_stuck_end, no_gc_thread and gc_add_global. Each enters through an assembly stub
 * (runtime-entry.S) that hands the C implementation rw_impl_<name> the managed caller's
 * callee-saved registers and return address (`frame`). The collector itself is TypeScript
 * (gc/, walker/): the runtime calls ONE JavaScript callback (registered with koffi) with the
 * world stopped, and the callback reads and rewrites the thread records below.
 *
 * The parts (each file's head comment says its invariants):
 *   runtime-failure.c  a failure ends the process (exit 3) with one message; `run --json`'s stdout
 *   runtime-world.c    thread records and states, stop the world, the safepoint watchdog
 *   runtime-alloc.c    gc_alloc's fast path, the heap reservation and its allocation bitmap
 *   runtime-abi.c      the other ABI entries (gc_init, gc_safepoint, gc_collect, stuck, globals)
 *   runtime-barrier.c  gc_write_barrier (no stub: it never collects) and its log (--generational)
 *   runtime-threads.c  threads the runtime starts: rw_main's, gc_thread_start / gc_thread_join
 *   runtime-stacks.c   their stack regions in the scan memory and the guards below them
 *   runtime-faults.c   SIGSEGV / SIGBUS on a runtime thread, alternate signal stacks
 *   runtime-return-barrier.c  return barriers (--generational): armed slots, the trampoline's hit
 *   runtime.c          what JavaScript calls to set up, load and run the program
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
 * Every fact this header shares with TypeScript (the record, the enums, the object header, the
 * line and block sizes, the size limits, the allocation bitmap's layout, the guard) is checked
 * against the TypeScript that states it by test/native-runtime/runtime-layout.test.ts, which
 * compiles this header followed by one _Static_assert per fact.
 *
 * Symbols: only what is marked RW_EXPORT (and the rw_impl_* the entry stubs call) is exported
 * (src/native/runtime-symbol-clash.ts reads the list from .dynsym); what the parts share with each
 * other is RW_HIDDEN.
 */
#ifndef RW_RUNTIME_H
#define RW_RUNTIME_H

#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#define RW_EXPORT __attribute__((visibility("default")))
#define RW_HIDDEN __attribute__((visibility("hidden")))
#define RW_MAX_THREADS 1024

/* ---- the heap's facts (gc/heap-constants.ts, gc/object-model.ts, gc/allocation-bits.ts) ------- */

/* BYTES_IN_LINE: holes are whole lines; the fast path makes objects of up to one line. */
#define RW_LINE_BYTES 128
/* BYTES_IN_BLOCK: the unit and the alignment of the heap reservation. */
#define RW_BLOCK_BYTES (32 * 1024)
/* MAX_POINTER_SLOTS, MAX_RAW_BYTES: the widths of the header's fields. */
#define RW_MAX_POINTER_SLOTS ((1ull << 28) - 1)
#define RW_MAX_RAW_BYTES ((1ull << 29) - 1)
/* DefaultObjectModel.initialize: a fresh object's header word (slot count high, raw bytes << 3, no flags). */
#define RW_HEADER_WORD(pointer_slots, raw_bytes) (((uint64_t)(pointer_slots) << 32) | ((uint64_t)(raw_bytes) << 3))
/* DefaultObjectModel.allocationBytes: storage, header included, = 8 + max(8, 8 * slots + align8(raw)). */
#define RW_BODY_BYTES(pointer_slots, raw_bytes) ((uint64_t)(pointer_slots) * 8 + (((uint64_t)(raw_bytes) + 7) & ~7ull))
#define RW_ALLOCATION_BYTES(pointer_slots, raw_bytes) \
  (8 + (RW_BODY_BYTES(pointer_slots, raw_bytes) < 8 ? 8 : RW_BODY_BYTES(pointer_slots, raw_bytes)))
/* AllocationBits: one bit per 8-byte granule g = (object address - heap start) / 8, bit (g & 7) of
 * byte g >> 3, for the heap offset `offset` of an object's address; `heap_bytes` of heap (whole
 * blocks) need heap_bytes / 64 bytes of bitmap. */
#define RW_GRANULE_BYTES 8
#define RW_ALLOCATION_BITS_BYTE(offset) (((uint64_t)(offset) / RW_GRANULE_BYTES) >> 3)
#define RW_ALLOCATION_BITS_MASK(offset) ((uint8_t)(1u << (((uint64_t)(offset) / RW_GRANULE_BYTES) & 7)))
#define RW_ALLOCATION_BITS_BYTES(heap_bytes) ((uint64_t)(heap_bytes) / (RW_GRANULE_BYTES * 8))
_Static_assert(RW_LINE_BYTES % (RW_GRANULE_BYTES * 8) == 0,
               "a hole is whole lines and a bitmap byte covers 64 bytes: two threads' fast paths never write the same byte");

/* ---- thread states and the JavaScript call kinds (src/native/thread-record.ts) ------------------ */

enum {
  ST_FREE = 0,
  ST_RUNNING = 1,
  ST_PARKED = 2,
  ST_SAFE = 3,
  ST_STUCK = 4,
  ST_NOGC = 5,
  ST_DEAD = 6,
};

/* JavaScript call kinds (callback-dispatch.ts answers them). */
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

/* Word indexes of a record, as JavaScript reads them (src/native/thread-record.ts). */
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

/* Must match GUARD_BYTES in src/native/stack-limits.ts: the PROT_NONE bottom of each stack region. */
#define RW_GUARD_BYTES (64 * 1024)

/* ---- return barriers (runtime-return-barrier.c, src/native/return-barrier-layout.ts) ----------- */

/*
 * A return barrier: the saved return address of a managed frame replaced by the address of
 * rw_return_barrier_trampoline (runtime-entry.S). A nursery collection walks a thread's stack only
 * down to the frame its innermost armed barrier returns into: that frame and every frame outward
 * have not run since the barrier was armed. entries[0] is the outermost (deepest in the stack,
 * highest address), entries[armed-1] the innermost; returns happen in stack order, so the
 * trampoline always pops entries[armed-1]. The core reader reads these by symbol name.
 */
#define RW_RETURN_BARRIERS_PER_THREAD 64
#define RW_BARRIERS_LOST 1u
typedef struct {
  uint64_t slot;           /* address of the stack word whose return address was replaced */
  uint64_t return_address; /* the return address it held (where the frame resumes) */
  uint64_t frames_below;   /* managed frames from the frame it returns into (inclusive) to the
                              stack's end, counted when armed */
} rw_return_barrier;       /* 24 bytes */
typedef struct {
  uint32_t armed; /* entries[0 .. armed-1] are armed; entries[armed-1] is the innermost */
  uint32_t flags; /* bit 0: RW_BARRIERS_LOST (an entry was found stale: next scan is full) */
  uint64_t reserved;
  rw_return_barrier entries[RW_RETURN_BARRIERS_PER_THREAD];
} rw_thread_barriers; /* 16 + 64*24 = 1552 bytes */
_Static_assert(sizeof(rw_return_barrier) == 24, "a return barrier entry is 3 words");
_Static_assert(sizeof(rw_thread_barriers) == 16 + RW_RETURN_BARRIERS_PER_THREAD * 24, "per-thread barriers: 1552 bytes");
/* One per thread record, same index as rw_threads. */
RW_EXPORT extern rw_thread_barriers rw_return_barriers[RW_MAX_THREADS];
/* The trampoline's address: what an armed slot holds. */
RW_EXPORT void rw_return_barrier_trampoline(void);

/* ---- shared between the parts (hidden) -------------------------------------------------------- */

typedef int64_t (*rw_js_callback)(int32_t kind, int32_t thread, uint64_t a, uint64_t b);

/* A thread the runtime starts (runtime-threads.c), on its stack region (runtime-stacks.c). */
typedef struct start_args {
  void *fn;
  uint64_t arg;
  uint64_t result;
  int is_main;
  int stack;         /* its region in the stack table */
  rw_thread *record; /* set by the thread under the lock once it registered */
} start_args;

/* runtime-failure.c */
RW_HIDDEN void fatal(const char *format, ...) __attribute__((noreturn, format(printf, 1, 2)));
RW_HIDDEN void json_failure(const char *message);
RW_HIDDEN extern char failure_message[1024];

/* runtime-world.c: the world's lock (held for every state change but RUNNING -> its own record) */
extern RW_EXPORT rw_thread rw_threads[RW_MAX_THREADS];
RW_HIDDEN extern int thread_count;
RW_HIDDEN extern pthread_mutex_t lock;
RW_HIDDEN extern pthread_cond_t cond;
RW_HIDDEN extern volatile int gc_requested;
RW_HIDDEN extern int running;
RW_HIDDEN extern __thread rw_thread *self;
RW_HIDDEN extern rw_js_callback js_callback;
RW_HIDDEN extern volatile int initialized;
RW_HIDDEN extern uint64_t stress_every;
RW_HIDDEN extern int no_gc;
RW_HIDDEN extern uint64_t safepoint_timeout_ms;
RW_HIDDEN void park_locked(void);
RW_HIDDEN void stw_begin(void);
RW_HIDDEN void stw_end(uint64_t new_state);
RW_HIDDEN int64_t js_call(int32_t kind, uint64_t a, uint64_t b);
RW_HIDDEN void collect_now(void);
RW_HIDDEN void register_self_locked(uint64_t stack_top);
RW_HIDDEN void unregister_self(void);

/* runtime-alloc.c: the heap reservation (for the fault messages) */
RW_HIDDEN extern uint64_t heap_start, heap_end;

/* runtime-barrier.c: the write barrier's unlogged bitmap (mapped by rw_heap_reserve) */
RW_HIDDEN extern uint8_t *unlogged_bits;

/* runtime-threads.c */
RW_HIDDEN pthread_t spawn(start_args *args);
RW_HIDDEN void join_finished_locked(start_args *user);

/* runtime-stacks.c */
RW_HIDDEN int take_stack_locked(start_args *user);
RW_HIDDEN void free_stack_locked(start_args *user);
RW_HIDDEN int guard_holding(uint64_t address);
RW_HIDDEN uint64_t guarded_stack_bytes(int region);
RW_HIDDEN void *usable_stack_base(int region);

/* runtime-faults.c */
RW_HIDDEN extern int poison_on; /* --poison: the fault message says why a stale pointer faults */
RW_HIDDEN void install_fault_handlers(void);
RW_HIDDEN void give_alternate_signal_stack(void);

/* runtime-return-barrier.c (lock held, the world stopped: every other thread PARKED, SAFE, STUCK,
 * NOGC or DEAD) */
RW_HIDDEN void return_barriers_disarm_locked(void);
RW_HIDDEN void return_barriers_reinstall_locked(uint64_t self_new_state);
/* Called by the thread itself (becoming STUCK or NOGC, or ending): forget its barriers, restoring
 * the slots when `restore_slots`. */
RW_HIDDEN void return_barriers_drop_own(int restore_slots);
/* The trampoline's C side (runtime-entry.S calls it): `sp` is the SP after the `ret` that reached
 * the trampoline; returns where the frame really resumes. */
RW_HIDDEN uint64_t rw_return_barrier_hit(uint64_t sp);

/* runtime-entry.S */
extern char rw_managed_return[];
extern uint64_t rw_call_managed(void *fn, uint64_t arg);

/* ---- the entries' common steps (inline: gc_alloc's fast path calls them) ------------------------ */

static inline uint64_t now_ns(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Records the managed caller's frame (the stub's `frame`) in the calling thread's record. */
static inline void capture(const uint64_t *frame) {
  self->sp = (uint64_t)(uintptr_t)frame + RW_FRAME_SP_BYTES;
  self->ra = frame[RW_FRAME_RA_WORD];
  for (int k = 0; k < RW_CALLEE_SAVED; k++) self->regs[k] = frame[k];
}

/* Hands back the (possibly relocated) callee-saved registers; the thread leaves the runtime. */
static inline void restore(uint64_t *frame) {
  for (int k = 0; k < RW_CALLEE_SAVED; k++) frame[k] = self->regs[k];
  self->left_ns = now_ns(CLOCK_MONOTONIC);
}

static inline void require_running(const char *what) {
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

static inline void require_initialized(const char *what) {
  if (!initialized) fatal("%s called before gc_init: the program never registered its stack map (call gc_init first)", what);
}

/* --stress=N: true on every Nth call counted by `counter` (never when stress_every is 0). */
static inline int stress_hit(uint64_t *counter) {
  if (stress_every == 0) return 0;
  return __atomic_add_fetch(counter, 1, __ATOMIC_RELAXED) % stress_every == 0;
}

/* Self RUNNING, lock not held: parks if a collection is requested. */
static inline void park_if_requested(void) {
  if (__atomic_load_n(&gc_requested, __ATOMIC_ACQUIRE)) {
    pthread_mutex_lock(&lock);
    if (gc_requested) park_locked();
    pthread_mutex_unlock(&lock);
  }
}

#endif
