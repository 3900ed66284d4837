/*
 * Allocation: gc_alloc's fast path bumps the thread's hole [cursor, limit) (zeroed by the
 * collector) for objects up to one line (RW_LINE_BYTES) and writes the header
 * (gc/object-model.ts) and the allocation bit (gc/allocation-bits.ts) itself; anything else calls
 * JavaScript (stop the world, mutator.alloc), which may collect. Every number it shares with the
 * TypeScript is a macro of runtime.h, checked by runtime-layout.test.ts.
 *
 * The heap: one reservation (rw_heap_reserve), whole blocks aligned to a block, and its
 * allocation bitmap, shared with the collector: the bit of an object's address is set when the
 * object is made. Holes are whole lines and a byte covers 64 bytes, so two threads never write
 * the same byte (no atomics needed).
 */
#include "runtime.h"

#include <errno.h>
#include <sys/mman.h>

uint64_t heap_start, heap_end; /* the reservation (rw_heap_reserve), for fault messages */
static uint8_t *allocation_bits;
static uint64_t alloc_counter;

void *rw_impl_gc_alloc(uint64_t pointer_slots, uint64_t raw_bytes, uint64_t *frame) {
  require_running("gc_alloc");
  require_initialized("gc_alloc");
  if (pointer_slots > RW_MAX_POINTER_SLOTS || raw_bytes > RW_MAX_RAW_BYTES) {
    fatal("gc_alloc(%lld, %lld): sizes out of range (pointer slots < 2^28, raw bytes < 2^29)", (long long)pointer_slots, (long long)raw_bytes);
  }
  capture(frame);
  park_if_requested();
  if (stress_hit(&alloc_counter)) collect_now();
  uint64_t size = RW_ALLOCATION_BYTES(pointer_slots, raw_bytes);
  void *result;
  uint64_t c = self->cursor;
  if (size <= RW_LINE_BYTES && c + size <= self->limit && c != 0) {
    uint64_t *header = (uint64_t *)(uintptr_t)c;
    *header = RW_HEADER_WORD(pointer_slots, raw_bytes);
    self->cursor = c + size;
    result = (void *)(uintptr_t)(c + 8);
    uint64_t offset = c + 8 - heap_start;
    allocation_bits[RW_ALLOCATION_BITS_BYTE(offset)] |= RW_ALLOCATION_BITS_MASK(offset);
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

/* The heap reservation: `bytes` rounded up to whole blocks, aligned to a block; its allocation
 * bitmap and the write barrier's unlogged bitmap (both zero) are mapped too, for
 * rw_allocation_bits and rw_unlogged_bits. */
RW_EXPORT void *rw_heap_reserve(uint64_t bytes) {
  const uint64_t block = RW_BLOCK_BYTES;
  bytes = (bytes + block - 1) & ~(block - 1);
  void *p = mmap(NULL, bytes + block, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return NULL;
  void *bits = mmap(NULL, RW_ALLOCATION_BITS_BYTES(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (bits == MAP_FAILED) {
    munmap(p, bytes + block);
    return NULL;
  }
  void *unlogged = mmap(NULL, RW_ALLOCATION_BITS_BYTES(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (unlogged == MAP_FAILED) {
    munmap(bits, RW_ALLOCATION_BITS_BYTES(bytes));
    munmap(p, bytes + block);
    return NULL;
  }
  allocation_bits = bits;
  unlogged_bits = unlogged; /* the write barrier's bitmap (runtime-barrier.c), same layout */
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
