/* test/walker/core (return-barrier-core.test.ts): a stand-in for the native runtime's return
 * barriers, written by hand so the core reader's overlay is tested on its own: c_descend recurses
 * DEPTH native frames (frame pointers kept, so each frame finds its own return-address slot at
 * fp + 8), then at the bottom stops four times at rw_barrier_stop, where gdb writes a core each time:
 *   0: the pristine stack;
 *   1: three return addresses replaced by rw_return_barrier_trampoline's address and the table
 *      rw_return_barriers[0] (runtime.h's layout) holding them, armed = 3;
 *   2: the same stack, armed = 65 (a corrupt table);
 *   3: armed = 2: the innermost replaced slot has no entry.
 * Then _exit: no patched frame is ever returned into. */
#include <stdint.h>
#include <unistd.h>

#define DEPTH 40
#define PER_THREAD 64
#define MAX_THREADS 1024

typedef struct {
  uint64_t slot;
  uint64_t return_address;
  uint64_t frames_below;
} rw_return_barrier;
typedef struct {
  uint32_t armed;
  uint32_t flags;
  uint64_t reserved;
  rw_return_barrier entries[PER_THREAD];
} rw_thread_barriers;
_Static_assert(sizeof(rw_thread_barriers) == 1552, "runtime.h's layout");

rw_thread_barriers rw_return_barriers[MAX_THREADS];
void rw_return_barrier_trampoline(void) { __builtin_trap(); }

static uint64_t *slots[DEPTH + 1]; /* slots[n]: where c_descend(n)'s return address is */
static const int patched[3] = {30, 20, 10}; /* outermost first, as the runtime's entries are */

__attribute__((noinline)) void rw_barrier_stop(int stage) { __asm__ volatile("" ::"r"(stage) : "memory"); }

static void arm(void) {
  for (int i = 0; i < 3; i++) {
    uint64_t *slot = slots[patched[i]];
    rw_return_barrier *e = &rw_return_barriers[0].entries[i];
    e->slot = (uint64_t)slot;
    e->return_address = *slot;
    e->frames_below = (uint64_t)(DEPTH - patched[i] + 1);
    *slot = (uint64_t)&rw_return_barrier_trampoline;
  }
  rw_return_barriers[0].armed = 3;
}

__attribute__((noinline)) void c_descend(int n) {
  slots[n] = (uint64_t *)__builtin_frame_address(0) + 1;
  if (n > 0) {
    c_descend(n - 1);
  } else {
    rw_barrier_stop(0);
    arm();
    rw_barrier_stop(1);
    rw_return_barriers[0].armed = 65;
    rw_barrier_stop(2);
    rw_return_barriers[0].armed = 2;
    rw_barrier_stop(3);
    _exit(0);
  }
  __asm__ volatile("" ::: "memory");
}

int main(void) {
  c_descend(DEPTH);
  return 0;
}
