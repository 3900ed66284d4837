/* The bench's input files: read whole into 64-byte-aligned memory (the C references' inputs are
 * written by bench/*.ts; each starts with its own magic number). Exits with a message on error. */
#ifndef ROOTWALK_BENCH_READ_INPUT_H
#define ROOTWALK_BENCH_READ_INPUT_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint8_t *read_input(const char *path, long *sizeOut) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); exit(1); }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *file = aligned_alloc(64, ((size_t)size + 63) & ~(size_t)63);
  if (fread(file, 1, size, f) != (size_t)size) { perror("read"); exit(1); }
  fclose(f);
  *sizeOut = size;
  return file;
}
#endif
