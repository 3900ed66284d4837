/*
 * Return barriers (issue 33): a managed frame's saved return address replaced by the address of
 * rw_return_barrier_trampoline (runtime-entry.S), so that the runtime learns when the mutator
 * returns into a frame that has not run since the last collection. runtime.h has the layout.
 *
 * Who writes what:
 *   - JavaScript (src/native/return-barriers.ts), at the end of a collection under --generational,
 *     with the world stopped, chooses the slots (rw_return_barriers_set) and says how many of the
 *     entries found at the start of the stop to keep (the outer ones, below the walked region).
 *     It never writes a stack word itself.
 *   - stw_begin (runtime-world.c), once every thread has stopped, calls
 *     return_barriers_disarm_locked: every armed slot gets its return address back, so that every
 *     reader of a live stack during the stop sees a pristine stack; `kept[t]` entries stay
 *     remembered (entries[kept[t]-1] is the skip point of a nursery collection).
 *   - stw_end calls return_barriers_reinstall_locked: the remembered entries of every PARKED
 *     thread are armed again (the trampoline written into their slots). SAFE, STUCK, NOGC and DEAD
 *     threads get none (a STUCK thread runs while the world is stopped: its slots must never be
 *     written by another thread; a SAFE thread's stack is read again when it wakes).
 *   - the thread itself, in the trampoline (rw_return_barrier_hit), pops its innermost entry.
 *     Only a RUNNING thread returns through a barrier, and a stop waits for every RUNNING thread
 *     to park, so the hit and the stop's disarm/reinstall never run at the same time.
 *
 * A slot that does not hold the trampoline's address, or lies below the thread's recorded SP (its
 * frame was popped without a return: longjmp), is stale: it is dropped, with every entry inward of
 * it, and the thread's RW_BARRIERS_LOST flag is set (its next walk is a full one).
 */
#include "runtime.h"

#include <string.h>

RW_EXPORT rw_thread_barriers rw_return_barriers[RW_MAX_THREADS];
/* Entries of thread t still valid after the last disarm (the stop's skip point is entries[kept-1]). */
static uint32_t kept[RW_MAX_THREADS];
static uint64_t hits; /* returns through the trampoline, all threads */
static uint64_t stale; /* entries found stale */

static inline uint64_t trampoline_address(void) { return (uint64_t)(uintptr_t)rw_return_barrier_trampoline; }

/* Lock held, world stopped: restore every armed slot of every thread; drop stale entries. */
void return_barriers_disarm_locked(void) {
  for (int t = 0; t < thread_count; t++) {
    rw_thread_barriers *b = &rw_return_barriers[t];
    uint32_t valid = 0;
    for (uint32_t k = 0; k < b->armed; k++) {
      rw_return_barrier *e = &b->entries[k];
      uint64_t *slot = (uint64_t *)(uintptr_t)e->slot;
      int live = e->slot >= rw_threads[t].sp && e->slot < rw_threads[t].stack_top && *slot == trampoline_address();
      if (live) *slot = e->return_address; /* even inward of a stale entry: the stack must be pristine */
      if (live && valid == k) {
        valid++;
        continue;
      }
      __atomic_add_fetch(&stale, 1, __ATOMIC_RELAXED);
      b->flags |= RW_BARRIERS_LOST;
    }
    b->armed = 0;
    kept[t] = valid;
  }
}

/* Lock held, world stopped, at the end of the stop: arm the remembered entries of PARKED threads. */
void return_barriers_reinstall_locked(uint64_t self_new_state) {
  for (int t = 0; t < thread_count; t++) {
    rw_thread_barriers *b = &rw_return_barriers[t];
    int parked = rw_threads[t].state == ST_PARKED && !(&rw_threads[t] == self && self_new_state != ST_RUNNING);
    if (!parked) {
      kept[t] = 0;
      continue;
    }
    for (uint32_t k = 0; k < kept[t]; k++) {
      rw_return_barrier *e = &b->entries[k];
      uint64_t *slot = (uint64_t *)(uintptr_t)e->slot;
      if (*slot != e->return_address) fatal("return barrier: thread #%d's slot 0x%llx holds 0x%llx, not its return address 0x%llx",
                                            t, (unsigned long long)e->slot, (unsigned long long)*slot, (unsigned long long)e->return_address);
      *slot = trampoline_address();
    }
    b->armed = kept[t];
    kept[t] = 0;
  }
}

void return_barriers_drop_own(int restore_slots) {
  if (self == NULL) return;
  rw_thread_barriers *b = &rw_return_barriers[self - rw_threads];
  for (uint32_t k = 0; restore_slots && k < b->armed; k++) {
    uint64_t *slot = (uint64_t *)(uintptr_t)b->entries[k].slot;
    if (*slot == trampoline_address()) *slot = b->entries[k].return_address;
  }
  b->armed = 0;
}

/* The trampoline's C side, on the returning thread (RUNNING): pops the innermost entry. */
uint64_t rw_return_barrier_hit(uint64_t sp) {
  if (self == NULL) fatal("return barrier hit (SP 0x%llx) on a thread the runtime did not start", (unsigned long long)sp);
  int t = (int)(self - rw_threads);
  rw_thread_barriers *b = &rw_return_barriers[t];
  uint32_t k = b->armed;
#if defined(__x86_64__)
  /* `ret` popped the slot: it is the word just below SP. */
  uint64_t slot = sp - 8;
  while (k > 0 && b->entries[k - 1].slot != slot) k--;
#else
  /* The slot is where the returning frame saved x30, in that frame, now below SP: the entry hit is
   * the outermost one below SP (the ones inward of it were popped without a return). */
  uint64_t slot = sp;
  while (k > 1 && b->entries[k - 2].slot < sp) k--;
  if (k > 0 && b->entries[k - 1].slot >= sp) k = 0;
#endif
  if (k == 0)
    fatal("return barrier hit on thread #%d for slot 0x%llx, which no armed entry of the thread names (%u armed): the return address is lost",
          t, (unsigned long long)slot, b->armed);
  if (k != b->armed) {
    /* Entries inward of this one were popped without a return (longjmp): stale. */
    __atomic_add_fetch(&stale, b->armed - k, __ATOMIC_RELAXED);
    b->flags |= RW_BARRIERS_LOST;
  }
  b->armed = k - 1;
  __atomic_add_fetch(&hits, 1, __ATOMIC_RELAXED);
  return b->entries[k - 1].return_address;
}

/*
 * For JavaScript, with the world stopped (during a collection's callback):
 *   rw_return_barriers_kept(t): how many entries of thread t survived this stop's disarm;
 *   rw_return_barriers_set(t, keep, slots, frames_below, count): the entries thread t gets at the
 *     end of the stop: its first `keep` kept entries, then `count` new ones, outermost first
 *     (each new slot must hold a return address now; the trampoline is written at stw_end). Returns
 *     0, or -1 when the request is out of range (JavaScript reports it);
 *   rw_return_barriers_clear_lost(t): the full walk that the flag asked for happened.
 */
RW_EXPORT uint32_t rw_return_barriers_kept(int32_t t) { return kept[t]; }

RW_EXPORT int32_t rw_return_barriers_set(int32_t t, uint32_t keep, const uint64_t *slots, const uint64_t *frames_below, uint32_t count) {
  if (t < 0 || t >= thread_count || keep > kept[t] || keep + count > RW_RETURN_BARRIERS_PER_THREAD) return -1;
  rw_thread_barriers *b = &rw_return_barriers[t];
  for (uint32_t k = 0; k < count; k++) {
    rw_return_barrier *e = &b->entries[keep + k];
    if (k > 0 && slots[k] >= slots[k - 1]) return -1; /* outermost first: addresses decrease */
    if (keep > 0 && k == 0 && slots[0] >= b->entries[keep - 1].slot) return -1;
    e->slot = slots[k];
    e->return_address = *(const uint64_t *)(uintptr_t)slots[k];
    e->frames_below = frames_below[k];
  }
  kept[t] = keep + count;
  return 0;
}

/* Field `field` (0 slot, 1 return_address, 2 frames_below) of thread t's entry k (armed or kept). */
RW_EXPORT uint64_t rw_return_barriers_entry(int32_t t, uint32_t k, int32_t field) {
  const rw_return_barrier *e = &rw_return_barriers[t].entries[k % RW_RETURN_BARRIERS_PER_THREAD];
  return field == 0 ? e->slot : field == 1 ? e->return_address : e->frames_below;
}
RW_EXPORT uint32_t rw_return_barriers_flags(int32_t t) { return rw_return_barriers[t].flags; }
RW_EXPORT void rw_return_barriers_clear_lost(int32_t t) { rw_return_barriers[t].flags &= ~RW_BARRIERS_LOST; }
RW_EXPORT uint64_t rw_return_barrier_hits(void) { return __atomic_load_n(&hits, __ATOMIC_RELAXED); }
RW_EXPORT uint64_t rw_return_barrier_stale(void) { return __atomic_load_n(&stale, __ATOMIC_RELAXED); }
