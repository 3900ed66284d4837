/*
 * rootwalk native stop: the C side of the harness.
 *
 *   prog SNAPSHOT.json
 *
 * main() builds four fake GC objects (64-byte aligned static arrays of 8 words: A[k] = 0x100 + k,
 * B[k] = 0x200 + k, C[k] = 0x300 + k, D[k] = 0x400 + k), calls the managed entry
 * rw_chain_entry(A, B, C, D) through rw_enter (trampoline.S), checks the result against the
 * object's @rw_expected_result and that the safepoint was reached exactly once, and exits 0.
 *
 * The managed chain ends in gc_safepoint_poll (trampoline.S), which calls rw_safepoint_handler
 * with the managed caller's SP (after the return), return address and callee-saved registers at
 * the call. The handler copies the stack [sp - 256, stackTop) and writes, to SNAPSHOT.json:
 *
 *   {"sp":"0x…","ra":"0x…","registers":["0x…", …],"boundaryRa":"0x…","stackTop":"0x…",
 *    "memory":[{"base":"0x…","hex":"…"}],"objects":["0x…","0x…","0x…","0x…"]}
 *
 * (hex strings lowercase with 0x; memory hex is the bytes in address order). stackTop is just
 * above main's return address (main's frame address + 16), so the copy covers rw_enter's frame
 * and every managed frame. Link non-PIE so runtime addresses are link-time addresses.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORDS_PER_OBJECT 8
#define MEMORY_BELOW_SP 256
#define MAX_COPY (1u << 20)

typedef uint64_t (*managed_entry)(void *, void *, void *, void *);

/* trampoline.S */
extern uint64_t rw_enter(managed_entry fn, void *a, void *b, void *c, void *d);
extern char rw_enter_return[];
/* the managed object (chain-*.ll) */
extern uint64_t rw_chain_entry(void *, void *, void *, void *);
extern const uint64_t rw_expected_result;

static uint64_t object_a[WORDS_PER_OBJECT] __attribute__((aligned(64)));
static uint64_t object_b[WORDS_PER_OBJECT] __attribute__((aligned(64)));
static uint64_t object_c[WORDS_PER_OBJECT] __attribute__((aligned(64)));
static uint64_t object_d[WORDS_PER_OBJECT] __attribute__((aligned(64)));

static const char *snapshot_path;
static uintptr_t stack_top;
static int handler_calls;
static unsigned char stack_copy[MAX_COPY];

static void fail(const char *what) {
  fprintf(stderr, "native-stop harness: %s\n", what);
  exit(2);
}

/* Called by gc_safepoint_poll. saved = the callee-saved registers at the safepoint call. */
void rw_safepoint_handler(uintptr_t sp, uintptr_t ra, const uintptr_t *saved) {
  handler_calls++;
  if (handler_calls != 1) fail("gc_safepoint_poll reached more than once");
  uintptr_t base = sp - MEMORY_BELOW_SP;
  if (stack_top <= sp || stack_top - base > MAX_COPY) fail("stack top is not above sp, or too far");
  size_t length = (size_t)(stack_top - base);
  memcpy(stack_copy, (const void *)base, length);

  FILE *out = fopen(snapshot_path, "w");
  if (out == NULL) fail("cannot open the snapshot file");
  fprintf(out, "{\"sp\":\"0x%" PRIxPTR "\",\"ra\":\"0x%" PRIxPTR "\",", sp, ra);
  /* The trampoline's frame, in the architecture's callee-saved order; RW_CALLEE_SAVED comes from
     the build (test/walker/native/native-stop.ts trampolineBuild), which names them. */
  fprintf(out, "\"registers\":[");
  for (int k = 0; k < RW_CALLEE_SAVED; k++) fprintf(out, "%s\"0x%" PRIxPTR "\"", k == 0 ? "" : ",", saved[k]);
  fprintf(out, "],");
  fprintf(out, "\"boundaryRa\":\"0x%" PRIxPTR "\",\"stackTop\":\"0x%" PRIxPTR "\",",
          (uintptr_t)rw_enter_return, stack_top);
  fprintf(out, "\"memory\":[{\"base\":\"0x%" PRIxPTR "\",\"hex\":\"", base);
  for (size_t i = 0; i < length; i++) fprintf(out, "%02x", stack_copy[i]);
  fprintf(out, "\"}],\"objects\":[\"0x%" PRIxPTR "\",\"0x%" PRIxPTR "\",\"0x%" PRIxPTR "\",\"0x%" PRIxPTR "\"]}\n",
          (uintptr_t)object_a, (uintptr_t)object_b, (uintptr_t)object_c, (uintptr_t)object_d);
  if (ferror(out) || fclose(out) != 0) fail("cannot write the snapshot file");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s SNAPSHOT.json\n", argv[0]);
    return 2;
  }
  snapshot_path = argv[1];
  for (uint64_t k = 0; k < WORDS_PER_OBJECT; k++) {
    object_a[k] = 0x100 + k;
    object_b[k] = 0x200 + k;
    object_c[k] = 0x300 + k;
    object_d[k] = 0x400 + k;
  }
  /* Just above main's return address: covers rw_enter's frame and all managed frames. */
  stack_top = (uintptr_t)__builtin_frame_address(0) + 16;
  uint64_t result = rw_enter(rw_chain_entry, object_a, object_b, object_c, object_d);
  if (handler_calls != 1) fail("gc_safepoint_poll was not reached");
  if (result != rw_expected_result) {
    fprintf(stderr, "native-stop harness: result 0x%" PRIx64 ", expected 0x%" PRIx64 "\n", result,
            rw_expected_result);
    return 3;
  }
  return 0;
}
