/*
 * The write barrier: gc_write_barrier(obj), called by managed code after it stores a GC pointer
 * into a field of `obj` (an object-remembering barrier after MMTk's ObjectBarrier). It never
 * collects and never calls JavaScript: it is a plain exported C function, not an entry stub.
 *
 * The "unlogged" bitmap has the allocation bitmap's layout (one bit per 8-byte granule at an
 * object's address, runtime.h RW_ALLOCATION_BITS_*), mapped beside it by rw_heap_reserve and
 * shared with the collector (gc/remembered-set.ts):
 *   - set by the collector, with the world stopped, for every object that survives a collection
 *     under --generational (every survivor is old); never set without --generational, so the
 *     barrier then only tests a clear bit and returns;
 *   - cleared here by the first store into an old object after a collection, which also appends
 *     the object to the log (the remembered set); new objects' bits are clear, so stores into
 *     young objects take the fast path.
 * Fast path: a range check and a bit test (about 6 instructions; bench/README.md has its cost).
 * Slow path: an atomic and on the bitmap byte (two threads may share a byte), then an atomic
 * slot in the log. The log is bounded (RW_LOG_CAPACITY objects): past it the objects are not
 * kept but `log_count` still counts them, and the collector makes the next collection a full one
 * (which needs no remembered set). The collector empties the log after every collection.
 */
#include "runtime.h"

#define RW_LOG_CAPACITY (1u << 16)

uint8_t *unlogged_bits; /* rw_heap_reserve maps it */
static uint64_t log_objects[RW_LOG_CAPACITY];
static uint64_t log_count;

static __attribute__((noinline)) void log_object(uint64_t obj, uint8_t *byte, uint8_t mask) {
  uint8_t was = __atomic_fetch_and(byte, (uint8_t)~mask, __ATOMIC_RELAXED);
  if ((was & mask) == 0) return; /* another thread logged it first */
  uint64_t slot = __atomic_fetch_add(&log_count, 1, __ATOMIC_RELAXED);
  if (slot < RW_LOG_CAPACITY) log_objects[slot] = obj;
}

RW_EXPORT void gc_write_barrier(void *obj) {
  uint64_t offset = (uint64_t)(uintptr_t)obj - heap_start;
  if (offset >= heap_end - heap_start) return; /* null, a global, no heap yet */
  uint8_t *byte = &unlogged_bits[RW_ALLOCATION_BITS_BYTE(offset)];
  uint8_t mask = RW_ALLOCATION_BITS_MASK(offset);
  if ((*byte & mask) != 0) log_object((uint64_t)(uintptr_t)obj, byte, mask);
}

/* For the collector, with the world stopped: the bitmap, the log, how many objects were logged
 * (above rw_log_capacity: the log overflowed) and emptying it. */
RW_EXPORT void *rw_unlogged_bits(void) { return unlogged_bits; }
RW_EXPORT void *rw_log_objects(void) { return log_objects; }
RW_EXPORT uint64_t rw_log_capacity(void) { return RW_LOG_CAPACITY; }
RW_EXPORT uint64_t rw_log_count(void) { return __atomic_load_n(&log_count, __ATOMIC_RELAXED); }
RW_EXPORT void rw_log_clear(void) { __atomic_store_n(&log_count, 0, __ATOMIC_RELAXED); }
