/*
 * rootwalk native plimmix stop: the C side of the harness (the "runtime" of plimmix-a/b.ll).
 *
 *   prog SNAPSHOT.json
 *
 * main() builds nine fake GC objects O0..O8 (64-byte aligned rows of 8 words, O_k[i] = 0x100*k + i
 * + 0x100) and a TRAIT cell T = {trait_vtable, O8} (two words in .data: the word at +8 is the heap
 * slot a TRAIT root points through). Then, as a plimmix program does at start, it runs each
 * module's init function, which passes the module's `_GC_MAP_<source name>` label to gc_init:
 * plimmix_a_init(), plimmix_b_init(), and plimmix_a_init() again (a repeated registration must be
 * ignored). gc_init records each distinct pointer (up to MAX_MAPS) and counts the calls.
 *
 * It then enters the managed chain through rw_enter (../native/trampoline.S):
 *   rw_enter -> pa_entry(O0, O2, &T, NULL) -> pb_mid -> pa_deep -> pb_leaf -> gc_safepoint_poll
 * gc_safepoint_poll (trampoline.S) calls rw_safepoint_handler with the managed caller's SP after
 * the return, the return address and the callee-saved registers at the call. The handler writes
 * SNAPSHOT.json:
 *
 *   {"sp":"0x…","ra":"0x…","registers":["0x…", …],      callee-saved, in the trampoline's order
 *    "boundaryRa":"0x…","stackTop":"0x…",
 *    "memory":[{"base":"0x…","hex":"…"},          the stack [sp - 256, stackTop)
 *              {"base":"0x…","hex":"…"}],         .data: [__data_start & ~7, _edata rounded up)
 *    "maps":[{"address":"0x…","hex":"…"}, …],     per distinct gc_init pointer, in call order:
 *                                                 live bytes [address, _edata rounded up to 8)
 *    "gcInitCalls":3,
 *    "objects":["0x…" x 9],"objectSize":64,"traitCell":"0x…",
 *    "globalRoot":{"address":"0x…","value":"0x…"}}   (@pb_global_root of plimmix-b.ll)
 *
 * The map dumps are a bound, not the maps' lengths: the format has no length field, and the
 * reader (plimmixMapLength) finds the end by walking the counts, as a runtime would from the bare
 * pointer. After the chain returns, main checks the result (1122), that every root check of the
 * managed code passed (rw_check) and that the safepoint was reached once; exit 0 only then.
 * Link non-PIE (-no-pie) so that runtime addresses are link-time addresses.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NUM_OBJECTS 9
#define WORDS_PER_OBJECT 8
#define MEMORY_BELOW_SP 256
#define MAX_COPY (1u << 20)
#define MAX_MAPS 16
#define EXPECTED_RESULT 1122u /* pb_leaf 1, + 21 (pa_deep's six integers), + 100, + 1000 */

typedef uint64_t (*managed_entry)(void *, void *, void *, void *);

/* ../native/trampoline.S */
extern uint64_t rw_enter(managed_entry fn, void *a, void *b, void *c, void *d);
extern char rw_enter_return[];
/* plimmix-a.ll, plimmix-b.ll */
extern uint64_t pa_entry(void *, void *, void *, void *);
extern void plimmix_a_init(void);
extern void plimmix_b_init(void);
extern void *pb_global_root;
/* The linker's and glibc's bounds of the initialized data (the _GC_MAP_ labels are in .data). */
extern char __data_start[];
extern char _edata[];

static uint64_t objects[NUM_OBJECTS][WORDS_PER_OBJECT] __attribute__((aligned(64)));
static void trait_vtable(void) {}
/* The TRAIT cell: {vtable, heap slot}. Initialized, so it is in .data (inside the data dump). */
static void *trait_cell[2] __attribute__((aligned(16))) = {(void *)trait_vtable, objects[8]};

static const char *snapshot_path;
static uintptr_t stack_top;
static int handler_calls;
static int check_failures;
static int gc_init_calls;
static int num_maps;
static const void *maps[MAX_MAPS];
static unsigned char stack_copy[MAX_COPY];

static void fail(const char *what) {
  fprintf(stderr, "native-plimmix harness: %s\n", what);
  exit(2);
}

/* The runtime's registration entry point: a module passes its _GC_MAP_ label. */
void gc_init(void *map) {
  gc_init_calls++;
  if (map == NULL) fail("gc_init(NULL)");
  for (int i = 0; i < num_maps; i++) {
    if (maps[i] == map) return; /* already registered */
  }
  if (num_maps == MAX_MAPS) fail("too many maps");
  maps[num_maps++] = map;
}

/* Object k (what the managed code asks for). */
void *rw_object(uint64_t k) {
  if (k >= NUM_OBJECTS) fail("rw_object: no such object");
  return objects[k];
}

/* A root check of the managed code after its call returned: id = frame * 16 + root. */
void rw_check(uint64_t id, void *found, void *expected) {
  if (found != expected) {
    check_failures++;
    fprintf(stderr, "native-plimmix harness: root check %" PRIu64 " (frame %" PRIu64 ", root %" PRIu64 "): found %p, expected %p\n", id,
            id / 16, id % 16, found, expected);
  }
}

static void write_hex(FILE *out, const unsigned char *bytes, size_t length) {
  for (size_t i = 0; i < length; i++) fprintf(out, "%02x", bytes[i]);
}

static uintptr_t data_end(void) {
  return ((uintptr_t)_edata + 7) & ~(uintptr_t)7;
}

/* Called by gc_safepoint_poll. saved = the callee-saved registers at the safepoint call. */
void rw_safepoint_handler(uintptr_t sp, uintptr_t ra, const uintptr_t *saved) {
  handler_calls++;
  if (handler_calls != 1) fail("gc_safepoint_poll reached more than once");
  uintptr_t base = sp - MEMORY_BELOW_SP;
  if (stack_top <= sp || stack_top - base > MAX_COPY) fail("stack top is not above sp, or too far");
  size_t length = (size_t)(stack_top - base);
  /* Copy first: the stdio calls below reuse the stack below sp. */
  memcpy(stack_copy, (const void *)base, length);

  uintptr_t data_base = (uintptr_t)__data_start & ~(uintptr_t)7;
  uintptr_t data_limit = data_end();

  FILE *out = fopen(snapshot_path, "w");
  if (out == NULL) fail("cannot open the snapshot file");
  fprintf(out, "{\"sp\":\"0x%" PRIxPTR "\",\"ra\":\"0x%" PRIxPTR "\",", sp, ra);
  /* The trampoline's frame, in the architecture's callee-saved order; RW_CALLEE_SAVED comes from
     the build (test/walker/native/native-stop.ts trampolineBuild), which names them. */
  fprintf(out, "\"registers\":[");
  for (int k = 0; k < RW_CALLEE_SAVED; k++) fprintf(out, "%s\"0x%" PRIxPTR "\"", k == 0 ? "" : ",", saved[k]);
  fprintf(out, "],");
  fprintf(out, "\"boundaryRa\":\"0x%" PRIxPTR "\",\"stackTop\":\"0x%" PRIxPTR "\",", (uintptr_t)rw_enter_return, stack_top);
  fprintf(out, "\"memory\":[{\"base\":\"0x%" PRIxPTR "\",\"hex\":\"", base);
  write_hex(out, stack_copy, length);
  fprintf(out, "\"},{\"base\":\"0x%" PRIxPTR "\",\"hex\":\"", data_base);
  write_hex(out, (const unsigned char *)data_base, (size_t)(data_limit - data_base));
  fprintf(out, "\"}],\"maps\":[");
  for (int i = 0; i < num_maps; i++) {
    uintptr_t address = (uintptr_t)maps[i];
    if (address < data_base || address >= data_limit) fail("a gc_init pointer is outside .data");
    fprintf(out, "%s{\"address\":\"0x%" PRIxPTR "\",\"hex\":\"", i == 0 ? "" : ",", address);
    write_hex(out, (const unsigned char *)address, (size_t)(data_limit - address));
    fprintf(out, "\"}");
  }
  fprintf(out, "],\"gcInitCalls\":%d,\"objects\":[", gc_init_calls);
  for (int k = 0; k < NUM_OBJECTS; k++) fprintf(out, "%s\"0x%" PRIxPTR "\"", k == 0 ? "" : ",", (uintptr_t)objects[k]);
  fprintf(out, "],\"objectSize\":%d,\"traitCell\":\"0x%" PRIxPTR "\",", (int)sizeof objects[0], (uintptr_t)trait_cell);
  fprintf(out, "\"globalRoot\":{\"address\":\"0x%" PRIxPTR "\",\"value\":\"0x%" PRIxPTR "\"}}\n", (uintptr_t)&pb_global_root,
          (uintptr_t)pb_global_root);
  if (ferror(out) || fclose(out) != 0) fail("cannot write the snapshot file");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s SNAPSHOT.json\n", argv[0]);
    return 2;
  }
  snapshot_path = argv[1];
  for (uint64_t k = 0; k < NUM_OBJECTS; k++) {
    for (uint64_t i = 0; i < WORDS_PER_OBJECT; i++) objects[k][i] = 0x100 * (k + 1) + i;
  }
  /* At start: every module registers its map (module A twice: the repeat must be ignored). */
  plimmix_a_init();
  plimmix_b_init();
  plimmix_a_init();
  if (num_maps != 2 || gc_init_calls != 3) fail("expected 3 gc_init calls with 2 distinct maps");

  /* Just above main's return address: covers rw_enter's frame and all managed frames. */
  stack_top = (uintptr_t)__builtin_frame_address(0) + 16;
  uint64_t result = rw_enter(pa_entry, objects[0], objects[2], trait_cell, NULL);
  if (handler_calls != 1) fail("gc_safepoint_poll was not reached");
  if (check_failures != 0) {
    fprintf(stderr, "native-plimmix harness: %d root checks failed\n", check_failures);
    return 3;
  }
  if (result != EXPECTED_RESULT) {
    fprintf(stderr, "native-plimmix harness: result %" PRIu64 ", expected %u\n", result, EXPECTED_RESULT);
    return 4;
  }
  return 0;
}
