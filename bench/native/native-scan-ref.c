/*
 * The C reference of the NativeScan bench case: the same stack scan as rootwalk's fast loop
 * (walker/fast-scan.ts), in C, on the same stopped native stack with the same table, timed in the
 * same collections. Loaded into the native runtime's process (src/native/scan-reference.ts) as a
 * shared library built like the runtime (gcc -O2 -fPIC -shared).
 *
 * The table is rootwalk's own: the safepoint table's arrays (keys, values; open addressing, linear
 * probing, home slot = the high bits of a multiplicative mix) and the snapshot's joined scan
 * recipes (src/safepoints/scan-recipes.ts: frame size, root slots and register saves per recipe),
 * copied here byte for byte whenever the registry changes.
 *
 * Per frame it does what the TypeScript loop does: stack-top, alignment and depth checks, the
 * boundary check, the table probe, the frame's recipe, one range check against the stack range
 * [sp - 256, stackTop) that rootwalk's view covers, every (base, derived) slot recorded with the
 * value in its base slot, and for a frame with pairs a (frame index, first pair) record, in growable
 * arrays kept across scans (rootwalk's RootPairs contract, walker/frame-roots.ts), the callee-saved
 * register slots moved when the frame saved registers, and the caller's return address read from
 * the stack.
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

/* The safepoint table (src/safepoints/safepoint-table.ts): keys[2i], keys[2i + 1] are the key's
 * u32 halves (lo, hi), i.e. one little-endian u64; values[2i], values[2i + 1] the module slot and
 * descriptor index. */
static uint32_t capacity, hash_shift;
static uint64_t *keys;
static uint32_t *values;
/* The joined scan recipes (RegistrySnapshot.scanRecipes, src/safepoints/scan-recipes.ts). */
static int32_t *first_safepoint;
static int32_t *recipe_of;
static int32_t *frame_bytes;
static uint32_t *slot_start;
static uint16_t *pair_count_of;
static int32_t *slots;
static uint32_t *save_start;
static uint8_t *save_count;
static int32_t *saves;

static uint64_t pairs_capacity, pair_count, frame_record_count;
static uint64_t *base_slots, *derived_slots, *base_values;
/* (frame index, first pair) per frame with pairs: never more than pairs, so pairs_capacity of them. */
static int32_t *frame_records;
static uint64_t last_ns;
static uint64_t last_reg_slots[CALLEE_SAVED_COUNT];

static void *copy_of(const void *from, size_t bytes) {
  void *to = malloc(bytes == 0 ? 1 : bytes);
  if (to != NULL && bytes != 0) memcpy(to, from, bytes);
  return to;
}

/* The safepoint table (`cap` slots). */
int rwref_set_table(uint32_t cap, uint32_t shift, const uint32_t *key_words, const uint32_t *value_words) {
  free(keys);
  free(values);
  capacity = cap;
  hash_shift = shift;
  keys = copy_of(key_words, (size_t)cap * 8);
  values = copy_of(value_words, (size_t)cap * 8);
  return keys != NULL && values != NULL ? 0 : -1;
}

/* The joined scan recipes: `modules` first-safepoint indexes, `safepoints` recipe indexes,
 * `recipes` recipes, their slot and save lists. */
int rwref_set_recipes(uint32_t modules, const int32_t *first, uint32_t safepoints, const int32_t *recipe, uint32_t recipes, const int32_t *frames,
                      const uint32_t *slot_starts, const uint16_t *pair_counts, uint32_t slot_words, const int32_t *slot_list, const uint32_t *save_starts,
                      const uint8_t *save_counts, uint32_t save_words, const int32_t *save_list) {
  free(first_safepoint);
  free(recipe_of);
  free(frame_bytes);
  free(slot_start);
  free(pair_count_of);
  free(slots);
  free(save_start);
  free(save_count);
  free(saves);
  first_safepoint = copy_of(first, (size_t)modules * 4);
  recipe_of = copy_of(recipe, (size_t)safepoints * 4);
  frame_bytes = copy_of(frames, (size_t)recipes * 4);
  slot_start = copy_of(slot_starts, (size_t)recipes * 4);
  pair_count_of = copy_of(pair_counts, (size_t)recipes * 2);
  slots = copy_of(slot_list, (size_t)slot_words * 4);
  save_start = copy_of(save_starts, (size_t)recipes * 4);
  save_count = copy_of(save_counts, recipes);
  saves = copy_of(save_list, (size_t)save_words * 4);
  return first_safepoint != NULL && recipe_of != NULL && frame_bytes != NULL && slot_start != NULL && pair_count_of != NULL && slots != NULL && save_start != NULL &&
                 save_count != NULL && saves != NULL
             ? 0
             : -1;
}

/* Grows `*array` to `count` elements of `element_bytes`; -1 (and `*array` unchanged) when it cannot. */
static int grow(void **array, size_t element_bytes, uint64_t count) {
  void *grown = realloc(*array, count * element_bytes);
  if (grown == NULL) return -1;
  *array = grown;
  return 0;
}

static int push_pair(uint64_t base, uint64_t derived, uint64_t base_value) {
  if (pair_count == pairs_capacity) {
    uint64_t grown = pairs_capacity == 0 ? 256 : pairs_capacity * 2;
    if (grow((void **)&base_slots, sizeof *base_slots, grown) != 0 || grow((void **)&derived_slots, sizeof *derived_slots, grown) != 0 ||
        grow((void **)&frame_records, 2 * sizeof *frame_records, grown) != 0 || grow((void **)&base_values, sizeof *base_values, grown) != 0)
      return -1;
    pairs_capacity = grown;
  }
  base_slots[pair_count] = base;
  derived_slots[pair_count] = derived;
  base_values[pair_count] = base_value;
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
  frame_record_count = 0;
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
      const uint64_t k = keys[slot];
      if (k == ra) break;
      if (k == 0) {
        slot = UINT32_MAX;
        break;
      }
      slot = (slot + 1) & mask;
    }
    if (slot == UINT32_MAX || ra == 0) {
      result = -1 - index;
      break;
    }
    const int32_t r = recipe_of[first_safepoint[values[2 * slot]] + (int32_t)values[2 * slot + 1]];
    if (r < 0) {
      result = -1 - index;
      break;
    }
    const uint64_t cfa = sp + (uint64_t)frame_bytes[r] + 8;
    if (sp < low || cfa > stack_top) {
      result = -1 - index;
      break;
    }
    const uint32_t end = slot_start[r] + 2u * pair_count_of[r];
    int failed = 0;
    const uint64_t first_pair = pair_count;
    for (uint32_t s = slot_start[r]; s < end; s += 2) {
      const uint64_t base = sp + (int64_t)slots[s];
      failed |= push_pair(base, sp + (int64_t)slots[s + 1], *(const uint64_t *)(uintptr_t)base);
    }
    if (failed) {
      result = -1 - (int64_t)INT32_MAX - 1;
      break;
    }
    if (pair_count != first_pair) {
      frame_records[2 * frame_record_count] = (int32_t)index;
      frame_records[2 * frame_record_count + 1] = (int32_t)first_pair;
      frame_record_count++;
    }
    for (uint32_t k = 0, s = save_start[r]; k < save_count[r]; k++, s += 2) reg_slots[saves[s]] = cfa + (int64_t)saves[s + 1];
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
uint64_t *rwref_base_values(void) { return base_values; }
uint64_t rwref_frame_record_count(void) { return frame_record_count; }
int32_t *rwref_frame_records(void) { return frame_records; }
