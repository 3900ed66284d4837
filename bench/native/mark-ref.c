/*
 * Reference for "Collector/mark": a C mark loop over the same heap bytes the TypeScript
 * ImmixCollector built. Object layout (gc/object-model.ts): the header word is at address - 8,
 * pointer slot count in bits 32-63, raw byte count in bits 3-31; pointer slots start at the
 * address, 8 bytes each, 0 = null. Marks live in side tables as in the collector: one mark bit
 * per 8-byte granule, and Immix line marks (128-byte lines) covering each marked object.
 *
 * Input file (little-endian, written by bench/heap-corpus.ts):
 *   u64 magic 'RWHEAP01', u64 heapBase, u64 heapBytes, u64 rootCount, rootCount x u64 root
 *   addresses, heapBytes bytes of heap
 *
 * usage: mark-ref <file> <iterations> <repeats>
 * prints one JSON line: per-repeat ns per marked object and per collection (mark pause).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "read-input.h"

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static const uint8_t *heap;
static uint64_t heapBase, heapBytes;
static uint32_t *markBits;
static uint8_t *lineMarks;
static uint64_t *stack;
static size_t stackCap;

static inline uint64_t word_at(uint64_t address) {
  uint64_t v;
  memcpy(&v, heap + (address - heapBase), 8);
  return v;
}

static size_t top;
static uint64_t markedObjects, markedBytes;

/* Marks the object at ref (not null) if it is not yet: mark bit, line marks, mark stack. */
static inline void trace(uint64_t ref) {
  uint64_t off = ref - heapBase;
  if (off >= heapBytes || (off & 7) != 0) { fprintf(stderr, "bad pointer %llx\n", (unsigned long long)ref); exit(1); }
  uint64_t g = off >> 3;
  uint32_t bit = 1u << (g & 31);
  if (markBits[g >> 5] & bit) return;
  markBits[g >> 5] |= bit;
  uint64_t header = word_at(ref - 8);
  uint64_t n = header >> 32, raw = (header & 0xffffffffu) >> 3;
  uint64_t body = n * 8 + ((raw + 7) & ~7ull);
  uint64_t size = 8 + (body < 8 ? 8 : body);
  uint64_t start = off - 8;
  for (uint64_t l = start >> 7; l <= (start + size - 1) >> 7; l++) lineMarks[l] = 1;
  markedObjects++;
  markedBytes += size;
  if (top == stackCap) { stackCap *= 2; stack = realloc(stack, stackCap * 8); }
  stack[top++] = ref;
}

static uint64_t mark(const uint64_t *roots, uint64_t rootCount, uint64_t *bytesOut) {
  memset(markBits, 0, (heapBytes / 256 + 1) * 4);
  memset(lineMarks, 0, heapBytes / 128 + 1);
  top = 0;
  markedObjects = markedBytes = 0;
  for (uint64_t r = 0; r < rootCount; r++) if (roots[r] != 0) trace(roots[r]);
  while (top > 0) {
    uint64_t obj = stack[--top];
    uint64_t n = word_at(obj - 8) >> 32;
    for (uint64_t i = 0; i < n; i++) {
      uint64_t v = word_at(obj + i * 8);
      if (v != 0) trace(v);
    }
  }
  *bytesOut = markedBytes;
  return markedObjects;
}

int main(int argc, char **argv) {
  if (argc != 4) { fprintf(stderr, "usage: %s <heap.bin> <iterations> <repeats>\n", argv[0]); return 2; }
  long size;
  uint8_t *file = read_input(argv[1], &size);
  uint64_t h[4];
  memcpy(h, file, sizeof h);
  if (h[0] != 0x3130415045485752ull) { fprintf(stderr, "bad magic\n"); return 1; }
  heapBase = h[1]; heapBytes = h[2];
  uint64_t rootCount = h[3];
  const uint64_t *roots = (const uint64_t *)(file + 32);
  heap = (const uint8_t *)(roots + rootCount);
  markBits = malloc((heapBytes / 256 + 1) * 4);
  lineMarks = malloc(heapBytes / 128 + 1);
  stackCap = 4096;
  stack = malloc(stackCap * 8);
  const int iterations = atoi(argv[2]), repeats = atoi(argv[3]);
  uint64_t bytes = 0, sum = 0;
  uint64_t objects = mark(roots, rootCount, &bytes); /* warm-up */
  printf("{\"case\":\"mark\",\"objects\":%llu,\"bytes\":%llu,\"samplesNsPerOp\":[", (unsigned long long)objects, (unsigned long long)bytes);
  for (int r = 0; r < repeats; r++) {
    double t0 = now_ns();
    for (int i = 0; i < iterations; i++) sum += mark(roots, rootCount, &bytes);
    double t1 = now_ns();
    printf("%s%.4f", r ? "," : "", (t1 - t0) / ((double)iterations * objects));
  }
  printf("],\"checksum\":%llu}\n", (unsigned long long)sum);
  return 0;
}
