/*
 * Reference for the Walk and Lookup cases: the same algorithm as rootwalk's SafepointTable and
 * fast scan loop over the same bytes, in C. The table is the one of
 * src/safepoints/safepoint-table.ts (power-of-two capacity >= 2x entries, linear probing, slot =
 * high bits of a multiplicative mix of both 32-bit halves, 0 = empty). The walk, per frame: look
 * the return address up -> frame size; check SP (in the stack, 8-aligned, below the top); for a
 * frame with pairs record (frame index, first pair); for each (base, derived) pair record the base
 * slot, the derived slot and the value in the base slot; read the caller's return address at
 * sp + frameSize; step. After the walk the
 * recorded values are summed, as the collector visits them.
 *
 * The output is rootwalk's RootPairs contract (walker/frame-roots.ts, bench/README.md "The walk's
 * output contract"): per pair base slot, derived slot, base value; per frame with pairs (frame
 * index, first pair); and the frame count. `walk` writes the last walk's output to <output> so that the bench compares it with
 * rootwalk's value by value (bench/walk-output.ts).
 *
 * Input file (little-endian, written by bench/stack-corpus.ts):
 *   u64 magic 'RWBENCH1', u64 siteCount, u64 memBase, u64 memSize, u64 sp0, u64 ra0, u64 stackTop,
 *   u64 queryCount
 *   siteCount x { u64 ra; i32 frameSizeBytes; i32 pairCount (<= 4); i32 baseOffsets[4];
 *                 i32 derivedOffsets[4] }                                                  48 B
 *   queryCount x u64 return addresses (lookup queries)
 *   memSize bytes of stack memory mapped at memBase
 *
 * Output file (walk): u64 frames, u64 pairs, u64 frame records, then pairs x u64 base slots,
 * pairs x u64 derived slots, pairs x u64 base values, records x (i32 frame index, i32 first pair).
 *
 * usage: walk-ref walk <file> <iterations> <repeats> <output> | walk-ref lookup <file> <iterations> <repeats>
 * prints one JSON line with per-repeat ns per frame (walk) or per lookup. A lookup writes one i32
 * answer per query (the site index, or -1), as rootwalk's kernel lookup writes one per address;
 * the line counts the queries found. The Lookup cases (rootwalk's kernel probe, a batch) and the
 * PublicLookup cases (RegistrySnapshot.find, one call per address) both compare with this mode;
 * its `checksum` is then the sum of the answers (as u64, -1 wrapping), which for hits the
 * PublicLookup cases compare with the sum of rootwalk's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "read-input.h"

typedef struct { uint64_t ra; int32_t frameSizeBytes; int32_t pairCount; int32_t baseOffsets[4]; int32_t derivedOffsets[4]; } Site;

static uint64_t *keys;
static int32_t *values;
static int logCapacity;
static uint32_t mask;

static inline uint32_t slot_of(uint64_t a) {
  uint32_t lo = (uint32_t)a, hi = (uint32_t)(a >> 32);
  uint32_t mixed = (lo ^ (hi * 0x85ebca6bu)) * 0x9e3779b1u;
  return mixed >> (32 - logCapacity);
}

static inline int32_t find(uint64_t a) {
  uint32_t i = slot_of(a);
  for (;;) {
    uint64_t k = keys[i];
    if (k == a) return values[i];
    if (k == 0) return -1;
    i = (i + 1) & mask;
  }
}

static void build_table(const Site *sites, uint64_t n) {
  logCapacity = 4;
  while ((1ull << logCapacity) < n * 2) logCapacity++;
  mask = (1u << logCapacity) - 1;
  keys = calloc((size_t)1 << logCapacity, 8);
  values = calloc((size_t)1 << logCapacity, 4);
  for (uint64_t s = 0; s < n; s++) {
    uint32_t i = slot_of(sites[s].ra);
    while (keys[i] != 0) i = (i + 1) & mask;
    keys[i] = sites[s].ra;
    values[i] = (int32_t)s;
  }
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static const Site *sites;
static const uint8_t *mem;
static uint64_t memBase, memSize, sp0, ra0, stackTop;
/* The walk's output (RootPairs' columns), reused from walk to walk and grown when full. */
static uint64_t *baseSlots, *derivedSlots, *baseValues;
/* Frame records (frame index, first pair): one per frame with pairs, so at most pairCapacity. */
static int32_t *frameRecords;
static uint64_t pairCount, pairCapacity, frameRecordCount;

static void reserve_pairs(uint64_t needed) {
  if (needed <= pairCapacity) return;
  while (pairCapacity < needed) pairCapacity *= 2;
  baseSlots = realloc(baseSlots, pairCapacity * 8);
  derivedSlots = realloc(derivedSlots, pairCapacity * 8);
  baseValues = realloc(baseValues, pairCapacity * 8);
  frameRecords = realloc(frameRecords, pairCapacity * 8);
  if (!baseSlots || !derivedSlots || !baseValues || !frameRecords) { fprintf(stderr, "out of memory\n"); exit(1); }
}

/* One walk into the output columns; returns the number of frames. */
static uint64_t walk(void) {
  uint64_t sp = sp0, ra = ra0, frames = 0, n = 0, records = 0;
  const uint64_t end = memBase + memSize;
  while (sp < stackTop) {
    int32_t d = find(ra);
    if (d < 0) break;                                   /* unknown return address */
    if ((sp & 7) != 0 || sp < memBase) break;           /* misaligned / out of range */
    const Site *s = &sites[d];
    if (sp + (uint64_t)s->frameSizeBytes + 8 > end) break; /* return-address slot unreadable */
    if (n + (uint64_t)s->pairCount > pairCapacity) reserve_pairs(n + (uint64_t)s->pairCount);
    const uint8_t *p = mem + (sp - memBase);
    if (s->pairCount != 0) {
      frameRecords[2 * records] = (int32_t)frames;
      frameRecords[2 * records + 1] = (int32_t)n;
      records++;
    }
    for (int32_t k = 0; k < s->pairCount; k++) {
      uint64_t v;
      memcpy(&v, p + s->baseOffsets[k], 8);
      baseSlots[n] = sp + (int64_t)s->baseOffsets[k];
      derivedSlots[n] = sp + (int64_t)s->derivedOffsets[k];
      baseValues[n] = v;
      n++;
    }
    memcpy(&ra, p + s->frameSizeBytes, 8);
    sp += (uint64_t)s->frameSizeBytes + 8;
    frames++;
  }
  pairCount = n;
  frameRecordCount = records;
  return frames;
}

/* The collector's visit of the roots: every recorded base value (what the TypeScript side sums). */
static uint64_t visit_roots(void) {
  uint64_t acc = 0;
  for (uint64_t i = 0; i < pairCount; i++) acc += baseValues[i];
  return acc + pairCount;
}

static void write_output(const char *path, uint64_t frames) {
  FILE *f = fopen(path, "wb");
  if (!f) { perror(path); exit(1); }
  uint64_t header[3] = { frames, pairCount, frameRecordCount };
  int ok = fwrite(header, 8, 3, f) == 3 && fwrite(baseSlots, 8, pairCount, f) == pairCount && fwrite(derivedSlots, 8, pairCount, f) == pairCount &&
           fwrite(baseValues, 8, pairCount, f) == pairCount && fwrite(frameRecords, 8, frameRecordCount, f) == frameRecordCount;
  if (fclose(f) != 0 || !ok) { perror(path); exit(1); }
}

int main(int argc, char **argv) {
  const int isWalk = argc == 6 && strcmp(argv[1], "walk") == 0;
  if (!isWalk && !(argc == 5 && strcmp(argv[1], "lookup") == 0)) {
    fprintf(stderr, "usage: %s walk <file> <iterations> <repeats> <output> | lookup <file> <iterations> <repeats>\n", argv[0]);
    return 2;
  }
  long size;
  uint8_t *file = read_input(argv[2], &size);
  uint64_t h[8];
  memcpy(h, file, sizeof h);
  if (h[0] != 0x31484e4542575252ull) { fprintf(stderr, "bad magic\n"); return 1; }
  uint64_t siteCount = h[1], queryCount = h[7];
  memBase = h[2]; memSize = h[3]; sp0 = h[4]; ra0 = h[5]; stackTop = h[6];
  sites = (const Site *)(file + 64);
  const uint64_t *queries = (const uint64_t *)(file + 64 + siteCount * sizeof(Site));
  mem = (const uint8_t *)(queries + queryCount);
  build_table(sites, siteCount);
  pairCapacity = 1;
  reserve_pairs(1024);

  const int iterations = atoi(argv[3]), repeats = atoi(argv[4]);
  uint64_t sum = 0;
  if (isWalk) {
    uint64_t frames = walk(); /* warm-up */
    sum += visit_roots();
    printf("{\"case\":\"walk\",\"frames\":%llu,\"samplesNsPerOp\":[", (unsigned long long)frames);
    for (int r = 0; r < repeats; r++) {
      double t0 = now_ns();
      for (int i = 0; i < iterations; i++) {
        walk();
        sum += visit_roots();
      }
      double t1 = now_ns();
      printf("%s%.4f", r ? "," : "", (t1 - t0) / ((double)iterations * frames));
    }
    write_output(argv[5], frames);
  } else {
    /* One i32 answer per query, as rootwalk's findRecipes writes: the site index, or -1. */
    int32_t *answers = malloc(queryCount * 4);
    if (!answers) { fprintf(stderr, "out of memory\n"); return 1; }
    for (uint64_t q = 0; q < queryCount; q++) answers[q] = find(queries[q]); /* warm-up */
    printf("{\"case\":\"lookup\",\"queries\":%llu,\"samplesNsPerOp\":[", (unsigned long long)queryCount);
    for (int r = 0; r < repeats; r++) {
      double t0 = now_ns();
      for (int i = 0; i < iterations; i++)
        for (uint64_t q = 0; q < queryCount; q++) answers[q] = find(queries[q]);
      double t1 = now_ns();
      printf("%s%.4f", r ? "," : "", (t1 - t0) / ((double)iterations * queryCount));
    }
    uint64_t found = 0;
    for (uint64_t q = 0; q < queryCount; q++) {
      found += answers[q] >= 0;
      sum += (uint64_t)(int64_t)answers[q];
    }
    printf("],\"found\":%llu", (unsigned long long)found);
  }
  printf("%s\"checksum\":%llu}\n", isWalk ? "]," : ",", (unsigned long long)sum);
  return 0;
}
