/*
 * The C reference of the NativeScan bench case: the same stack scan as rootwalk's fast loop
 * (walker/fast-scan.ts), in C, on the same stopped native stack with the same table, timed in the
 * same collections. Loaded into the native runtime's process (src/native/scan-reference.ts) as a
 * shared library built like the runtime (gcc -O2 -fPIC -shared).
 *
 * The table is rootwalk's own: the safepoint table's columns (keys as u32 halves, module slot,
 * descriptor index; open addressing, linear probing, home slot = the high bits of a multiplicative
 * mix) and each module's scan recipes (src/safepoints/scan-recipes.ts) with its descriptors'
 * callee-saved save offsets, copied here byte for byte whenever the registry changes.
 *
 * Per frame it does what the TypeScript loop does: stack-top, alignment and depth checks, the
 * boundary check, the table probe, the frame's recipe, one range check against the stack range
 * [sp - 256, stackTop) that rootwalk's view covers, every (base, derived) slot recorded with its
 * frame index in growable arrays kept across scans, the callee-saved register slots moved when the
 * frame saved registers, and the caller's return address read from the stack.
 *
 * A frame the fast loop would hand to rootwalk's general unwinder (no safepoint, no static size,
 * a root outside [rsp + off]) is not handled here: the scan reports where it stopped and the bench
 * fails rather than compare different work.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CALLEE_SAVED_COUNT 6
#define GOLDEN_32 0x9e3779b1u
#define HIGH_MIX_32 0x85ebca6bu
/* Thread record (runtime.c rw_thread), 64-bit words. */
#define R_SP 1
#define R_RA 2
#define R_STACK_TOP 9
#define R_BOUNDARY 10
#define BELOW_SP_BYTES 256

struct module_recipes {
  uint32_t descriptor_count;
  int32_t *frame_bytes;
  uint32_t *recipe;
  uint8_t *saves_registers;
  uint32_t *slot_start;
  uint16_t *pair_count;
  int32_t *slots;
  int16_t *saved_reg_offsets;
};

static uint32_t capacity, hash_shift;
static uint32_t *keys_lo, *keys_hi;
static int32_t *module_slots, *descriptor_indices;
static struct module_recipes *modules;
static uint32_t module_count;

static uint64_t pairs_capacity, pair_count;
static uint64_t *base_slots, *derived_slots;
static int32_t *pair_frames;
static uint64_t last_ns;
static uint64_t last_reg_slots[CALLEE_SAVED_COUNT];

static void *copy_of(const void *from, size_t bytes) {
  void *to = malloc(bytes == 0 ? 1 : bytes);
  if (to != NULL && bytes != 0) memcpy(to, from, bytes);
  return to;
}

static void free_modules(void) {
  for (uint32_t m = 0; m < module_count; m++) {
    struct module_recipes *r = &modules[m];
    free(r->frame_bytes);
    free(r->recipe);
    free(r->saves_registers);
    free(r->slot_start);
    free(r->pair_count);
    free(r->slots);
    free(r->saved_reg_offsets);
  }
  free(modules);
  modules = NULL;
  module_count = 0;
}

/* The safepoint table's columns (`cap` slots each) and the number of module slots. */
int rwref_set_table(uint32_t cap, uint32_t shift, const uint32_t *lo, const uint32_t *hi, const int32_t *mod, const int32_t *desc, uint32_t modules_in_table) {
  free(keys_lo);
  free(keys_hi);
  free(module_slots);
  free(descriptor_indices);
  free_modules();
  capacity = cap;
  hash_shift = shift;
  keys_lo = copy_of(lo, cap * sizeof *lo);
  keys_hi = copy_of(hi, cap * sizeof *hi);
  module_slots = copy_of(mod, cap * sizeof *mod);
  descriptor_indices = copy_of(desc, cap * sizeof *desc);
  modules = calloc(modules_in_table == 0 ? 1 : modules_in_table, sizeof *modules);
  module_count = modules_in_table;
  return keys_lo != NULL && keys_hi != NULL && module_slots != NULL && descriptor_indices != NULL && modules != NULL ? 0 : -1;
}

/* Module slot `slot`'s recipes (ScanRecipes columns) and its descriptors' savedRegOffsets. */
int rwref_set_module(uint32_t slot, uint32_t descriptors, const int32_t *frame_bytes, const uint32_t *recipe, const uint8_t *saves_registers, uint32_t recipes,
                     const uint32_t *slot_start, const uint16_t *pair_count_of, uint32_t slot_words, const int32_t *slots, const int16_t *saved_reg_offsets) {
  if (slot >= module_count) return -1;
  struct module_recipes *r = &modules[slot];
  r->descriptor_count = descriptors;
  r->frame_bytes = copy_of(frame_bytes, descriptors * sizeof *frame_bytes);
  r->recipe = copy_of(recipe, descriptors * sizeof *recipe);
  r->saves_registers = copy_of(saves_registers, descriptors);
  r->slot_start = copy_of(slot_start, recipes * sizeof *slot_start);
  r->pair_count = copy_of(pair_count_of, recipes * sizeof *pair_count_of);
  r->slots = copy_of(slots, slot_words * sizeof *slots);
  r->saved_reg_offsets = copy_of(saved_reg_offsets, (size_t)descriptors * CALLEE_SAVED_COUNT * sizeof *saved_reg_offsets);
  return r->frame_bytes != NULL && r->recipe != NULL && r->saves_registers != NULL && r->slot_start != NULL && r->pair_count != NULL && r->slots != NULL &&
                 r->saved_reg_offsets != NULL
             ? 0
             : -1;
}

static int push_pair(uint64_t base, uint64_t derived, int32_t frame) {
  if (pair_count == pairs_capacity) {
    uint64_t grown = pairs_capacity == 0 ? 256 : pairs_capacity * 2;
    uint64_t *b = realloc(base_slots, grown * sizeof *b);
    if (b == NULL) return -1;
    base_slots = b;
    uint64_t *d = realloc(derived_slots, grown * sizeof *d);
    if (d == NULL) return -1;
    derived_slots = d;
    int32_t *f = realloc(pair_frames, grown * sizeof *f);
    if (f == NULL) return -1;
    pair_frames = f;
    pairs_capacity = grown;
  }
  base_slots[pair_count] = base;
  derived_slots[pair_count] = derived;
  pair_frames[pair_count] = frame;
  pair_count++;
  return 0;
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/*
 * Scans the stopped thread whose record is at `record_address` from its innermost frame to its
 * boundary (or its stack top). Returns the frame count, or -1 - i when frame #i is one the fast
 * loop would not take (-1 - 2^31 when the pair arrays cannot grow). The time it took, record read
 * included, is rwref_last_ns().
 */
int64_t rwref_scan(uint64_t record_address, uint64_t max_depth) {
  uint64_t start = now_ns();
  const volatile uint64_t *record = (const volatile uint64_t *)(uintptr_t)record_address;
  uint64_t sp = record[R_SP];
  uint64_t ra = record[R_RA];
  const uint64_t stack_top = record[R_STACK_TOP];
  const uint64_t boundary = record[R_BOUNDARY];
  const uint64_t low = sp - BELOW_SP_BYTES;
  const uint32_t mask = capacity - 1;
  uint64_t reg_slots[CALLEE_SAVED_COUNT];
  for (int k = 0; k < CALLEE_SAVED_COUNT; k++) reg_slots[k] = ~(uint64_t)k; /* the innermost context's registers */
  pair_count = 0;
  int64_t index = 0;
  int64_t result;
  for (;;) {
    if (sp >= stack_top) {
      result = index;
      break;
    }
    if ((sp & 7) != 0 || (uint64_t)index + 1 >= max_depth) {
      result = -1 - index;
      break;
    }
    if (ra == boundary) {
      result = index;
      break;
    }
    const uint32_t lo = (uint32_t)ra;
    const uint32_t hi = (uint32_t)(ra >> 32);
    uint32_t slot = ((lo ^ (hi * HIGH_MIX_32)) * GOLDEN_32) >> hash_shift;
    for (;;) {
      const uint32_t kl = keys_lo[slot];
      const uint32_t kh = keys_hi[slot];
      if (kl == lo && kh == hi) break;
      if ((kl | kh) == 0) {
        slot = UINT32_MAX;
        break;
      }
      slot = (slot + 1) & mask;
    }
    if (slot == UINT32_MAX || ra == 0) {
      result = -1 - index;
      break;
    }
    const struct module_recipes *m = &modules[module_slots[slot]];
    const int32_t di = descriptor_indices[slot];
    const int32_t size = m->frame_bytes[di];
    if (size < 0) {
      result = -1 - index;
      break;
    }
    const uint64_t cfa = sp + (uint64_t)size + 8;
    if (sp < low || cfa > stack_top) {
      result = -1 - index;
      break;
    }
    const uint32_t r = m->recipe[di];
    const int32_t *slots = m->slots;
    const uint32_t end = m->slot_start[r] + 2u * m->pair_count[r];
    int failed = 0;
    for (uint32_t s = m->slot_start[r]; s < end; s += 2) failed |= push_pair(sp + (int64_t)slots[s], sp + (int64_t)slots[s + 1], (int32_t)index);
    if (failed) {
      result = -1 - (int64_t)INT32_MAX - 1;
      break;
    }
    if (m->saves_registers[di] != 0) {
      const int16_t *saved = &m->saved_reg_offsets[(size_t)di * CALLEE_SAVED_COUNT];
      for (int k = 0; k < CALLEE_SAVED_COUNT; k++)
        if (saved[k] != 0) reg_slots[k] = cfa + (int64_t)saved[k];
    }
    ra = *(const uint64_t *)(uintptr_t)(cfa - 8);
    sp = cfa;
    index++;
  }
  /* Where the registers live at the end, kept like the TypeScript loop leaves them in its unwinder. */
  memcpy(last_reg_slots, reg_slots, sizeof reg_slots);
  last_ns = now_ns() - start;
  return result;
}

uint64_t rwref_last_ns(void) { return last_ns; }
uint64_t rwref_pair_count(void) { return pair_count; }
uint64_t *rwref_base_slots(void) { return base_slots; }
uint64_t *rwref_derived_slots(void) { return derived_slots; }
int32_t *rwref_pair_frames(void) { return pair_frames; }
